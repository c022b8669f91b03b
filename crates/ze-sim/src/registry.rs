//! Every handle the driver hands out, and the instance it belongs to.
//!
//! Handles are addresses of small leaked allocations (so layers that treat them as pointers are
//! safe), looked up in one process-wide table: a call with a handle the driver never issued, or
//! one of a destroyed object, gets ZE_RESULT_ERROR_INVALID_NULL_HANDLE instead of undefined
//! behaviour. Several independent driver instances can live in one process (tests create one
//! each); the process-wide instance behind `zeInit`/`zeDriverGet` is one of them.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use level_zero_sys::*;

use crate::instance::Instance;

/// What a handle names inside its instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Obj {
    Driver,
    Device(usize),
    Group(usize),
    Metric(usize, usize),
    Context,
    CommandList,
    EventPool,
    Event,
    Streamer,
    Tracer,
    Decoder,
    /// A decodable metric of a tracer-based group: (group, metric index).
    Decodable(usize, usize),
    /// A Sysman object (driver, device, or one of its domains).
    Sysman(crate::sysman::SysObj),
}

#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) instances: HashMap<u64, Instance>,
    handles: HashMap<usize, (u64, Obj)>,
    next_id: u64,
    /// The instance behind the exported `zeInit`/`zeDriverGet`.
    pub(crate) global: Option<u64>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

pub(crate) struct Locked(MutexGuard<'static, Option<Registry>>);

impl std::ops::Deref for Locked {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        self.0.as_ref().expect("registry initialised by lock()")
    }
}
impl std::ops::DerefMut for Locked {
    fn deref_mut(&mut self) -> &mut Registry {
        self.0.as_mut().expect("registry initialised by lock()")
    }
}

/// Locks the registry. A panic while it was held (caught at the FFI boundary) does not poison it
/// for everyone else.
pub(crate) fn lock() -> Locked {
    let mut g = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        *g = Some(Registry::default());
    }
    Locked(g)
}

/// A fresh, unique, never-reused handle value.
pub(crate) fn new_handle() -> usize {
    Box::into_raw(Box::new([0u64; 2])) as usize
}

impl Registry {
    pub(crate) fn next_instance_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(crate) fn register(&mut self, handle: usize, instance: u64, obj: Obj) {
        self.handles.insert(handle, (instance, obj));
    }

    pub(crate) fn unregister_instance(&mut self, instance: u64) {
        self.handles.retain(|_, (i, _)| *i != instance);
        self.instances.remove(&instance);
    }

    /// Runs `f` on the instance owning `handle`, if the handle is live. Handles `f` creates or
    /// destroys are recorded in `HandleChanges` and applied afterwards.
    pub(crate) fn with<R>(
        &mut self,
        handle: usize,
        f: impl FnOnce(&mut Instance, Obj, &mut HandleChanges) -> Result<R, ze_result_t>,
    ) -> Result<R, ze_result_t> {
        let &(id, obj) = self.handles.get(&handle).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        let inst = self.instances.get_mut(&id).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        let mut changes = HandleChanges::default();
        let r = f(inst, obj, &mut changes);
        for (h, o) in changes.added {
            self.handles.insert(h, (id, o));
        }
        for h in changes.removed {
            self.handles.remove(&h);
        }
        r
    }
}

/// Handles created or destroyed by one call.
#[derive(Default)]
pub(crate) struct HandleChanges {
    pub(crate) added: Vec<(usize, Obj)>,
    pub(crate) removed: Vec<usize>,
}
