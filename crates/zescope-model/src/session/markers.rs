//! Markers between the view's list ([`Markers`]) and the file's ([`Marker`]).

use crate::view::{Mark, Markers, Span};

use super::format::{Marker, SpanRecord};

/// The file's form of `markers`, in the order they were set.
pub fn markers_to_file(markers: &Markers) -> Vec<Marker> {
    markers
        .marks()
        .iter()
        .map(|m| Marker {
            t_ns: m.t_ns,
            label: m.label.clone(),
            span: match m.span {
                Span::Instant => SpanRecord::Instant,
                Span::Range { end_ns } => SpanRecord::Range { end_ns },
                Span::Open => SpanRecord::Open,
            },
        })
        .collect()
}

/// The view's list of saved `markers` (open ranges open again, to be ended by a later `end`).
pub fn markers_from_file(markers: &[Marker]) -> Markers {
    Markers::from_marks(markers.iter().map(|m| Mark {
        t_ns: m.t_ns,
        label: m.label.clone(),
        span: match m.span {
            SpanRecord::Instant => Span::Instant,
            SpanRecord::Range { end_ns } => Span::Range { end_ns },
            SpanRecord::Open => Span::Open,
        },
    }))
}
