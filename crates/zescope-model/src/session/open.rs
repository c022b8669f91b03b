//! Opening a session of any size the format allows, into a store that keeps its own memory cap.
//!
//! [`open_into`] reads the file as the window's progressive open does ([`LoadJob`]: the head,
//! then the samples a chunk at a time, in time order) and moves each chunk into the caller's
//! store as it comes, so what it holds at once is the file, its head and a few pieces in flight
//! besides the store. The store's cap is the whole open's: while the file is held, the store
//! keeps the cap less what the file and its head take ([`LoadHead::held`]), so the open holds
//! at most the cap and the pieces in flight ([`IN_FLIGHT_BYTES`]). A file whose head leaves less
//! than [`MIN_STORE`] of the cap is still opened (a session past the cap is summarised, never
//! refused for its size), into a store of [`MIN_STORE`]: then the open holds the file and head
//! past the cap. Where the samples outgrow the store's cap, the store coarsens the oldest
//! history as it does for a live run (`zescope_store::cap`), and [`Opened::notice`] says what was
//! coarsened from when. `zescope export` and *Compare with…* open sessions this way.
//!
//! [`super::load_with_cap`] (a [`Session`] in memory, every sample an `f64`) goes this way too
//! for a file whose samples would decode past its cap: it then holds the store's share and
//! coarsens until the decoded samples fit ([`within_decoded`]).

use std::path::Path;
use std::time::Duration;

use zescope_store::{Store, StreamId};

use super::capture::Restored;
#[cfg(doc)]
use super::load_job::{IN_FLIGHT_BYTES, LoadHead};
use super::load_job::{LoadEvent, LoadJob, MIN_STORE};
use super::{Session, SessionError};
use crate::view::TimeAxis;

/// A session opened into a store.
#[derive(Debug)]
pub struct Opened {
    /// The session without its raw samples: its metadata, view, markers and the coarse history
    /// it was saved with.
    pub head: Session,
    /// What the store holds of it, and the UI state that goes with it.
    pub restored: Restored,
    /// What the store's cap did to the history, for the user ("history before 0:42:10 is at
    /// 256 ms resolution: …"); `None` when every sample is held as saved.
    pub notice: Option<String>,
    /// Per stream: the raw samples and evicted samples the file holds (what a notice compares
    /// the store's with).
    pub(super) expected: Vec<(u64, u64)>,
}

/// Opens the session at `path` into `store` (a fresh store: its streams are then exactly the
/// session's); see the module docs. The error names the file's problem; on an error the
/// streams already moved into `store` stay there.
pub fn open_into(path: &Path, store: &mut Store) -> Result<Opened, SessionError> {
    let cap = store.memory_cap();
    let result = open_within(path, store);
    // The file is let go: the store may have its whole cap again.
    store.set_memory_cap(cap);
    let mut opened = result?;
    opened.notice = notice(store, &opened.restored.streams, &opened.expected);
    Ok(opened)
}

/// [`open_into`] with the store's cap lowered, while the file is held, by what the open holds.
fn open_within(path: &Path, store: &mut Store) -> Result<Opened, SessionError> {
    let cap = store.memory_cap();
    let mut job = LoadJob::spawn(path.to_path_buf());
    let mut got: Option<(Session, Restored, Vec<bool>)> = None;
    let mut expected = Vec::new();
    loop {
        let Some(event) = job.next(Duration::from_secs(60)) else {
            if job.is_over() {
                break;
            }
            continue;
        };
        match event {
            LoadEvent::Head(head) => {
                let head = *head;
                let held = usize::try_from(head.held).unwrap_or(usize::MAX);
                store.set_memory_cap(cap.saturating_sub(held).max(MIN_STORE as usize).min(cap));
                if store.origin_ns().is_none()
                    && let Some(t) = head.origin_ns
                {
                    store.set_origin(t);
                }
                let restored = head.session.restore_into(store)?;
                let evicted = head.session.streams.iter().map(|s| s.data.evicted_samples);
                expected = head.samples.iter().copied().zip(evicted).collect();
                got = Some((head.session, restored, head.ended));
            }
            LoadEvent::Piece(p) => {
                let Some((_, restored, ended)) = &got else { continue };
                let Some(&id) = restored.streams.get(p.stream) else { continue };
                store
                    .restore_more(id, &p.raw, p.first)
                    .map_err(|e| SessionError::invalid(format!("streams[{}]", p.stream), e.to_string()))?;
                if p.last && ended.get(p.stream).copied().unwrap_or(false) {
                    store.end_stream(id);
                }
            }
            LoadEvent::Done => break,
            LoadEvent::Failed(e) => return Err(e),
        }
    }
    let (head, restored, _) = got.ok_or_else(|| SessionError::invalid("file", "the open ended before its head"))?;
    Ok(Opened { head, restored, notice: None, expected })
}

/// What the cap did to `streams` (of `store`) beyond what the file held coarsened already
/// (`expected`: per stream, the raw and evicted samples of the file).
pub(super) fn notice(store: &Store, streams: &[StreamId], expected: &[(u64, u64)]) -> Option<String> {
    let mut from: Option<i64> = None;
    let mut evicted = 0u64;
    let mut coarsest = 1u64;
    for (id, &(raw, gone)) in streams.iter().zip(expected) {
        let Some(r) = store.retention(*id) else { continue };
        evicted += r.evicted_samples.saturating_sub(gone);
        let held: u64 = r.spans.iter().filter(|s| s.level == 0).map(|s| s.samples).sum();
        if held < raw
            && let Some(t) = r.coarsened_before().or_else(|| r.spans.last().map(|s| s.t_last))
        {
            from = Some(from.map_or(t, |f: i64| f.max(t)));
            coarsest = coarsest.max(r.spans.iter().map(|s| s.samples_per_bucket).max().unwrap_or(1));
        }
    }
    if from.is_none() && evicted == 0 {
        return None;
    }
    let cap = crate::view::format::bytes(store.memory_cap());
    let mut said = format!("the session holds more than the memory cap of {cap} keeps at full resolution");
    if let Some(t) = from {
        let at = crate::view::format::time_label(TimeAxis::of(store).x(t));
        said += &format!(": history before {at} is summarised (up to {coarsest} samples a bucket, min/max/mean kept)");
    }
    if evicted > 0 {
        said += &format!("; the oldest {evicted} samples are not held");
    }
    Some(said)
}

/// Coarsens the oldest history of `store` until its samples, decoded as a [`Session`] holds
/// them (an `f64` per value and an `i64` per timestamp), take at most `budget` bytes, or
/// nothing more can be coarsened. Returns whether it coarsened anything.
pub(super) fn within_decoded(store: &mut Store, budget: u64) -> bool {
    let mut coarsened = false;
    while decoded_bytes(store) > budget {
        if !store.coarsen_oldest() {
            break;
        }
        coarsened = true;
    }
    coarsened
}

/// What `store`'s samples and buckets take decoded, as [`super::convert`] counts them.
fn decoded_bytes(store: &Store) -> u64 {
    store
        .streams()
        .map(|s| {
            let n = s.desc.series.len();
            let r = store.retention(s.id);
            let (raw, buckets) = r.map_or((0, 0), |r| {
                r.spans.iter().fold((0u64, 0u64), |(raw, b), sp| {
                    if sp.level == 0 { (raw + sp.buckets, b) } else { (raw, b + sp.buckets) }
                })
            });
            super::convert::decoded_bytes(raw, n).saturating_add(super::convert::coarse_bytes(buckets, n))
        })
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests;
