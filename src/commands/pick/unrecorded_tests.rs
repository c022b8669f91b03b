use super::*;
use crate::commands::pick::pick_targets;
use crate::commands::pick::testing::{device, inventory};
use zescope_model::derive::Derivation;
use zescope_model::triggers::Trigger;

/// The inventory of the pick tests with a third GPU group, `Traffic` (BytesRead), in domain 1.
fn with_traffic() -> Inventory {
    let mut inv = inventory();
    let mut traffic = device(0, "GPU", &[("Traffic", &["BytesRead"])]).groups.remove(0);
    traffic.domain = 1;
    inv.devices[0].groups.push(traffic);
    inv
}

/// `check` of `derive` (NAME=EXPR each) over the run `--device devices --group groups --metric
/// metrics` picks from `inv`.
fn said(inv: &Inventory, (devices, groups, metrics): (&[&str], &[&str], &[&str]), derive: &[&str]) -> Option<String> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let targets = pick_targets(inv, &s(devices), &s(groups), &s(metrics), Via::Auto).expect("the run is picked");
    let defs: Vec<Derivation> = derive.iter().map(|d| Derivation::parse(d).expect("it parses")).collect();
    check(inv, &targets, Via::Auto, &named(&defs, &[])).err()
}

#[test]
fn a_group_the_run_leaves_out_is_named_with_the_flag_that_adds_it() {
    let e = said(&with_traffic(), (&[], &[], &[]), &["bw=rate(Traffic/BytesRead)"]).expect("refused");
    assert_eq!(
        e,
        "derived series 'bw' names 'Traffic/BytesRead', a metric of group Traffic, which this run does not record: \
         add --group Traffic"
    );
    // With two devices the group is given to its own.
    let e = said(&with_traffic(), (&["0", "1"], &[], &[]), &["bw=Traffic/BytesRead"]).expect("refused");
    assert!(
        e.ends_with(
            "a metric of group Traffic of GPU (device 0), which this run does not record: add --group 0:Traffic"
        ),
        "{e}"
    );
}

#[test]
fn a_group_of_a_recorded_groups_domain_is_offered_in_its_place() {
    let e = said(&inventory(), (&[], &[], &[]), &["b=Odd:Name/Busy"]).expect("refused");
    assert!(e.contains("record it with --group Odd:Name in place of Compute (they share domain 0"), "{e}");
}

#[test]
fn a_metric_that_metric_leaves_out_is_named() {
    let e = said(&inventory(), (&[], &[], &["Power"]), &["b=Compute/Busy * 2"]).expect("refused");
    assert_eq!(
        e,
        "derived series 'b' names 'Compute/Busy', which --metric leaves out of group Compute: add --metric Busy"
    );
}

#[test]
fn another_devices_group_is_named_with_the_devices_to_record() {
    let e = said(&inventory(), (&[], &[], &[]), &["i=Npu/Inferences"]).expect("refused");
    assert_eq!(
        e,
        "derived series 'i' names 'Npu/Inferences', a metric of NPU (device 1), which this run does not record: \
         add --device 0,1 --group 1:Npu"
    );
}

#[test]
fn what_the_run_records_or_the_source_lacks_is_left_to_the_runs_own_check() {
    let inv = with_traffic();
    for ok in [
        "a=Compute/Busy",
        "a=Comp*/Pow*",
        // A pattern one of whose series is recorded is taken (the binder decides whether it is one).
        "a=*/Busy",
        "a=Telemetry/Power",
        "a=Derived/other",
        "a=Nothing/Here",
        "a=Compute/Nonesuch",
    ] {
        assert_eq!(said(&inv, (&[], &[], &[]), &[ok]), None, "{ok}");
    }
    assert_eq!(said(&inv, (&["0", "1"], &[], &[]), &["i=Npu/Inferences + Compute/Busy"]), None);
}

#[test]
fn a_trigger_and_several_names_are_said_in_one_message() {
    let inv = with_traffic();
    let targets = pick_targets(&inv, &[], &[], &[], Via::Auto).unwrap();
    let t = vec![Trigger::parse("Traffic/BytesRead > 5").unwrap()];
    let d = vec![Derivation::parse("i=Npu/Inferences").unwrap()];
    let e = check(&inv, &targets, Via::Auto, &named(&d, &t)).unwrap_err();
    let parts: Vec<&str> = e.split("; ").collect();
    assert_eq!(parts.len(), 2, "{e}");
    assert!(parts[0].starts_with("derived series 'i' names 'Npu/Inferences', a metric of NPU"), "{e}");
    assert_eq!(
        parts[1],
        "trigger 'Traffic/BytesRead > 5' names 'Traffic/BytesRead', a metric of group Traffic, which this run does not record: add --group \
         Traffic"
    );
}

#[test]
fn a_group_the_via_cannot_read_says_so() {
    let mut inv = with_traffic();
    inv.devices[0].groups[2].ways = vec![Via::Streamer];
    inv.devices[0].groups[2].export_unavailable = Some("no exported memory".into());
    let targets = pick_targets(&inv, &[], &[], &[], Via::Export).unwrap();
    let d = vec![Derivation::parse("b=Traffic/BytesRead").unwrap()];
    let e = check(&inv, &targets, Via::Export, &named(&d, &[])).unwrap_err();
    assert!(e.ends_with("add --group Traffic (--via export cannot read it: no exported memory)"), "{e}");
}
