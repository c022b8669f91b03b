//! A driver linked into the program rather than loaded through a Level Zero loader (the
//! simulated driver `ze-sim`, in-process): its [`Api`] table, what keeps that table's entry
//! points and handles valid, and how its drivers are reached.
//!
//! The safe layer takes such a driver as it takes the loader's table; the promise that the table
//! keeps the Level Zero contract is made once, by whoever builds the value ([`InProcess::new`] is
//! `unsafe`), so the program that hands it over needs no `unsafe` of its own.

use std::any::Any;
use std::sync::Arc;

use crate::{Api, ze_driver_handle_t, ze_result_t};

/// A call that failed while an in-process driver was started: its name and what it answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitFailed {
    /// The Level Zero call, e.g. `zeInit`.
    pub call: &'static str,
    /// What it answered.
    pub result: ze_result_t,
}

/// The driver's own start: its driver handles, or the call that failed.
pub type StartDrivers = Box<dyn FnOnce() -> Result<Vec<ze_driver_handle_t>, InitFailed> + Send>;

/// How an in-process driver's drivers are reached.
pub enum Drivers {
    /// Through the table's own `zeInitDrivers` / `zeInit` + `zeDriverGet`, as a loader's.
    ThroughApi,
    /// By the driver's own start: for an instance the table's process-wide `zeInit` does not
    /// reach (a private simulated driver).
    Own(StartDrivers),
}

/// A driver linked into the program, ready to be handed to the safe layer.
pub struct InProcess {
    api: Api,
    keep_alive: Arc<dyn Any + Send + Sync>,
    drivers: Drivers,
}

impl InProcess {
    /// A driver whose entry points are `api`'s, valid while `keep_alive` (or a clone of it)
    /// lives, whose drivers `drivers` reaches.
    ///
    /// # Safety
    /// Every entry point of `api` keeps the contract the Level Zero specification gives it (for
    /// arguments that keep theirs), and it and every handle and pointer it hands out stay valid
    /// while `keep_alive` lives; `drivers` returns driver handles of `api`'s implementation.
    pub unsafe fn new(api: Api, keep_alive: Arc<dyn Any + Send + Sync>, drivers: Drivers) -> InProcess {
        InProcess { api, keep_alive, drivers }
    }

    /// Its table, what keeps it valid, and how its drivers are reached (for the safe layer,
    /// which keeps the first two together for as long as any of its handles lives).
    pub fn into_parts(self) -> (Api, Arc<dyn Any + Send + Sync>, Drivers) {
        (self.api, self.keep_alive, self.drivers)
    }
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let drivers = match self.drivers {
            Drivers::ThroughApi => "through its table",
            Drivers::Own(_) => "by its own start",
        };
        f.debug_struct("InProcess").field("drivers", &drivers).finish_non_exhaustive()
    }
}
