//! Fuzz the layout loader and the decoder built from what it accepts. The input is a layout
//! file's text, optionally followed by a NUL byte and a buffer snapshot to decode (4 KiB of
//! zeros without one). Any input must give layouts or a named error, and decoding must stay in
//! bounds: never a panic.

use zescope::layout::decode::MetricDesc;
use zescope::layout::{Decoder, LayoutSet, Target};

fn metrics() -> Vec<MetricDesc> {
    ["GpuTime", "GpuBusyCycles", "GpuFrequency", "GpuUtilization", "GpuPower", "a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, n)| MetricDesc {
            name: n.to_string(),
            description: String::new(),
            unit: "u".into(),
            value_type: if i % 2 == 0 {
                level_zero_sys::ZET_VALUE_TYPE_UINT64
            } else {
                level_zero_sys::ZET_VALUE_TYPE_FLOAT64
            },
            metric_type: if i % 2 == 0 {
                level_zero_sys::ZET_METRIC_TYPE_EVENT
            } else {
                level_zero_sys::ZET_METRIC_TYPE_RATIO
            },
        })
        .collect()
}

fn main() {
    let metrics = metrics();
    afl::fuzz!(|data: &[u8]| {
        let (text, snapshot) = match data.iter().position(|&b| b == 0) {
            Some(i) => (&data[..i], data[i + 1..].to_vec()),
            None => (data, vec![0u8; 4096]),
        };
        let Ok(text) = std::str::from_utf8(text) else { return };
        let mut set = LayoutSet::default();
        if set.add_file("fuzz.ron", text).is_err() {
            return;
        }
        for simulated in [true, false] {
            let t = Target { simulated, driver_uuid: "", device: "d", group: "ComputeBasic" };
            let Some(layout) = set.select(&t) else { continue };
            let Ok(decoder) = Decoder::new(layout, "ComputeBasic", &metrics, snapshot.len()) else { continue };
            let _ = decoder.check_magic(&snapshot);
            let mut out = vec![0.0; decoder.fields.len()];
            let _ = decoder.decode(&snapshot, &mut out);
        }
    });
}
