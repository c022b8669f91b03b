//! Which thread of this process holds which device: the extension's teardown order (free every
//! import before a group is deactivated or metrics are disabled) is kept by one thread per
//! device, so no other thread may enable, disable, activate or open anything on a device while a
//! run holds it.
//!
//! A claim names a root device (its handle: a sub-device is held through its root, since
//! enabling and disabling metrics act on the root's whole family) and the thread that made it.
//! The thread that holds a device may claim it again (a run on a root device and its tile, a
//! run started while the last one's leftovers still wait); another thread waits up to the wait
//! it asked for, then gets an error naming the device. Claims are made before the first call on
//! the device and released when the last object on it is gone: the run's context, and any
//! leftover (an import not freed, a disable refused) that keeps the device's teardown open.
//!
//! The sampler thread claims with a wait (`SAMPLER_WAIT`: another thread's probe takes a
//! moment); a [`crate::DirectRun`] does not wait. [`held`] tells a thread that checks devices
//! (Help → Diagnostics) which ones to leave alone.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use zescope_ze::Device;

use super::errors;
use super::protocol::SamplerError;

/// How long the sampler thread waits for another thread's hold on a device (a diagnostics probe)
/// before its start fails.
pub(crate) const SAMPLER_WAIT: Duration = Duration::from_secs(10);

/// Root device handle → the thread holding it and how many claims it made.
struct Table {
    held: BTreeMap<usize, (ThreadId, usize)>,
}

static TABLE: Mutex<Table> = Mutex::new(Table { held: BTreeMap::new() });
static RELEASED: Condvar = Condvar::new();

fn lock() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn key(root: &Device) -> usize {
    root.handle as usize
}

/// One claim on a root device by the thread that made it; released on drop.
#[derive(Debug)]
pub(crate) struct Claim {
    key: usize,
}

impl Claim {
    /// One more claim on the same device by the thread that holds it.
    pub(crate) fn again(&self) -> Claim {
        if let Some((_, n)) = lock().held.get_mut(&self.key) {
            *n += 1;
        }
        Claim { key: self.key }
    }

    /// Claims `root` (named `name` in the error) for the calling thread, waiting up to `wait`
    /// while another thread holds it.
    pub(crate) fn take(root: &Device, name: &str, wait: Duration) -> Result<Claim, SamplerError> {
        let me = std::thread::current().id();
        let k = key(root);
        let deadline = Instant::now() + wait;
        let mut t = lock();
        loop {
            match t.held.get_mut(&k) {
                None => {
                    t.held.insert(k, (me, 1));
                    return Ok(Claim { key: k });
                }
                Some((owner, n)) if *owner == me => {
                    *n += 1;
                    return Ok(Claim { key: k });
                }
                Some(_) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(errors::config(
                            format!(
                                "{name} is in use by another reader in this process (a run or a diagnostics check)"
                            ),
                            Some("try again in a moment; stop the other run first"),
                        ));
                    }
                    t = RELEASED.wait_timeout(t, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
                }
            }
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut t = lock();
        if let Some((_, n)) = t.held.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                t.held.remove(&self.key);
                RELEASED.notify_all();
            }
        }
    }
}

/// Whether a thread other than the caller holds root device `root` (a run, or what a run left
/// to tear down). A thread that only checks devices leaves such a device alone.
pub fn held(root: &Device) -> bool {
    let me = std::thread::current().id();
    lock().held.get(&key(root)).is_some_and(|(owner, _)| *owner != me)
}

/// The root device of `path`'s device in `loader`.
pub(crate) fn root_of(loader: &zescope_ze::Loader, path: super::protocol::DevicePath) -> Result<Device, SamplerError> {
    let root = super::protocol::DevicePath { sub_device: None, ..path };
    super::setup::find_device(loader, root).map(|(d, _)| d)
}
