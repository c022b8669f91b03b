//! Every column form round-trips bit for bit; hostile bytes decode as missing values.

use super::*;

/// A xorshift64 generator from `seed`: the tests' columns, the same every run.
fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

fn round_trip(vals: &[f64]) -> usize {
    let mut b = Vec::new();
    encode_f64(vals, &mut b);
    let mut got = vec![0.0; vals.len()];
    decode_f64(&b, &mut got);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(vals), "mode {:#x}", b[0]);
    for (i, v) in vals.iter().enumerate() {
        assert_eq!(f64_at(&b, vals.len(), i).to_bits(), v.to_bits(), "value {i}, mode {:#x}", b[0]);
    }
    b.len()
}

#[test]
fn every_form_round_trips_bit_exactly() {
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    let constant = vec![42.0; BLOCK];
    assert!(round_trip(&constant) <= 12, "a constant column takes a header only");
    let mut total = 4_294_000_000.0f64;
    let totals: Vec<f64> = (0..BLOCK)
        .map(|_| {
            total = (total + (rnd() % 4096) as f64) % 4_294_967_296.0;
            total
        })
        .collect();
    // Steps below 4096, and one wrap: the delta form still packs.
    assert!(round_trip(&totals) < BLOCK * 5, "{}", round_trip(&totals));
    let noisy: Vec<f64> = (0..BLOCK).map(|_| 50.0 + 40.0 * (rnd() >> 11) as f64 / (1u64 << 53) as f64).collect();
    assert!(round_trip(&noisy) <= BLOCK * 7 + 12);
    let mostly_same: Vec<f64> = (0..BLOCK).map(|i| if i % 64 == 0 { 0.1 * i as f64 } else { 0.5 }).collect();
    assert!(round_trip(&mostly_same) < 100, "7 steps: runs, {}", round_trip(&mostly_same));
    // A frequency that steps once: a few bytes, not a packed column.
    let step: Vec<f64> = (0..BLOCK).map(|i| if i < 100 { 1200.0 } else { 1500.0 }).collect();
    assert!(round_trip(&step) <= 10, "{}", round_trip(&step));
    let mut b = Vec::new();
    encode_f64(&step, &mut b);
    assert_eq!(b[0], RUNS | INT);
    let odd = [f64::NAN, -0.0, 0.0, f64::INFINITY, -1e300, 5e-324, MAX_INT, -MAX_INT, 3.0];
    round_trip(&odd);
    round_trip(&[-MAX_INT, MAX_INT]);
    round_trip(&[1.0]);
    round_trip(&[]);
}

#[test]
fn ranges_from_integer_values_equal_those_from_their_words() {
    let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
    let mut columns: Vec<Vec<f64>> = vec![
        vec![7.0],
        vec![0.0, 0.0],
        vec![-5.0, 3.0, 3.0],
        vec![MAX_INT, -MAX_INT],
        vec![MAX_INT, 0.0, MAX_INT],
        vec![-MAX_INT, 0.0, MAX_INT],
        vec![ROUND_LIMIT - 1.0, -(ROUND_LIMIT - 1.0), 12.0, 12.0, 13.0],
        (0..BLOCK).map(|i| 1200.0 + if i > 100 { 300.0 } else { 0.0 }).collect(),
    ];
    for len in [2, 4, 5, 8, 9, 63, BLOCK] {
        for spread in [1u64, 3, 1 << 12, 1 << 32, 1 << 52] {
            columns.push((0..len).map(|_| (rnd() % spread) as f64 - (spread / 2) as f64).collect());
        }
        let mut total = 0.0;
        columns.push(
            (0..len)
                .map(|_| {
                    total = (total + (rnd() % 4096) as f64) % 4_294_967_296.0;
                    total
                })
                .collect(),
        );
    }
    for vals in &columns {
        let mut words = vec![0u64; vals.len()];
        assert!(integer_words(vals, &mut words), "{vals:?}");
        let want = word_ranges(&words, 1 << 63);
        match int_ranges(vals) {
            Some(got) => assert_eq!(got, want, "{vals:?}"),
            None => {
                let (lo, hi) =
                    (vals.iter().copied().fold(f64::MAX, f64::min), vals.iter().copied().fold(f64::MIN, f64::max));
                assert!(hi - lo > MAX_INT, "{vals:?} falls back only when it spans more than 2^53");
            }
        }
        round_trip(vals);
    }
}

