//! Exported metric memory: a sealed memfd per exporter, written by the simulation thread.
//!
//! # Byte layout (version 1, little-endian; `assets/layouts/ze-sim.ron` in zescope describes it)
//!
//! | offset | type | field                                                             |
//! |-------:|------|-------------------------------------------------------------------|
//! | 0      | u32  | magic `0x4d49535a` ("ZSIM")                                       |
//! | 4      | u32  | layout version (1)                                                |
//! | 8      | u64  | sequence: odd while a snapshot is being written (seqlock)         |
//! | 16     | u64  | device timestamp of the snapshot, ns                              |
//! | 24     | u32  | counter count                                                     |
//! | 28     | u32  | flags: bit 0 = device lost                                        |
//! | 32+8i  | u64/f64 | counter i, in metric order: u64 for cumulative counters, ids and flags, f64 for gauges |
//!
//! A reader takes a torn-free snapshot by reading the sequence (even), the data, then the
//! sequence again (unchanged). The memfd is page-aligned and sealed against shrinking, so a
//! mapping of `size` bytes stays valid for the exporter's life — except with the quirk
//! `unsealed_export` (no seals, the file one page longer than `size`), under which the fault
//! `shrink_export_after_samples` truncates it while it may be mapped: the writer then writes only
//! what still lies inside the file, and copies out of it check the file's length first.
//!
//! Before the first snapshot (an export queried before activation) the header holds the magic,
//! version and counter count, with sequence 0 and timestamp 0.
//!
//! A tracer-based group's buffer is a ring of kernel events instead ([`crate::ring`] documents
//! its bytes): the same file, fds and rules, written by the same thread.
//!
//! The buffer lives from the first export query or activation until its exporter is torn down;
//! it keeps a private dup of every fd it reports, to tell whether the application closed or
//! replaced one ([`crate::fdcheck`]).

use std::io;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

use crate::config::{DeviceKind, Signal};
use crate::ring::{self, RingSpec, TraceEvent};
use crate::{fdcheck, workload};

// The layout constants below are public: they are the byte contract readers (zescope's layout
// file, the tests, the C client) check a buffer against.

/// The u32 at offset 0 of every buffer: "ZSIM" read as little-endian bytes.
pub const MAGIC: u32 = 0x4d49_535a;
/// The u32 at offset 4: the version of this layout (changes whenever the layout does).
pub const LAYOUT_VERSION: u32 = 1;
/// Byte offset of the u64 seqlock sequence (odd while a snapshot is being written).
pub const OFFSET_SEQUENCE: usize = 8;
/// Byte offset of the u64 device timestamp of the snapshot, in ns (0 before the first one).
pub const OFFSET_TIMESTAMP: usize = 16;
/// Byte offset of the u32 counter count.
pub const OFFSET_COUNT: usize = 24;
/// Byte offset of the u32 flags word (see [`FLAG_DEVICE_LOST`]).
pub const OFFSET_FLAGS: usize = 28;
/// Byte offset of counter 0; counter `i` is the 8 bytes at `OFFSET_COUNTERS + 8 * i`.
pub const OFFSET_COUNTERS: usize = 32;
/// Flags bit set once the device is lost: the buffer stops moving from then on.
pub const FLAG_DEVICE_LOST: u32 = 1;
/// Snapshots kept for `ground_truth` queries.
pub(crate) const HISTORY: usize = 8192;

/// Identity of the file behind an fd: what the rules compare, never the fd number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    /// `st_dev` of the file.
    pub dev: u64,
    /// `st_ino` of the file.
    pub ino: u64,
}

/// `fstat` identity of `fd`, or `None` if it is not open.
pub fn file_id(fd: RawFd) -> Option<FileId> {
    // SAFETY: fstat writes into the zeroed struct we own; an invalid fd only makes it fail.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    Some(FileId { dev: st.st_dev, ino: st.st_ino })
}

/// What one counter of a buffer measures.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CounterSpec {
    pub signal: Signal,
    pub index: usize,
}

/// What a buffer holds: counter snapshots, or a tracer-based group's ring of events.
pub(crate) enum Content {
    Counters(Vec<CounterSpec>),
    Ring(RingSpec),
}

