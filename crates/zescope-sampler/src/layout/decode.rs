//! A layout applied to one exported buffer: every field's offset checked against the buffer's
//! `size` once, then decoding a snapshot of the first `span` bytes into `f64` values.

use super::{Counters, Kind, Layout, Timestamp, ValueType};

/// A metric as the driver describes it (what `MetricOrder` layouts derive counters from).
#[derive(Clone, Debug)]
pub struct MetricDesc {
    /// Name the driver reports (what `Counter::metric` names).
    pub name: String,
    /// The driver's description.
    pub description: String,
    /// The driver's unit text.
    pub unit: String,
    /// `zet_value_type_t` of the metric's results.
    pub value_type: u32,
    /// `zet_metric_type_t`: with the unit, what kind of counter it is (`kinds::exported_kind`).
    pub metric_type: u32,
}

/// One counter as the decoder reads it: where, how wide, and how to scale it.
#[derive(Clone, Debug, PartialEq)]
pub struct DecoderField {
    /// The metric's name.
    pub name: String,
    /// The driver's description of the metric.
    pub description: String,
    /// Unit of the scaled value.
    pub unit: String,
    /// Cumulative, gauge, busy time or state.
    pub kind: Kind,
    /// How the bytes at `offset` are read (little-endian).
    pub value: ValueType,
    /// Byte offset in the buffer; `offset + value.width()` is within the buffer (checked by
    /// `Decoder::new`).
    pub offset: usize,
    /// Multiplies the raw value.
    pub scale: f64,
}

/// Why a layout cannot decode a buffer. Every message names the layout and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayoutError {
    /// A field reads past the end of the buffer.
    #[error(
        "layout {layout:?}: {field} at offset {offset} ({width} bytes) does not fit the exported buffer of {size} bytes"
    )]
    DoesNotFit {
        /// The layout's name.
        layout: String,
        /// The field (counter, magic, seqlock or timestamp).
        field: String,
        /// Its byte offset.
        offset: usize,
        /// Bytes it reads.
        width: usize,
        /// The buffer's size in bytes.
        size: usize,
    },
    /// A counter names a metric the group does not have.
    #[error("layout {layout:?}: counter {metric:?} is not a metric of group {group:?}")]
    UnknownMetric {
        /// The layout's name.
        layout: String,
        /// The metric the counter names.
        metric: String,
        /// The group's name.
        group: String,
    },
    /// A `MetricOrder` layout meets a metric whose result type it cannot read.
    #[error("layout {layout:?}: metric {metric:?} has result type {value_type}, which the layout cannot decode")]
    UnsupportedValueType {
        /// The layout's name.
        layout: String,
        /// The metric's name.
        metric: String,
        /// Its `zet_value_type_t`.
        value_type: u32,
    },
    /// The seqlock word is not 8-byte aligned (it could not be read atomically).
    #[error("layout {layout:?}: the seqlock word at offset {offset} is not 8-byte aligned")]
    MisalignedSeqlock {
        /// The layout's name.
        layout: String,
        /// The word's byte offset.
        offset: usize,
    },
    /// The buffer does not hold the layout's magic word.
    #[error(
        "layout {layout:?}: magic at offset {offset} is {found:#x}, expected {expected:#x}: this memory is not in the layout's format"
    )]
    MagicMismatch {
        /// The layout's name.
        layout: String,
        /// The magic's byte offset.
        offset: usize,
        /// What the layout says is there.
        expected: u32,
        /// What the buffer holds.
        found: u32,
    },
    /// The metric selection left no counter to read.
    #[error("layout {layout:?}: no counter is left after selecting metrics")]
    NoCounters {
        /// The layout's name.
        layout: String,
    },
}