/// The integer test value by value, as [`integer_words`] must decide it for a column.
fn integer_words_one_by_one(vals: &[f64]) -> Option<Vec<u64>> {
    vals.iter().map(|&v| as_integer(v)).map(|(ok, i)| ok.then_some(i as u64)).collect()
}

#[test]
fn integer_columns_are_recognised_exactly_at_every_edge() {
    let limit = ROUND_LIMIT;
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        limit - 1.0,
        limit,
        -limit,
        -(limit - 1.0),
        limit + 1.0,
        MAX_INT,
        -MAX_INT,
        MAX_INT + 2.0,
        -(MAX_INT + 2.0),
        4_503_599_627_370_495.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(0x7ff8_0000_0000_6d73),
        f64::from_bits(0xfff0_0000_0000_0001),
        5e-324,
        -5e-324,
        f64::MAX,
        4_294_967_295.0,
    ];
    // Each edge alone, inside a group of 8, in the remainder after the groups, and first.
    for &e in &edges {
        for (len, at) in [(1, 0), (8, 3), (16, 15), (13, 10), (BLOCK, 0), (BLOCK, 200), (BLOCK - 3, BLOCK - 4)] {
            let mut vals: Vec<f64> = (0..len).map(|i| (i as f64 * 37.0) - 1000.0).collect();
            vals[at] = e;
            let mut words = vec![0u64; len];
            let got = integer_words(&vals, &mut words).then_some(words);
            assert_eq!(got, integer_words_one_by_one(&vals), "{e:e} ({:#x}) at {at} of {len}", e.to_bits());
            round_trip(&vals);
        }
    }
    // Every edge together, and negative integers through the fast path.
    round_trip(&edges);
    let negative: Vec<f64> = (0..BLOCK).map(|i| -(limit - 1.0) + i as f64 * 3.0e12).collect();
    let mut words = vec![0u64; BLOCK];
    assert!(integer_words(&negative, &mut words));
    assert_eq!(Some(words), integer_words_one_by_one(&negative));
    round_trip(&negative);
}

#[test]
fn timestamps_round_trip_and_a_steady_clock_takes_no_bits() {
    let steady: Vec<i64> = (0..BLOCK as i64).map(|i| -5_000 + i * 1_000_000).collect();
    let mut b = Vec::new();
    encode_i64(&steady, &mut b);
    assert!(b.len() <= 22, "{}", b.len());
    // Up to 20 µs of jitter (none at the ends): steps spread over 40 µs (16 bits), the
    // residuals around the line over 20 µs (15 bits).
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    let jitter: Vec<i64> = (0..BLOCK as i64)
        .map(|i| {
            let x = rnd();
            let j = if i == 0 || i == BLOCK as i64 - 1 { 0 } else { (x % 20_000) as i64 };
            i64::MAX - 1_000_000_000 + i * 1_000_000 + j
        })
        .collect();
    let mut b = Vec::new();
    encode_i64(&jitter, &mut b);
    assert_eq!(b[0], LINE | INT, "a clock with jitter packs around its line");
    for ts in [&steady, &jitter] {
        let mut b = Vec::new();
        encode_i64(ts, &mut b);
        let mut got = vec![0; ts.len()];
        decode_i64(&b, &mut got);
        assert_eq!(&got, ts);
        assert_eq!(i64_at(&b, ts.len(), 100), ts[100]);
    }
}