/// The last [`HISTORY`] snapshots' values (the ground truth tests compare reads with), in one
/// ring of storage taken at the first snapshot: writing one allocates nothing.
struct History {
    counters: usize,
    /// Device timestamps, slot by slot.
    ts: Vec<u64>,
    /// `counters` values a slot.
    values: Vec<f64>,
    /// The slot the next snapshot goes to.
    next: usize,
    /// Slots in use.
    len: usize,
}

/// One slot of a [`History`] being filled.
struct Slot<'a>(&'a mut [f64]);

impl Slot<'_> {
    fn set(&mut self, i: usize, v: f64) {
        self.0[i] = v;
    }
}

impl History {
    fn new(counters: usize) -> History {
        History { counters, ts: Vec::new(), values: Vec::new(), next: 0, len: 0 }
    }

    /// The slot for a snapshot stamped `ts` (the oldest one's, once all are used).
    fn next_slot(&mut self, ts: u64) -> Slot<'_> {
        if self.ts.is_empty() {
            self.ts = vec![0; HISTORY];
            self.values = vec![f64::NAN; HISTORY * self.counters];
        }
        let k = self.next;
        self.ts[k] = ts;
        self.next = (k + 1) % HISTORY;
        self.len = (self.len + 1).min(HISTORY);
        Slot(&mut self.values[k * self.counters..(k + 1) * self.counters])
    }

    /// Slots in use, newest first.
    fn newest_first(&self) -> impl Iterator<Item = usize> + '_ {
        (1..=self.len).map(move |j| (self.next + HISTORY - j) % HISTORY)
    }

    fn find(&self, ts: u64) -> Option<Vec<f64>> {
        let k = self.newest_first().find(|&k| self.ts[k] == ts)?;
        Some(self.values[k * self.counters..(k + 1) * self.counters].to_vec())
    }

    /// Every snapshot held, oldest first.
    fn all(&self) -> Vec<(u64, Vec<f64>)> {
        let mut out: Vec<(u64, Vec<f64>)> = self
            .newest_first()
            .map(|k| (self.ts[k], self.values[k * self.counters..(k + 1) * self.counters].to_vec()))
            .collect();
        out.reverse();
        out
    }
}

struct WriterState {
    accum: Vec<f64>,
    last_t: Option<f64>,
    step: u64,
    history: History,
    /// The words of the snapshot being written (kept: a snapshot allocates nothing).
    words: Vec<u64>,
    /// Where the next event of a ring goes.
    ring: ring::Cursor,
}

/// One exported buffer and the fds that name it.
pub(crate) struct ExportBuffer {
    /// The implementation's fd, reported to the application. Never closed by the application.
    pub fd: RawFd,
    /// A second implementation-owned fd of the same buffer (reported by one metric of a
    /// per-metric group, to show that different fds can name one buffer), if any.
    pub second_fd: Option<RawFd>,
    /// The sim's own read-write fd of the memfd (differs from `fd` when the export is made
    /// unmappable: then `fd` is a write-only reopen).
    own_fd: RawFd,
    /// (reported fd, private dup of it) for every reported fd.
    private: Vec<(RawFd, RawFd)>,
    pub id: FileId,
    /// The size reported to the application (page-aligned).
    pub size: usize,
    /// The bytes the header and counters use.
    pub used: usize,
    /// The length of the memfd now (`size`, a page more when unsealed, less once shrunk).
    file_len: AtomicUsize,
    /// The driver's mapping of the whole file as created (`map_len` bytes).
    map: *mut u8,
    map_len: usize,
    pub counters: Vec<CounterSpec>,
    /// A tracer-based group's ring (then `counters` is empty).
    pub(crate) ring: Option<RingSpec>,
    pub device_kind: DeviceKind,
    pub clock_mhz: f64,
    pub stream: u64,
    state: Mutex<WriterState>,
}

// SAFETY: `map` is a MAP_SHARED mapping owned by this struct for its whole life; all writes go
// through `write_snapshot`, which holds `state`'s lock, and readers use the seqlock protocol.
unsafe impl Send for ExportBuffer {}
// SAFETY: as above.
unsafe impl Sync for ExportBuffer {}

