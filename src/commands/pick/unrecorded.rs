//! What to add to the command line when a `--derive` or `--trigger` names a series that the
//! source has but the run would not record (`triggers::left_out`): a group left out, a metric
//! `--metric` leaves out, or a device not given to `--device`. Said before anything is written.

use super::{index_of, label};
use zescope_model::triggers::left_out::{Named, Why, left_out};
use zescope_sampler::{Inventory, Target, Via};

pub use zescope_model::triggers::left_out::named;

/// Errs, saying what to add, for each of `named` that no series of `targets` (read `via`)
/// matches and a metric of `inv` does; `Ok` otherwise.
pub fn check(inv: &Inventory, targets: &[Target], via: Via, named: &[Named]) -> Result<(), String> {
    let said: Vec<String> = named.iter().filter_map(|n| advice(inv, targets, via, n)).collect();
    if said.is_empty() { Ok(()) } else { Err(said.join("; ")) }
}

/// What to add for `n`, when it names only series the run leaves out.
fn advice(inv: &Inventory, targets: &[Target], via: Via, n: &Named) -> Option<String> {
    let l = left_out(inv, targets, n.pattern)?;
    let (d, g) = (l.device, l.group);
    let cannot = match g.read_by(via) {
        Some(_) => String::new(),
        None => format!(" (--via {} cannot read it: {})", via.name(), g.unreadable_by(via).unwrap_or_default()),
    };
    let several = targets.len() > 1;
    let group = match several {
        true => format!("{}:{}", label(inv, d), g.name),
        false => g.name.clone(),
    };
    let of = match several {
        true => format!(" of {} (device {})", d.name, index_of(d)),
        false => String::new(),
    };
    let lead = &n.lead;
    Some(match l.why {
        Why::Device => {
            let this = label(inv, d);
            let mut devices: Vec<String> = targets
                .iter()
                .filter_map(|t| inv.devices.iter().find(|x| x.path == t.device))
                .map(|x| label(inv, x))
                .collect();
            devices.push(this.clone());
            format!(
                "{lead}, a metric of {} (device {this}), which this run does not record: add --device {} --group \
                 {this}:{}{cannot}",
                d.name,
                devices.join(","),
                g.name
            )
        }
        Why::Metric => format!("{lead}, which --metric leaves out of group {}: add --metric {}", g.name, l.metric),
        Why::Group { instead: Some(other) } => format!(
            "{lead}, a metric of group {}{of}, which this run does not record: record it with --group {group} in place \
             of {other} (they share domain {}, and a device samples one group per domain){cannot}",
            g.name, g.domain
        ),
        Why::Group { instead: None } => {
            format!(
                "{lead}, a metric of group {}{of}, which this run does not record: add --group {group}{cannot}",
                g.name
            )
        }
    })
}

#[cfg(test)]
#[path = "unrecorded_tests.rs"]
mod tests;