#[test]
fn check_accepts_what_encode_writes_and_names_what_is_wrong() {
    let cols: [Vec<f64>; 5] = [
        vec![7.0; BLOCK],
        (0..BLOCK).map(|i| (i * i) as f64).collect(),
        (0..BLOCK).map(|i| (i as f64).sin()).collect(),
        (0..BLOCK).map(|i| if i % 64 == 0 { 0.1 * i as f64 } else { 0.5 }).collect(),
        // Powers of two: only the exponent changes, so XOR keeps 2 bytes of each value.
        (0..BLOCK).map(|i| 2f64.powi((i * 7 % 40) as i32 - 20)).collect(),
    ];
    let mut modes = Vec::new();
    for vals in &cols {
        let mut b = Vec::new();
        encode_f64(vals, &mut b);
        modes.push(b[0] & 3);
        assert_eq!(check(&b, vals.len()), Ok(()), "mode {:#x}", b[0]);
        assert!(check(&b[..b.len() - 1], vals.len()).is_err(), "short, mode {:#x}", b[0]);
        let mut long = b.clone();
        long.push(0);
        assert!(check(&long, vals.len()).is_err(), "long, mode {:#x}", b[0]);
        if b[0] & 3 != FOR || b[1] != 0 {
            assert!(check(&b, vals.len() + 9).is_err(), "more values than the bytes hold, mode {:#x}", b[0]);
        }
    }
    modes.sort();
    modes.dedup();
    assert_eq!(modes, [FOR, DELTA, XOR, RUNS], "every form checked");
    assert!(check(&[], 1).unwrap_err().contains("empty"));
    assert!(check(&[0x20], 1).unwrap_err().contains("mode"));
    assert!(check(&[RUNS, 2, 0, 1, 0, 1], 3).unwrap_err().contains("cover 2 of 3"));
    assert!(check(&[RUNS, 2, 0, 1, 5, 1], 3).unwrap_err().contains("past"));
    assert!(check(&[RUNS, 4, 0, 1, 0, 1], 3).unwrap_err().contains("4 runs"));
    assert!(check(&[RUNS, 1, 2, 1, 0], 3).unwrap_err().contains("left over"));
    assert_eq!(check(&[RUNS, 2, 0, 1, 1, 1], 3), Ok(()));
    assert!(check(&[FOR, 65, 0], 0).unwrap_err().contains("width"));
    assert!(check(&[DELTA, 8, 0x80], 2).is_err());
}

#[test]
fn one_delta_value_reads_as_the_whole_column_decodes_even_when_truncated() {
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut seen = 0;
    for bits in [1u32, 2, 5, 13, 31, 50, 55, 56, 57, 60, 63] {
        // Steady steps with noise of `bits` bits: the delta form wins.
        let mut w = 1u64 << 40;
        let words: Vec<u64> = (0..BLOCK)
            .map(|_| {
                w = w.wrapping_add(1_000_000 + (rnd() >> (64 - bits)));
                w
            })
            .collect();
        let mut b = Vec::new();
        encode_words(&words, true, false, &mut b);
        if b[0] & !INT != DELTA {
            continue;
        }
        seen += 1;
        for cut in [b.len(), b.len() - 1, b.len() - 9, b.len() / 2, 4] {
            let b = &b[..cut];
            let mut all = vec![0i64; BLOCK];
            decode_i64(b, &mut all);
            for (i, &want) in all.iter().enumerate() {
                assert_eq!(i64_at(b, BLOCK, i), want, "{bits} bits, {cut} bytes, value {i}");
            }
            assert_eq!(i64_at(b, 3, 5), missing().to_bits() as i64, "past the end");
        }
    }
    assert!(seen >= 8, "only {seen} delta columns");
}

#[test]
fn unknown_or_truncated_bytes_decode_as_missing_without_panicking() {
    let mut out = [0.0; 4];
    decode_f64(&[0x10], &mut out);
    assert!(out.iter().all(|v| crate::agg::is_missing(*v)));
    decode_f64(&[], &mut out);
    decode_f64(&[DELTA, 64, 0x80], &mut out);
    decode_f64(&[RUNS, 5, 1, 2], &mut out);
    assert!(crate::agg::is_missing(out[3]), "runs that end early leave the rest missing");
    let _ = f64_at(&[FOR, 64], 4, 3);
}

/// The encoding of `vals` (checked, and round-tripped bit for bit by [`round_trip`]).
fn encoded(vals: &[f64]) -> Vec<u8> {
    round_trip(vals);
    let mut b = Vec::new();
    encode_f64(vals, &mut b);
    assert_eq!(check(&b, vals.len()), Ok(()), "mode {:#x}", b[0]);
    b
}

