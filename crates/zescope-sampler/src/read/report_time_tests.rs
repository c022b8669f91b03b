//! `report_time.rs`'s tests: units, pairs, wraps, the 64-bit way, and a timer drifting from the host clock.

use super::*;

fn clock(timer: Timer, unit: &str, host: u64, ticks: u64) -> ReportClock {
    let mut c = ReportClock::new(timer, unit);
    c.set_pair(host as i64 - 10, host as i64 + 10, host, ticks, host);
    c
}

#[test]
fn units_of_time_scale_to_ns_and_others_are_refused() {
    assert_eq!(unit_ns("ns"), Some(1));
    assert_eq!(unit_ns(""), Some(1));
    assert_eq!(unit_ns(" us "), Some(1_000));
    assert_eq!(unit_ns("ms"), Some(1_000_000));
    assert_eq!(unit_ns("cycles"), None);
}

#[test]
fn the_timer_takes_the_exact_rate_only_when_both_answers_agree() {
    let t = Timer::from_resolutions(52, Some(19_200_000), 32);
    assert_eq!(t, Timer { hz: 19_200_000, valid_bits: 32 });
    // A driver that ignored the 1.2 type answered ns per tick there too.
    assert_eq!(Timer::from_resolutions(52, Some(52), 32).hz, 1_000_000_000 / 52);
    assert_eq!(Timer::from_resolutions(0, None, 0), Timer::NS);
    assert_eq!(Timer::from_resolutions(1, Some(1_000_000_000), 64), Timer::NS);
}

#[test]
fn a_report_in_ns_maps_through_a_tick_pair() {
    // 19.2 MHz: 1_920_000 ticks are 100 ms.
    let timer = Timer { hz: 19_200_000, valid_bits: 64 };
    let c = clock(timer, "ns", 5_000_000_000, 1_920_000);
    // A report 1 ms after the pair's device time.
    assert_eq!(c.map(Some(101_000_000), 5_000_000_000), Some(5_001_000_000));
    // In µs.
    let c = clock(timer, "us", 5_000_000_000, 1_920_000);
    assert_eq!(c.map(Some(99_000), 5_000_000_000), Some(4_999_000_000));
}

#[test]
fn a_wrapped_timer_maps_across_the_wrap() {
    // 24 valid bits at 19.2 MHz wrap every 873.8 ms.
    let timer = Timer { hz: 19_200_000, valid_bits: 24 };
    let wrap = timer.wrap_ns().unwrap() as u64;
    // The pair just before the wrap, the report just after it (its ns count restarted).
    let ticks = (1u64 << 24) - 192; // 10 µs before the wrap
    let c = clock(timer, "ns", 7_000_000_000, ticks);
    let report = 20_000; // 20 µs after the wrap
    let t = c.map(Some(report), 7_000_000_000).unwrap();
    assert_eq!(t, 7_000_000_000 + 30_000, "10 µs to the wrap and 20 µs after it");
    // A report of before the pair, across the wrap the other way.
    let c = clock(timer, "ns", 7_000_000_000, 192);
    let t = c.map(Some(wrap - 20_000), 7_000_000_000).unwrap();
    assert_eq!(t, 7_000_000_000 - 30_000);
}

#[test]
fn a_synchronized_device_gives_host_ns_and_reports_stay_ticks() {
    // 19.2 MHz, 32 valid bits; the device's timer runs on the host's ns (synchronized), so a
    // report's tick count (as ns) is the host time, modulo the timer's wrap.
    let timer = Timer { hz: 19_200_000, valid_bits: 32 };
    let host = 5_000_000_000_000u64; // 5000 s after boot
    let c = clock(timer, "ns", host, host);
    assert_eq!(c.unit, Some(PairUnit::HostNs));
    let ticks_now = (u128::from(host) * 19_200_000 / 1_000_000_000) as u64 & 0xffff_ffff;
    let report_ns = |ticks: u64| (u128::from(ticks) * 1_000_000_000 / 19_200_000) as u64;
    // A report 1 ms (19,200 ticks) after the pair maps 1 ms after it.
    let t = c.map(Some(report_ns(ticks_now + 19_200)), host).unwrap();
    assert!((t - (host as i64 + 1_000_000)).abs() <= 52, "{t}");
    // The same device value taken for ticks (the old reading) lands far from the read.
    let mut old = ReportClock::new(timer, "ns");
    old.unit = Some(PairUnit::Ticks);
    old.set_pair(host as i64 - 10, host as i64 + 10, host, host, host);
    assert_ne!(old.map(Some(report_ns(ticks_now + 19_200)), host), Some(t));
    // A tick count of another epoch is ticks.
    let c = clock(timer, "ns", host, 1_920_000);
    assert_eq!(c.unit, Some(PairUnit::Ticks));
}

