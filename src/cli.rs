//! Command-line interface: `zescope [--source ...] [COMMAND]`.

use clap::{Parser, Subcommand};

use crate::ze::Source;

#[derive(Parser, Debug)]
#[command(
    name = "zescope",
    version,
    about = "Live metrics viewer for Level Zero GPUs and NPUs",
    long_about = "zescope plots the hardware counters that Level Zero drivers export as DMA-BUF memory \
                  (ZET_experimental_metric_export_memory). Without a Level Zero GPU it runs on a built-in \
                  simulated device."
)]
pub struct Cli {
    /// Where metrics come from: the real Level Zero loader if it has a device with metrics, else
    /// the simulated device (auto); only the loader (level-zero); only the simulated device (sim).
    #[arg(long, value_enum, default_value_t = Source::Auto, global = true)]
    pub source: Source,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List drivers, devices, sub-devices and metric groups, with what each exports.
    List {
        /// Also list every metric of every group.
        #[arg(long, short)]
        metrics: bool,
    },
}