#[test]
fn decimals_and_common_factors_pack_as_their_integers() {
    let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
    // A busy share of whole ns of a 10 µs report: n / 100 %, n in 0 ..= 10 000.
    let shares: Vec<f64> = (0..BLOCK).map(|_| (rnd() % 10_001) as f64 / 100.0).collect();
    let b = encoded(&shares);
    assert_eq!((b[0], b[1]), (SCALED, 2), "two decimals");
    assert!(b.len() <= 5 + BLOCK * 14 / 8 + 4, "{} bytes: 14 bits a share", b.len());
    // A streamer's rate: a count of 0 ..= 200 times 100 000 reports a second.
    let rates: Vec<f64> = (0..BLOCK).map(|_| ((rnd() % 201) * 100_000) as f64).collect();
    let b = encoded(&rates);
    assert_eq!(b[0], SCALED);
    assert!(b.len() <= 8 + BLOCK, "{} bytes: 8 bits a rate", b.len());
    let mut plain = Vec::new();
    let words: Vec<u64> = rates.iter().map(|&v| v as i64 as u64).collect();
    encode_words(&words, true, false, &mut plain);
    assert!(b.len() * 2 < plain.len(), "scaled {} bytes, plain {}", b.len(), plain.len());
    // Tenths of a degree, negative too, with a factor on top (steps of 0.5).
    let temps: Vec<f64> = (0..BLOCK).map(|_| ((rnd() % 400) as f64 - 200.0) * 5.0 / 10.0).collect();
    let b = encoded(&temps);
    assert_eq!((b[0], b[1]), (SCALED, 1));
    // A constant stays plain (a scaled header would only add bytes).
    assert_ne!(encoded(&vec![2_500_000.0; BLOCK])[0], SCALED);
}

#[test]
fn a_column_that_is_not_exactly_scaled_stays_plain_and_round_trips() {
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    let base: Vec<f64> = (0..BLOCK).map(|_| (rnd() % 10_001) as f64 / 100.0).collect();
    let odd = [
        f64::NAN,
        -0.0,
        f64::INFINITY,
        1e300,
        0.1 + 0.2,
        3.9800000000000004,
        1.0 / 3.0,
        1e-5,
        9_007_199_254_740_992.0,
        4_503_599_627_370_497.0,
    ];
    for (k, v) in odd.into_iter().enumerate() {
        for at in [0, 7, BLOCK - 1] {
            let mut vals = base.clone();
            vals[at] = v;
            let b = encoded(&vals);
            assert_ne!(b[0], SCALED, "{v} at {at} ({k})");
        }
    }
    // Multiples of 100 000 but one: plain integers.
    let mut rates: Vec<f64> = (0..BLOCK).map(|i| (i as u64 % 7 * 100_000) as f64).collect();
    rates[200] += 1.0;
    assert_eq!(encoded(&rates)[0] & !INT, FOR);
    // Large multiples near 2^53 round-trip whichever form they take.
    let big: Vec<f64> = (0..BLOCK).map(|i| (4_503_599_627_370_496 - 3 * i as i64) as f64).collect();
    encoded(&big);
    // Random decimals of every place and random factors.
    for p in POW10 {
        for _ in 0..50 {
            let f = 1 + rnd() % 1000;
            let vals: Vec<f64> =
                (0..BLOCK).map(|_| ((rnd() % 100_000) as i64 - 50_000) as f64 * f as f64 / p).collect();
            encoded(&vals);
        }
    }
}

#[test]
fn a_scaled_column_with_a_bad_header_is_refused_by_name_and_decodes_as_missing() {
    let shares: Vec<f64> = (0..BLOCK).map(|i| (i * 37 % 10_001) as f64 / 100.0).collect();
    let good = encoded(&shares);
    assert_eq!(good[0], SCALED);
    let mut bad_e = good.clone();
    bad_e[1] = MAX_DECIMALS + 1;
    let mut zero = vec![SCALED, 2, 0];
    zero.extend_from_slice(&good[3..]);
    let nested = [&[SCALED, 0, 1][..], &good[..]].concat();
    let mut float_inside = good.clone();
    float_inside[3] &= !INT;
    for (what, b) in [("decimals", bad_e), ("factor 0", zero), ("nested", nested), ("float inside", float_inside)] {
        let e = check(&b, shares.len()).unwrap_err();
        assert!(e.contains("scaled column: a bad header"), "{what}: {e}");
        let mut out = vec![0.0; shares.len()];
        decode_f64(&b, &mut out);
        assert!(out.iter().all(|v| crate::agg::is_missing(*v)), "{what}");
        assert!(crate::agg::is_missing(f64_at(&b, shares.len(), 9)), "{what}");
    }
    let e = check(&good[..good.len() - 1], shares.len()).unwrap_err();
    assert!(e.starts_with("scaled column: "), "{e}");
    let mut out = vec![0.0; 4];
    decode_f64(&[SCALED], &mut out);
    decode_f64(&[SCALED, 2], &mut out);
    decode_f64(&[SCALED, 2, 100, INT | DELTA, 64], &mut out);
    let _ = f64_at(&[SCALED, 2, 100, INT | FOR, 64], 4, 3);
}