/// A layout checked against one buffer: every offset it reads fits the buffer's size.
#[derive(Clone, Debug)]
pub struct Decoder {
    /// The layout's name, for messages.
    pub layout: String,
    /// The magic word to check before trusting the buffer, if the layout has one.
    pub magic: Option<super::Magic>,
    /// Byte offset of the u64 seqlock word (8-byte aligned), if the layout has one.
    pub seqlock: Option<usize>,
    /// Where the device timestamp is, if the layout has one.
    pub timestamp: Option<Timestamp>,
    /// The counters, in the order of each sample's values.
    pub fields: Vec<DecoderField>,
    /// Bytes a snapshot must hold: the end of the last byte any field reads.
    pub span: usize,
}

fn value_type_of(zet: u32) -> Option<ValueType> {
    use level_zero_sys::*;
    match zet {
        ZET_VALUE_TYPE_UINT32 => Some(ValueType::U32),
        ZET_VALUE_TYPE_UINT64 => Some(ValueType::U64),
        ZET_VALUE_TYPE_FLOAT32 => Some(ValueType::F32),
        ZET_VALUE_TYPE_FLOAT64 => Some(ValueType::F64),
        // A bool8 is one byte, 0 or 1.
        ZET_VALUE_TYPE_BOOL8 => Some(ValueType::U8),
        6 => Some(ValueType::U8),
        7 => Some(ValueType::U16),
        _ => None,
    }
}

impl Decoder {
    /// Applies `layout` to a buffer of `size` bytes exported by `group` with `metrics`.
    pub fn new(layout: &Layout, group: &str, metrics: &[MetricDesc], size: usize) -> Result<Decoder, LayoutError> {
        let name = layout.name.clone();
        // By name, the first of a name (as a scan would find): one look-up per counter, however
        // many counters the layout file lists.
        let mut by_name = std::collections::HashMap::with_capacity(metrics.len());
        for m in metrics {
            by_name.entry(m.name.as_str()).or_insert(m);
        }
        let fields: Vec<DecoderField> = match &layout.counters {
            Counters::Explicit(cs) => cs
                .iter()
                .map(|c| {
                    let m = by_name.get(c.metric.as_str()).ok_or_else(|| LayoutError::UnknownMetric {
                        layout: name.clone(),
                        metric: c.metric.clone(),
                        group: group.to_owned(),
                    })?;
                    Ok(DecoderField {
                        name: c.metric.clone(),
                        description: m.description.clone(),
                        unit: c.unit.clone(),
                        kind: c.kind,
                        value: c.value,
                        offset: c.offset,
                        scale: c.scale,
                    })
                })
                .collect::<Result<_, LayoutError>>()?,
            Counters::MetricOrder { first, stride } => metrics
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    // A timestamp metric is time, not a counter to plot.
                    let kind = super::kinds::exported_kind(m.metric_type, &m.unit)?;
                    let field = value_type_of(m.value_type)
                        .ok_or_else(|| LayoutError::UnsupportedValueType {
                            layout: name.clone(),
                            metric: m.name.clone(),
                            value_type: m.value_type,
                        })
                        .map(|value| DecoderField {
                            name: m.name.clone(),
                            description: m.description.clone(),
                            unit: match kind {
                                Kind::Busy => m.unit.clone(),
                                _ => super::kinds::plain_unit(&m.unit),
                            },
                            kind,
                            value,
                            offset: first.saturating_add(i.saturating_mul(*stride)),
                            scale: 1.0,
                        });
                    Some(field)
                })
                .collect::<Result<_, LayoutError>>()?,
        };
        let fits = |field: String, offset: usize, width: usize| -> Result<usize, LayoutError> {
            match offset.checked_add(width) {
                Some(end) if end <= size => Ok(end),
                _ => Err(LayoutError::DoesNotFit { layout: name.clone(), field, offset, width, size }),
            }
        };
        let mut span = 0;
        if let Some(m) = layout.magic {
            span = span.max(fits("magic".into(), m.offset, 4)?);
        }
        if let Some(s) = layout.seqlock {
            if s % 8 != 0 {
                return Err(LayoutError::MisalignedSeqlock { layout: name, offset: s });
            }
            span = span.max(fits("seqlock".into(), s, 8)?);
        }
        if let Some(t) = layout.timestamp {
            span = span.max(fits("timestamp".into(), t.offset, 8)?);
        }
        for f in &fields {
            span = span.max(fits(format!("counter {:?}", f.name), f.offset, f.value.width())?);
        }
        Ok(Decoder {
            layout: name,
            magic: layout.magic,
            seqlock: layout.seqlock,
            timestamp: layout.timestamp,
            fields,
            span,
        })
    }

    /// Keeps only the named counters (all when `names` is empty), in the order given.
    pub fn select(&mut self, names: &[String]) -> Result<(), LayoutError> {
        if names.is_empty() {
            return Ok(());
        }
        let mut kept = Vec::new();
        let mut by_name = std::collections::HashMap::with_capacity(self.fields.len());
        for f in &self.fields {
            by_name.entry(f.name.as_str()).or_insert(f);
        }
        for n in names {
            match by_name.get(n.as_str()) {
                Some(f) => kept.push((*f).clone()),
                None => {
                    return Err(LayoutError::UnknownMetric {
                        layout: self.layout.clone(),
                        metric: n.clone(),
                        group: String::new(),
                    });
                }
            }
        }
        if kept.is_empty() {
            return Err(LayoutError::NoCounters { layout: self.layout.clone() });
        }
        self.fields = kept;
        Ok(())
    }

    /// Checks the magic (if the layout has one) in a snapshot.
    pub fn check_magic(&self, snapshot: &[u8]) -> Result<(), LayoutError> {
        let Some(m) = self.magic else { return Ok(()) };
        let found = read(snapshot, m.offset, ValueType::U32).map(|v| v as u32).unwrap_or(0);
        if found != m.value {
            return Err(LayoutError::MagicMismatch {
                layout: self.layout.clone(),
                offset: m.offset,
                expected: m.value,
                found,
            });
        }
        Ok(())
    }

    /// Decodes a snapshot (at least `span` bytes) into `out` (one slot per field). Returns the
    /// raw device timestamp in timer ticks (masked to the layout's valid bits), if the layout has
    /// one; `sampler::clock` maps it onto the host's timeline. A short snapshot yields NaN values
    /// and no timestamp rather than reading out of bounds.
    pub fn decode(&self, snapshot: &[u8], out: &mut [f64]) -> Option<u64> {
        for (f, o) in self.fields.iter().zip(out.iter_mut()) {
            *o = match read_raw(snapshot, f.offset, f.value) {
                Some(v) => v * f.scale,
                None => f64::NAN,
            };
        }
        let t = self.timestamp?;
        Some(read_u64(snapshot, t.offset)? & t.mask())
    }
}

