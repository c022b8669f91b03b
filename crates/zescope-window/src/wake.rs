//! What the window's data wakes it for. The sampler (or a remote link) calls its
//! [`Waker`](zescope_sampler::Waker) as it delivers events, about every 16 ms in a run (the
//! sampler's batch period); [`Wake`] decides from two values the frame leaves behind whether that
//! delivery paints a frame now:
//! - events other than samples and health (a run started, an error) always do;
//! - a live view with nothing to show yet paints as its first data arrives;
//! - a live view paints as data arrives once its next frame is nearly due
//!   (`repaint::MEET_DATA` of its period early at most): its frames
//!   follow the deliveries instead of a timer of their own, so a sample waits for the next frame
//!   after it arrives at most one delivery period, not a whole frame period. Without data the
//!   frame's own timer paints it (at the period, or
//!   `repaint::DATA_SLACK` later when the last frame had data).
//!
//! Everything else (a frozen view, no run) is not woken by data.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

/// Shared between the window's frames and the thread that delivers its data.
#[derive(Clone, Debug, Default)]
pub struct Wake(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    /// A live view shows nothing yet.
    first_data: AtomicBool,
    /// When (CLOCK_MONOTONIC ns) data may paint the next frame; 0: never.
    frame_at: AtomicI64,
    /// When data last asked for a frame (CLOCK_MONOTONIC ns; 0: never).
    woke: AtomicI64,
    /// When the last live frame began (CLOCK_MONOTONIC ns).
    began: AtomicI64,
}

impl Wake {
    /// The waker to hand the sampler (`Options::waker`) or the remote link: asks `ctx` for a
    /// frame when [`Wake::wanted`].
    pub fn waker(&self, ctx: egui::Context) -> zescope_sampler::Waker {
        let wake = self.clone();
        Arc::new(move |only_data| {
            if !only_data {
                ctx.request_repaint();
            } else if wake.wanted(true) {
                wake.0.woke.store(zescope_sampler::monotonic_ns(), Ordering::Relaxed);
                // One frame: egui's `request_repaint` paints two (to let layouts settle), which
                // would double a live view's frames.
                ctx.request_repaint_after(Duration::from_nanos(1));
            }
        })
    }

    /// Whether a delivery (`only_data`: only samples and health) should paint a frame now.
    pub fn wanted(&self, only_data: bool) -> bool {
        if !only_data || self.0.first_data.load(Ordering::Relaxed) {
            return true;
        }
        let at = self.0.frame_at.load(Ordering::Relaxed);
        at != 0 && zescope_sampler::monotonic_ns() >= at
    }

    /// When the live frame that began at `started` (CLOCK_MONOTONIC ns) counts its period from:
    /// the delivery that asked for it (one since the last live frame began), else its start.
    /// Counted from the delivery, the frame after comes with the delivery one frame period later
    /// however late this frame began (a busy thread), instead of missing it for the next.
    pub(crate) fn frame_base(&self, started: i64) -> i64 {
        let woke = self.0.woke.load(Ordering::Relaxed);
        let before = self.0.began.swap(started, Ordering::Relaxed);
        if woke > before && woke <= started { woke } else { started }
    }

    /// Set by each frame: whether a live view waits for its first data, and from when (CLOCK_MONOTONIC
    /// ns) data may paint the next frame.
    pub(crate) fn set(&self, first_data: bool, frame_at: Option<i64>) {
        self.0.first_data.store(first_data, Ordering::Relaxed);
        self.0.frame_at.store(frame_at.unwrap_or(0).max(0), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_wakes_a_live_view_only_once_its_frame_is_nearly_due() {
        let w = Wake::default();
        assert!(!w.wanted(true), "nothing asked: data does not wake");
        assert!(w.wanted(false), "other events always do");
        w.set(true, None);
        assert!(w.wanted(true), "the first data of a live view does");
        let now = zescope_sampler::monotonic_ns();
        w.set(false, Some(now + 60_000_000_000));
        assert!(!w.wanted(true), "not before the frame is nearly due");
        w.set(false, Some(now));
        assert!(w.wanted(true));
        let ctx = egui::Context::default();
        let asked = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&asked);
        ctx.set_request_repaint_callback(move |_| seen.store(true, Ordering::Relaxed));
        (w.waker(ctx))(true);
        assert!(asked.load(Ordering::Relaxed), "the waker asks the context for a frame");
        // The frame it asked for counts its period from the delivery, not from its own start.
        let woke = w.0.woke.load(Ordering::Relaxed);
        assert!(woke >= now);
        assert_eq!(w.frame_base(woke + 3_000_000), woke, "begun 3 ms after the delivery");
        assert_eq!(w.frame_base(woke + 40_000_000), woke + 40_000_000, "the next frame: not asked by data");
    }
}