#[test]
fn the_ranges_of_quotients_are_the_ranges_divided() {
    let mut rnd = xorshift(0x0123_4567_89AB_CDEF);
    for n in [1, 2, 3, 5, 17, BLOCK] {
        for f in [2i64, 7, 100_000, 6_250] {
            let q: Vec<i64> = (0..n).map(|_| (rnd() % 20_001) as i64 - 10_000).collect();
            let vals: Vec<f64> = q.iter().map(|&q| (q * f) as f64).collect();
            let mut words = vec![0u64; n];
            assert!(integer_words(&vals, &mut words));
            let ranges = int_ranges(&vals).unwrap();
            let mut ints = vals.clone();
            let mut q_words = vec![0u64; n];
            let g = common_factor(&mut ints, &mut q_words);
            assert!(vals.iter().zip(&ints).all(|(v, i)| (i * g as f64) == *v));
            let qw: Vec<u64> = ints.iter().map(|&i| i as i64 as u64).collect();
            assert_eq!(q_words, qw, "n {n}, factor {f}");
            assert_eq!(divided(ranges, g), word_ranges(&qw, 1 << 63), "n {n}, factor {f} (found {g})");
        }
    }
}

#[test]
fn ranges_found_with_the_line_or_the_xor_length_match_their_own_passes() {
    let mut rnd = xorshift(0xD1B5_4A32_D192_ED03);
    for n in [3, 4, 9, 100, BLOCK] {
        for _ in 0..200 {
            // Timestamps: steady, jittered, stepping back, across the sign and the i64 edges.
            let (start, step, jitter) = match rnd() % 4 {
                0 => (78_710_835_076_744i64, 10_000i64, 0u64),
                1 => (rnd() as i64 >> 2, (rnd() % 1_000_000) as i64, 1 + rnd() % 64),
                2 => (-(rnd() as i64 >> 3), -((rnd() % 5_000) as i64), 1 + rnd() % 1_000),
                _ => (i64::MAX - (rnd() % 1_000) as i64, (rnd() % 3) as i64, 1 + rnd() % 3),
            };
            let words: Vec<u64> = (0..n as i64)
                .map(|i| start.wrapping_add(i.wrapping_mul(step)).wrapping_add((rnd() % (jitter + 1)) as i64) as u64)
                .collect();
            assert_eq!(time_ranges(&words), (word_ranges(&words, 1 << 63), line_fit(&words)), "{words:?}");
            // Floats: noise, decimals, repeats, signs, NaN and the infinities.
            let floats: Vec<u64> = (0..n)
                .map(|_| match rnd() % 6 {
                    0 => f64::from_bits(rnd()).to_bits(),
                    1 => ((rnd() % 10_001) as f64 / 100.0).to_bits(),
                    2 => 2.5f64.to_bits(),
                    3 => (-((rnd() % 77) as f64) / 7.0).to_bits(),
                    4 => [f64::NAN, f64::INFINITY, -0.0][(rnd() % 3) as usize].to_bits(),
                    _ => (rnd() as f64 * 1e-9).to_bits(),
                })
                .collect();
            let want = (word_ranges(&floats, 0), 1 + xor::encoded_len(floats.iter().copied()));
            assert_eq!(float_ranges(&floats), want, "{floats:?}");
        }
    }
    assert_eq!(float_ranges(&[7]).1, 1 + xor::encoded_len([7u64].into_iter()));
}