fn last_os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl ExportBuffer {
    pub fn create(
        content: Content,
        device_kind: DeviceKind,
        clock_mhz: f64,
        stream: u64,
        per_metric: bool,
        unmappable: bool,
        unsealed: bool,
    ) -> io::Result<ExportBuffer> {
        let (counters, ring) = match content {
            Content::Counters(c) => (c, None),
            Content::Ring(r) => (Vec::new(), Some(r)),
        };
        let bytes = ring.as_ref().map_or(OFFSET_COUNTERS + 8 * counters.len(), RingSpec::bytes);
        let size = bytes.div_ceil(4096) * 4096;
        let map_len = if unsealed { size + 4096 } else { size };
        let flags = if unsealed { libc::MFD_CLOEXEC } else { libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING };
        // SAFETY: memfd_create with a static C string; the result is checked.
        let own_fd = unsafe { libc::memfd_create(c"ze-sim-metrics".as_ptr(), flags) };
        if own_fd < 0 {
            return Err(last_os_error("memfd_create"));
        }
        let fail = |what: &str| {
            let e = last_os_error(what);
            // SAFETY: own_fd is ours and not yet shared.
            unsafe { libc::close(own_fd) };
            e
        };
        // SAFETY: plain syscalls on our own fd.
        if unsafe { libc::ftruncate(own_fd, map_len as libc::off_t) } != 0 {
            return Err(fail("ftruncate"));
        }
        // SAFETY: as above.
        if !unsealed && unsafe { libc::fcntl(own_fd, libc::F_ADD_SEALS, libc::F_SEAL_SHRINK | libc::F_SEAL_GROW) } != 0
        {
            return Err(fail("F_ADD_SEALS"));
        }
        // SAFETY: a fresh shared mapping of the whole memfd; checked for MAP_FAILED.
        let map = unsafe {
            libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, own_fd, 0)
        };
        if map == libc::MAP_FAILED {
            return Err(fail("mmap"));
        }
        let fd = if unmappable {
            // A write-only reopen of the same file: the app sees the same identity but cannot
            // map it for reading, as with a DMA-BUF whose exporter refuses CPU mappings.
            let path = format!("/proc/self/fd/{own_fd}\0");
            // SAFETY: NUL-terminated path; result checked.
            let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(fail("reopen write-only"));
            }
            fd
        } else {
            // SAFETY: duplicating our own fd; the copy is the one handed out.
            let fd = unsafe { libc::fcntl(own_fd, libc::F_DUPFD_CLOEXEC, 3) };
            if fd < 0 {
                return Err(fail("dup"));
            }
            fd
        };
        let second_fd = if per_metric {
            // SAFETY: as above.
            let fd2 = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
            (fd2 >= 0).then_some(fd2)
        } else {
            None
        };
        let id = file_id(own_fd).ok_or_else(|| io::Error::other("fstat of a fresh memfd failed"))?;
        let private = std::iter::once(fd).chain(second_fd).map(|f| (f, fdcheck::private_dup(f))).collect();
        let buf = ExportBuffer {
            fd,
            second_fd,
            own_fd,
            private,
            id,
            size,
            used: bytes,
            file_len: AtomicUsize::new(map_len),
            map: map.cast(),
            map_len,
            state: Mutex::new(WriterState {
                accum: vec![0.0; counters.len()],
                last_t: None,
                step: 0,
                history: History::new(counters.len()),
                words: Vec::with_capacity(counters.len()),
                ring: ring::Cursor::default(),
            }),
            counters,
            ring,
            device_kind,
            clock_mhz,
            stream,
        };
        match &buf.ring {
            Some(r) => r.header().iter().for_each(|&(at, v)| buf.write_u32(at, v)),
            None => {
                buf.write_u32(0, MAGIC);
                buf.write_u32(4, LAYOUT_VERSION);
                buf.write_u32(OFFSET_COUNT, buf.counters.len() as u32);
            }
        }
        Ok(buf)
    }

    /// Do `n` bytes at `offset` still lie inside the file? (Writes past its end would fault.)
    /// Callers hold `state`'s lock, under which the file only shrinks.
    fn fits(&self, offset: usize, n: usize) -> bool {
        offset + n <= self.file_len.load(Ordering::Acquire)
    }

    fn write_u32(&self, offset: usize, v: u32) {
        if !self.fits(offset, 4) {
            return;
        }
        // SAFETY: offset is inside the mapping and the file (checked), aligned to 4.
        unsafe { std::ptr::write_volatile(self.map.add(offset).cast::<u32>(), v) }
    }

    fn write_u64(&self, offset: usize, v: u64) {
        if !self.fits(offset, 8) {
            return;
        }
        // SAFETY: offset is inside the mapping and the file (checked), 8-aligned.
        unsafe { std::ptr::write_volatile(self.map.add(offset).cast::<u64>(), v) }
    }

    /// The sequence word, if it still lies inside the file.
    fn sequence(&self) -> Option<&AtomicU64> {
        // SAFETY: offset 8 is 8-aligned inside the mapping, which lives as long as self, and inside
        // the file (checked); the word is only accessed atomically.
        self.fits(OFFSET_SEQUENCE, 8).then(|| unsafe { &*self.map.add(OFFSET_SEQUENCE).cast::<AtomicU64>() })
    }

    /// Truncates the file to `len` bytes (fault `shrink_export_after_samples`), once. Only an
    /// unsealed memfd can shrink; a failure is reported and changes nothing.
    pub fn shrink(&self, len: usize) {
        let _st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if len >= self.file_len.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: truncating our own memfd; our writes past the new end stop (file_len, under the lock).
        if unsafe { libc::ftruncate(self.own_fd, len as libc::off_t) } != 0 {
            eprintln!("ze-sim: injected fault: cannot shrink the exported file: {}", io::Error::last_os_error());
            return;
        }
        self.file_len.store(len, Ordering::Release);
        eprintln!("ze-sim: injected fault: exported file truncated to {len} bytes while it may be mapped");
    }

    /// Copies `len` bytes from `offset` of the buffer (as seen through an import) to `dst`;
    /// false if they no longer lie inside the file.
    ///
    /// SAFETY (for callers): `dst` is valid for `len` bytes of writes.
    pub unsafe fn copy_out(&self, offset: usize, dst: *mut u8, len: usize) -> bool {
        let _st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if offset.checked_add(len).is_none_or(|end| end > self.map_len) || !self.fits(offset, len) {
            return false;
        }
        // SAFETY: the range lies inside our mapping and the file (checked, and the file cannot
        // shrink while we hold the lock); `dst` per the contract.
        unsafe { std::ptr::copy(self.map.add(offset), dst, len) };
        true
    }

    /// Writes one snapshot at device time `timestamp_ns`; `t` is seconds since the driver started.
    pub fn write_snapshot(&self, seed: u64, timestamp_ns: u64, t: f64) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = &self.ring {
            ring::write_tick(r, &mut st.ring, seed, timestamp_ns, |at, w| self.write_u64(at, w));
            return;
        }
        let dt = st.last_t.map_or(0.0, |last| (t - last).max(0.0));
        st.last_t = Some(t);
        st.step += 1;
        let step = st.step;
        // Its fields borrowed apart: the history's slot is filled while the counters accumulate.
        let st: &mut WriterState = &mut st;
        // Compute first, then publish: the sequence is odd only while the bytes are copied in.
        let mut values = st.history.next_slot(timestamp_ns);
        let mut words = std::mem::take(&mut st.words);
        words.clear();
        let at = workload::Moment::at(t);
        for (i, c) in self.counters.iter().enumerate() {
            let n = workload::noise(seed, self.stream * 4096 + i as u64, step);
            let level = workload::level(c.signal, self.device_kind, self.clock_mhz, at, n, c.index);
            if c.signal.is_cumulative() {
                st.accum[i] += level * dt;
                let raw = st.accum[i] as u64;
                words.push(raw);
                values.set(i, raw as f64);
            } else if c.signal.is_integer_level() {
                words.push(level as u64);
                values.set(i, level);
            } else {
                let (word, value) = crate::catalog::gauge(c.signal, level);
                words.push(word);
                values.set(i, value);
            }
        }
        if let Some(seq) = self.sequence() {
            let s = seq.load(Ordering::Relaxed);
            seq.store(s + 1, Ordering::Relaxed);
            fence(Ordering::Release);
            self.write_u64(OFFSET_TIMESTAMP, timestamp_ns);
            for (i, &w) in words.iter().enumerate() {
                self.write_u64(OFFSET_COUNTERS + 8 * i, w);
            }
            seq.store(s + 2, Ordering::Release);
        }
        st.words = words;
    }

    pub fn set_lost(&self) {
        let _st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.write_u32(OFFSET_FLAGS, FLAG_DEVICE_LOST);
    }

    /// The values written in the snapshot stamped `timestamp_ns`, if still in the history.
    pub fn ground_truth(&self, timestamp_ns: u64) -> Option<Vec<f64>> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.history.find(timestamp_ns)
    }

    /// A ring's events `from .. end` (at most `max`), with the oldest event it still holds;
    /// `None` for a buffer of counters.
    pub(crate) fn ring_read(&self, from: u64, end: u64, max: usize) -> Option<(Vec<TraceEvent>, u64)> {
        let r = self.ring.as_ref()?;
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Some(ring::read(r, &st.ring, from, end, max, |at| self.read_u64(at)))
    }

    /// A ring's write index: events written so far (0 for a buffer of counters).
    pub(crate) fn ring_written(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).ring.next
    }

    fn read_u64(&self, offset: usize) -> u64 {
        if !self.fits(offset, 8) {
            return 0;
        }
        // SAFETY: offset is inside the mapping and the file (checked), 8-aligned.
        unsafe { std::ptr::read_volatile(self.map.add(offset).cast::<u64>()) }
    }

    /// Every snapshot still in the history: (device timestamp, values).
    pub fn history(&self) -> Vec<(u64, Vec<f64>)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).history.all()
    }

    /// A new read-only mapping of `size` bytes of the buffer: what an import returns as its
    /// "device" pointer. The driver never reads it directly (copies go through `copy_out`).
    pub fn map_for_import(&self) -> io::Result<*mut u8> {
        // SAFETY: mapping our own memfd read-only, checked for MAP_FAILED.
        let p =
            unsafe { libc::mmap(std::ptr::null_mut(), self.size, libc::PROT_READ, libc::MAP_SHARED, self.own_fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(last_os_error("mmap for import"));
        }
        Ok(p.cast())
    }

    /// Is `fd` (one this buffer reported) still exactly what the driver handed out?
    fn intact(&self, fd: RawFd, private: RawFd) -> bool {
        fdcheck::has_cloexec(fd) && fdcheck::same_description(fd, private, self.id)
    }

    /// Checks that every reported fd still is what the driver handed out (same open file
    /// description, FD_CLOEXEC still set). Returns the fds that are not.
    pub fn broken_fds(&self) -> Vec<RawFd> {
        self.private.iter().filter(|&&(fd, p)| !self.intact(fd, p)).map(|&(fd, _)| fd).collect()
    }

    /// Is `fd` one of the fds this buffer reported, and still intact?
    pub fn is_reported_fd(&self, fd: RawFd) -> bool {
        self.private.iter().any(|&(f, p)| f == fd && self.intact(f, p))
    }

    /// Teardown: closes the reported fds that are still the driver's (never someone else's
    /// file or fd), and the private dups.
    pub fn close_reported_fds(&self) {
        for &(fd, private) in &self.private {
            if self.intact(fd, private) {
                // SAFETY: the fd is the implementation's and still refers to our buffer.
                unsafe { libc::close(fd) };
            }
        }
    }

    /// Start address of the driver's own mapping (excluded when looking for the application's).
    pub fn own_map(&self) -> usize {
        self.map as usize
    }
}

impl Drop for ExportBuffer {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping and closing our own fds, once.
        unsafe {
            libc::munmap(self.map.cast(), self.map_len);
            libc::close(self.own_fd);
            for &(_, private) in &self.private {
                if private >= 0 {
                    libc::close(private);
                }
            }
        }
    }
}

/// Unmaps a mapping made by `map_for_import`.
pub(crate) fn unmap_import(ptr: *mut u8, size: usize) {
    // SAFETY: callers pass a pointer/size pair returned by map_for_import, exactly once.
    unsafe { libc::munmap(ptr.cast(), size) };
}