#[test]
fn the_64_bit_way_answers_as_the_128_bit_way() {
    let timers = [
        Timer::NS,
        Timer { hz: 19_200_000, valid_bits: 24 },
        Timer { hz: 19_200_000, valid_bits: 32 },
        Timer { hz: 12_500_000, valid_bits: 36 },
        Timer { hz: 38_400_000, valid_bits: 64 },
    ];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut near = 0;
    for timer in timers {
        for unit in ["ns", "us"] {
            for (host, ticks) in
                [(5_000_000_000u64, 1_920_000u64), (1 << 40, (1 << 24) - 192), (1 << 62, 7), (3, u64::MAX)]
            {
                let mut c = clock(timer, unit, host, ticks);
                // And with a slope, as a drifting timer's mapping has.
                if rnd() % 2 == 0 {
                    (c.skew, c.skew_before) = (3.7e-5, -2.1e-5);
                    c.near = c.anchor.and_then(|(h, d)| Near::of(h, d, c.unit_ns, c.wrap_ns, c.skew, c.skew_before));
                }
                let dev = c.anchor.unwrap().1;
                for _ in 0..400 {
                    // Around the pair's device time, across wraps, at the edges of u64.
                    let spread = 1u64 << (rnd() % 64);
                    let base = u64::try_from(dev.max(0) / i128::from(unit_ns(unit).unwrap())).unwrap_or(u64::MAX);
                    let stamp = match rnd() % 4 {
                        0 => base.wrapping_add(rnd() % spread),
                        1 => base.wrapping_sub(rnd() % spread),
                        2 => rnd(),
                        _ => u64::MAX - rnd() % 3,
                    };
                    let now = host.wrapping_add(rnd() % (1 << 36)).wrapping_sub(1 << 35);
                    assert_eq!(
                        c.map(Some(stamp), now),
                        c.map_wide_only(Some(stamp), now),
                        "{timer:?} {unit} {host} {ticks} {stamp} {now}"
                    );
                    near += usize::from(c.near.and_then(|n| n.map(stamp, now)).is_some());
                }
            }
        }
    }
    assert!(near > 1_000, "the 64-bit way answered {near} times");
}

#[test]
fn a_host_time_from_another_clock_is_replaced_by_the_midpoint() {
    let mut c = ReportClock::new(Timer::NS, "ns");
    c.set_pair(1_000, 1_100, 9_999_999, 500, 1_100);
    assert_eq!(c.anchor, Some((1_050, 500)));
    let mut c = ReportClock::new(Timer::NS, "ns");
    c.set_pair(1_000, 1_100, 1_020, 500, 1_100);
    assert_eq!(c.anchor, Some((1_020, 500)), "a host time between the readings is kept");
}

/// A deterministic jitter in ±`amp` ns.
fn jitter(seed: &mut u64, amp: i64) -> i64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    (*seed % (2 * amp as u64 + 1)) as i64 - amp
}

/// Reports every 10 µs for 12 s on a timer running `ppm` fast, read as a streamer's are:
/// every 100 ms, in parts of 1 638 reports 0.3 ms apart, a pair taken before a part when one
/// is due (every second; before every part for a timer wrapping within [`SHORT_WRAP_NS`]),
/// its host time another clock's (the midpoint of a call of 4 µs ± 2 µs): the mapped times,
/// and each report's true host time.
fn drifting(ppm: i64, timer: Timer) -> Vec<(i64, i64)> {
    let (host0, dev0) = (50_000_000_000i64, 7_000_000_000i64);
    let dev_at = |host: i64| dev0 + (host - host0) + (host - host0) * ppm / 1_000_000;
    let ticks_at = |host: i64| {
        let ticks = (i128::from(dev_at(host)) * i128::from(timer.hz) / 1_000_000_000) as u64;
        if timer.valid_bits < 64 { ticks & ((1 << timer.valid_bits) - 1) } else { ticks }
    };
    let short = timer.wrap_ns().is_some_and(|w| w < SHORT_WRAP_NS);
    let mut c = ReportClock::new(timer, "ns");
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::new();
    let mut paired = i64::MIN / 2;
    let (mut next, mut read_at) = (host0, host0);
    while read_at < host0 + 12_000_000_000 {
        for (part, reports) in (0..).zip((next..read_at).step_by(10_000).collect::<Vec<_>>().chunks(1_638)) {
            let at = read_at + part * 300_000;
            if short || at - paired >= 1_000_000_000 {
                let before = at - 2_000 + jitter(&mut seed, 1_000);
                let after = at + 2_000 + jitter(&mut seed, 1_000);
                c.set_pair(before, after, 1, ticks_at(at), at as u64);
                paired = at;
            }
            for &host in reports {
                let stamp = timer.ticks_to_ns(ticks_at(host)) as u64;
                out.push((c.map(Some(stamp), at as u64).expect("a report near its pair"), host));
            }
            c.placed_up_to(timer.ticks_to_ns(ticks_at(*reports.last().unwrap())) as u64);
        }
        next = next.max(read_at);
        read_at += 100_000_000;
    }
    out
}