fn bytes<const N: usize>(s: &[u8], offset: usize) -> Option<[u8; N]> {
    s.get(offset..offset.checked_add(N)?)?.try_into().ok()
}

fn read_u64(s: &[u8], offset: usize) -> Option<u64> {
    bytes::<8>(s, offset).map(u64::from_le_bytes)
}

fn read(s: &[u8], offset: usize, ty: ValueType) -> Option<f64> {
    read_raw(s, offset, ty)
}

/// One little-endian value as f64 (u64 above 2^53 loses low bits, as any f64 would).
fn read_raw(s: &[u8], offset: usize, ty: ValueType) -> Option<f64> {
    Some(match ty {
        ValueType::U8 => *s.get(offset)? as f64,
        ValueType::U16 => u16::from_le_bytes(bytes(s, offset)?) as f64,
        ValueType::U32 => u32::from_le_bytes(bytes(s, offset)?) as f64,
        ValueType::U64 => u64::from_le_bytes(bytes(s, offset)?) as f64,
        ValueType::I32 => i32::from_le_bytes(bytes(s, offset)?) as f64,
        ValueType::I64 => i64::from_le_bytes(bytes(s, offset)?) as f64,
        ValueType::F32 => f32::from_le_bytes(bytes(s, offset)?) as f64,
        ValueType::F64 => f64::from_le_bytes(bytes(s, offset)?),
    })
}
