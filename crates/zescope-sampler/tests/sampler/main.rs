//! The sampler's integration tests, one binary, each module a feature of the one sampler thread
//! on an in-process simulated driver (`zescope_sampler::testing`): runs and their events
//! (`run`), drivers that differ or fail (`drivers`), several devices on one clock (`multidev`),
//! a panic part way through a teardown (`panic`), random sequences of commands under sets of
//! faults (`props`), drivers that behave as the public NPU driver and compute-runtime do
//! (`profiles`), the time-based streamer (`streamer`) and when it is read (`streamer_wake`), the processes using each device
//! (`processes`), the layouts that decode exported bytes (`layout`), and how each metric type
//! becomes series (`metric_types`), the metric tracer (`tracer`), and every read path in one run
//! (`paths`).

mod drivers;
mod layout;
mod metric_types;
mod multidev;
mod panic;
mod paths;
mod processes;
mod profiles;
mod props;
mod run;
mod streamer;
mod streamer_wake;
mod tracer;