#[test]
fn a_timer_drifting_from_the_host_clock_maps_without_steps_and_follows_the_host() {
    for timer in [Timer::NS, Timer { hz: 19_200_000, valid_bits: 32 }, Timer { hz: 19_200_000, valid_bits: 24 }] {
        for ppm in [50, -50, 200] {
            let mapped = drifting(ppm, timer);
            // Every step one report period (a tick of a 19.2 MHz timer is 52 ns): no report
            // placed before the one before it, none with a hole after it.
            // Until the rate is measured the steps are the device's, `ppm` long.
            let tick = if timer.hz == 19_200_000 { 53 } else { 2 } + ppm.abs() / 100;
            let worst = mapped.windows(2).map(|w| (w[1].0 - w[0].0 - 10_000).abs()).max().unwrap();
            assert!(worst <= tick, "{timer:?} {ppm} ppm: a step off the 10 µs period by {worst} ns");
            // Within the pairs' jitter of the host's time, once the rate is measured and the
            // offset made up (a pair a second: at the second pair; pairs 100 ms apart make up
            // a tenth of it each).
            let off = mapped[500_000..].iter().map(|(t, host)| (t - host).abs()).max().unwrap();
            assert!(off < 10_000, "{timer:?} {ppm} ppm: {off} ns from the host's time");
            let first = mapped[..500_000].iter().map(|(t, host)| (t - host).abs()).max().unwrap();
            assert!(first < (ppm.abs() + 5) * 1_000, "{timer:?} {ppm} ppm: {first} ns off before the rate is known");
        }
    }
}

#[test]
fn a_pair_far_off_the_mapping_is_jumped_to_and_an_unsure_one_is_passed_over() {
    let mut c = ReportClock::new(Timer::NS, "ns");
    c.set_pair(1_000_000, 1_000_010, 1, 5_000_000, 1_000_010);
    // A second on, the timer was reset: its device time jumped back to 1 µs.
    c.set_pair(1_001_000_000, 1_001_000_010, 1, 1_000, 1_001_000_010);
    assert_eq!(c.anchor, Some((1_001_000_005, 1_000)), "jumped to");
    assert_eq!(c.map(Some(11_000), 1_001_000_010), Some(1_001_010_005));
    // A call held up for 3 ms, its host value another clock's: the midpoint is 1.5 ms unsure.
    let before = c.anchor;
    c.set_pair(1_002_000_000, 1_005_000_000, 1, 4_500_000, 1_005_000_000);
    assert_eq!(c.anchor, before, "passed over");
    assert_eq!(c.anchored_at, 1_001_000_010, "asked again at the next read");
    // Passed over at most MAX_PASSED times in a row: the next is taken (here 2 ms off the
    // mapping: jumped to).
    for _ in 1..MAX_PASSED {
        c.set_pair(1_002_000_000, 1_005_000_000, 1, 4_500_000, 1_005_000_000);
    }
    assert_eq!(c.anchor, before);
    c.set_pair(1_002_000_000, 1_005_000_000, 1, 4_500_000, 1_005_000_000);
    assert_eq!(c.anchor, Some((1_003_500_000, 4_500_000)));
}

#[test]
fn implausible_or_unplaceable_reports_are_left_to_the_caller() {
    let c = clock(Timer::NS, "ns", 1_000_000_000_000, 0);
    assert_eq!(c.map(Some(20_000_000_000), 1_000_000_000_000), None, "20 s away from the read");
    assert_eq!(c.map(None, 1_000_000_000_000), None);
    let c = clock(Timer::NS, "cycles", 1_000, 0);
    assert_eq!(c.map(Some(5), 1_000), None);
    assert!(c.unit_notice("QueryBeginTime", "cycles").unwrap().contains("\"cycles\""));
}
