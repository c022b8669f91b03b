//! Giving back what a way holds on the driver: each object once, every one attempted, a failure
//! reported and the release going on (a driver that then refuses a deactivation says so itself).

use std::fmt::Display;

/// One step of a way's release over all it opened: `step` gives back what an entry still holds
/// for this step (`None`: nothing, it was never made or is gone already); a failure is added to
/// `errors` as "`what`: the error".
pub(crate) fn each<T, E: Display>(
    open: &mut [T],
    what: &str,
    errors: &mut Vec<String>,
    mut step: impl FnMut(&mut T) -> Option<Result<(), E>>,
) {
    for o in open {
        if let Some(Err(e)) = step(o) {
            errors.push(format!("{what}: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_is_attempted_and_each_failure_named() {
        let mut open = [Some(1), None, Some(3), Some(4)];
        let mut errors = Vec::new();
        let mut given = Vec::new();
        each(&mut open, "closing a thing", &mut errors, |o| {
            o.take().map(|n| {
                given.push(n);
                if n == 1 { Ok(()) } else { Err(format!("refused {n}")) }
            })
        });
        assert_eq!(given, [1, 3, 4], "every held one, after a failure too");
        assert_eq!(errors, ["closing a thing: refused 3", "closing a thing: refused 4"]);
        assert_eq!(open, [None, None, None, None], "each given back once");
        each(&mut open, "closing a thing", &mut errors, |o| o.take().map(|_| Ok::<(), String>(())));
        assert_eq!(errors.len(), 2, "nothing is given back twice");
    }
}