/// The encoding of `vals` the general way: integer words, their ranges and plan, then for
/// integers the common factor found in passes of its own ([`common_factor`]: the check, then the
/// division) and for floats the decimals, as before integers took their quotients in the pass
/// that finds their words.
fn encoded_generally(vals: &[f64]) -> Vec<u8> {
    let mut words = vec![0u64; vals.len()];
    let mut b = Vec::new();
    let int = integer_words(vals, &mut words);
    let ranges = if int {
        int_ranges(vals).unwrap_or_else(|| word_ranges(&words, 1 << 63))
    } else {
        words = vals.iter().map(|v| v.to_bits()).collect();
        word_ranges(&words, 0)
    };
    let (form, len) = plan(&words, int, ranges, Found::default());
    let scaled = if int {
        let (mut ints, mut q) = (vals.to_vec(), vec![0u64; vals.len()]);
        let factor = common_factor(&mut ints, &mut q);
        factor > 1 && write_quotients(&q, factor, ranges, len, &mut b)
    } else {
        write_scaled(vals, len, &mut b)
    };
    if !scaled {
        write(&words, int, ranges, form, &mut b);
    }
    b
}

#[test]
fn integers_take_their_quotients_in_one_pass_with_the_same_bytes() {
    let mut rnd = xorshift(0x5851_F42D_4C95_7F2D);
    let mut columns: Vec<Vec<f64>> = Vec::new();
    for n in [1, 2, 7, 8, 9, 17, 100, BLOCK] {
        for f in [2u64, 3, 7, 6_250, 100_000, 1 << 40] {
            let q = |r: u64| (r % 401) as i64 - 200;
            columns.push((0..n).map(|_| (q(rnd()) * f as i64) as f64).collect());
            columns.push((0..n).map(|_| ((rnd() % 5) * f) as f64).collect());
            let mut zero_first: Vec<f64> = (0..n).map(|_| ((rnd() % 3) * f) as f64).collect();
            zero_first[0] = 0.0;
            columns.push(zero_first);
            // One value off the factor, at the start, in the groups of 8 and in their remainder.
            for at in [0, n / 2, n - 1] {
                let mut off: Vec<f64> = (0..n).map(|_| ((1 + rnd() % 9) * f) as f64).collect();
                off[at] += 1.0;
                columns.push(off);
            }
            // Beyond 2^51 (never scaled), a fraction and -0.0 among the multiples.
            for odd in [4_503_599_627_370_496.0, 2.0 * f as f64 + 0.5, -0.0] {
                let mut c: Vec<f64> = (0..n).map(|_| ((1 + rnd() % 9) * f) as f64).collect();
                c[n - 1] = odd;
                columns.push(c);
            }
        }
    }
    let mut scaled = 0;
    for vals in &columns {
        let b = encoded(vals);
        assert_eq!(b, encoded_generally(vals), "{vals:?}");
        scaled += usize::from(b[0] == SCALED);
    }
    // A third are whole columns of multiples; the shortest of them stay plain.
    assert!(scaled >= columns.len() / 4, "{scaled} of {} columns scaled", columns.len());
}

#[test]
fn unscaled_encoding_never_writes_the_scaled_form_and_round_trips() {
    let shares: Vec<f64> = (0..BLOCK).map(|i| (i * 37 % 10_001) as f64 / 100.0).collect();
    let rates: Vec<f64> = (0..BLOCK).map(|i| (i % 9 * 100_000) as f64).collect();
    for vals in [shares, rates] {
        let mut b = Vec::new();
        encode_f64_unscaled(&vals, &mut b);
        assert_ne!(b[0], SCALED);
        let mut got = vec![0.0; vals.len()];
        decode_f64(&b, &mut got);
        assert_eq!(got, vals);
        assert_eq!(encoded(&vals)[0], SCALED, "the same values scale where allowed");
    }
}

#[test]
fn the_binary_gcd_is_euclids() {
    let euclid = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let x = rnd();
        let (a, b) = (x >> (x % 40), (x.rotate_left(17) >> (x % 23)) << (x % 5));
        assert_eq!(gcd(a, b), euclid(a, b), "{a} {b}");
    }
    for (a, b, g) in [
        (0, 0, 0),
        (0, 7, 7),
        (12, 0, 12),
        (100_000, 6_250, 6_250),
        (100_000, 6_000, 2_000),
        (1 << 40, 1 << 12, 1 << 12),
    ] {
        assert_eq!(gcd(a, b), g);
    }
}
