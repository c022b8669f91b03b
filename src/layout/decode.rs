//! A layout applied to one exported buffer: every field's offset checked against the buffer's
//! `size` once, then decoding a snapshot of the first `span` bytes into `f64` values.

use super::{Counters, Kind, Layout, Timestamp, ValueType};

/// A metric as the driver describes it (what `MetricOrder` layouts derive counters from).
#[derive(Clone, Debug)]
pub struct MetricDesc {
    pub name: String,
    pub description: String,
    pub unit: String,
    /// `zet_value_type_t` of the metric's results.
    pub value_type: u32,
    /// EVENT/DURATION metrics count up.
    pub cumulative: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DecoderField {
    pub name: String,
    pub description: String,
    pub unit: String,
    pub kind: Kind,
    pub value: ValueType,
    pub offset: usize,
    pub scale: f64,
}

/// Why a layout cannot decode a buffer. Every message names the layout and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "layout {layout:?}: {field} at offset {offset} ({width} bytes) does not fit the exported buffer of {size} bytes"
    )]
    DoesNotFit { layout: String, field: String, offset: usize, width: usize, size: usize },
    #[error("layout {layout:?}: counter {metric:?} is not a metric of group {group:?}")]
    UnknownMetric { layout: String, metric: String, group: String },
    #[error("layout {layout:?}: metric {metric:?} has result type {value_type}, which the layout cannot decode")]
    UnsupportedValueType { layout: String, metric: String, value_type: u32 },
    #[error("layout {layout:?}: the seqlock word at offset {offset} is not 8-byte aligned")]
    MisalignedSeqlock { layout: String, offset: usize },
    #[error(
        "layout {layout:?}: magic at offset {offset} is {found:#x}, expected {expected:#x}: this memory is not in the layout's format"
    )]
    MagicMismatch { layout: String, offset: usize, expected: u32, found: u32 },
    #[error("layout {layout:?}: no counter is left after selecting metrics")]
    NoCounters { layout: String },
}

#[derive(Clone, Debug)]
pub struct Decoder {
    pub layout: String,
    pub magic: Option<super::Magic>,
    pub seqlock: Option<usize>,
    pub timestamp: Option<Timestamp>,
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
        6 => Some(ValueType::U8),
        7 => Some(ValueType::U16),
        _ => None,
    }
}

impl Decoder {
    /// Applies `layout` to a buffer of `size` bytes exported by `group` with `metrics`.
    pub fn new(layout: &Layout, group: &str, metrics: &[MetricDesc], size: usize) -> Result<Decoder, LayoutError> {
        let name = layout.name.clone();
        let fields: Vec<DecoderField> = match &layout.counters {
            Counters::Explicit(cs) => cs
                .iter()
                .map(|c| {
                    let m = metrics.iter().find(|m| m.name == c.metric).ok_or_else(|| LayoutError::UnknownMetric {
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
                .map(|(i, m)| {
                    let value = value_type_of(m.value_type).ok_or_else(|| LayoutError::UnsupportedValueType {
                        layout: name.clone(),
                        metric: m.name.clone(),
                        value_type: m.value_type,
                    })?;
                    Ok(DecoderField {
                        name: m.name.clone(),
                        description: m.description.clone(),
                        unit: m.unit.clone(),
                        kind: if m.cumulative { Kind::Cumulative } else { Kind::Gauge },
                        value,
                        offset: first.saturating_add(i.saturating_mul(*stride)),
                        scale: 1.0,
                    })
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
        for n in names {
            match self.fields.iter().find(|f| &f.name == n) {
                Some(f) => kept.push(f.clone()),
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
