//! What to tick in the source list when a derived series or a trigger being added names a series
//! that the device has but the live run does not sample (`triggers::left_out`): said in place of
//! the run's "no series of this run; it could mean …", which sent the user after a typo that was
//! not there. Only for the window's own live run: a remote run's sources are its server's, and a
//! recording's cannot be changed.

use zescope_model::triggers::left_out::{Named, Why, left_out};
use zescope_sampler::{Inventory, RunInfo};

/// The advice for the first of `named` that the run `run` leaves out and `inv` has; `None` when
/// every name is sampled, lacking everywhere, or `inv` is a remote server's.
pub(crate) fn advice(inv: Option<&Inventory>, run: &RunInfo, named: &[Named]) -> Option<String> {
    let inv = inv.filter(|i| !i.source.as_ref().is_some_and(crate::status::is_remote))?;
    named.iter().find_map(|n| {
        let l = left_out(inv, &run.config.targets, n.pattern)?;
        let (d, g) = (l.device.name.as_str(), l.group.name.as_str());
        Some(match l.why {
            Why::Device => format!(
                "{}, a metric of {d}, which this run does not sample: tick {d} and its group {g} in the source list",
                n.lead
            ),
            Why::Metric => format!(
                "{}, a metric of group {g} left out of this run: tick {} under {g} in the source list",
                n.lead, l.metric
            ),
            Why::Group { instead: Some(other) } => format!(
                "{}, a metric of group {g} of {d}, which this run does not sample: tick {g} in the source list in \
                 place of {other} (they share domain {}, and a device samples one group per domain)",
                n.lead, l.group.domain
            ),
            Why::Group { instead: None } => format!(
                "{}, a metric of group {g} of {d}, which this run does not sample: tick {g} in the source list",
                n.lead
            ),
        })
    })
}
