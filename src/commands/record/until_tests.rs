//! Where `--duration` ends on the samples' clock.

use super::held_until;

const MS: i64 = 1_000_000;

#[test]
fn a_duration_ends_its_length_after_the_first_sample_where_that_came_before_the_start() {
    // The run started (as the main thread learnt) at 100 ms: a second ends at 1100 ms.
    let until = 1_100 * MS;
    // A streamer's first report stamped 13 ms before that: the second ends 13 ms earlier.
    assert_eq!(held_until(until, Some(87 * MS), 1_000 * MS), 1_087 * MS);
    // Later batches (and a first sample after the start, as a tick's) change nothing.
    let until = held_until(until, Some(87 * MS), 1_000 * MS);
    assert_eq!(held_until(until, Some(500 * MS), 1_000 * MS), 1_087 * MS);
    assert_eq!(held_until(1_100 * MS, Some(101 * MS), 1_000 * MS), 1_100 * MS);
    // No rows, or no duration (until the workload exits): as it was.
    assert_eq!(held_until(until, None, 1_000 * MS), until);
    assert_eq!(held_until(i64::MAX, Some(87 * MS), i64::MAX), i64::MAX);
}
