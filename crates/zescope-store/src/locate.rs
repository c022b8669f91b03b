//! Finding positions in a stream by time, in O(F · levels + log BLOCK).
//!
//! Queries work on sample *ordinals* (a sample's position in its stream,
//! stable across coarsening and eviction). These two descents turn a time into
//! an ordinal: from the coarsest level down, binary-search the nodes of the
//! current parent, and descend while the finer level still holds the children.
//! Where only coarsened history remains the answer snaps outward to a whole
//! bucket, which is the finest truth the store still has.

use super::column::Block;
use super::pyramid::{FANOUT, Pyramid};
use super::stream::StreamStore;

/// One node range at one level, the state of a descent.
struct Cursor {
    l: usize,
    lo: u64,
    hi: u64,
}

impl StreamStore {
    fn root(&self) -> Option<Cursor> {
        let l = self.pyramid.top();
        let level = self.pyramid.levels.last()?;
        (!level.meta.is_empty()).then(|| Cursor { l, lo: level.meta.start(), hi: level.meta.end() })
    }

    /// Children of node `m` of level `l`, if the finer level still holds
    /// all of its data.
    #[inline]
    pub(crate) fn children(&self, l: usize, m: u64) -> Option<(u64, u64)> {
        children_of(&self.pyramid, l, m)
    }

    /// First ordinal of the first (finest available) item whose time span
    /// ends at or after `t`; the end of the data if there is none.
    pub(crate) fn ord_start(&self, t: i64) -> u64 {
        let Some(mut c) = self.root() else {
            return self.total;
        };
        loop {
            let meta = &self.pyramid.level(c.l).meta;
            let m = meta.partition_point(c.lo, c.hi, |x| x.t_last < t);
            if m == c.hi {
                let last = meta.at(c.hi - 1);
                return last.first_ordinal + last.samples;
            }
            let node = meta.at(m);
            if node.t_first >= t {
                return node.first_ordinal;
            }
            if c.l == 1 {
                return match self.block(m) {
                    Some(blk) => blk.first_ordinal + blk.partition_point(t) as u64,
                    None => node.first_ordinal,
                };
            }
            match self.children(c.l, m) {
                Some((lo, hi)) => c = Cursor { l: c.l - 1, lo, hi },
                None => return node.first_ordinal,
            }
        }
    }

    /// One past the ordinal of the last (finest available) item whose time
    /// span starts at or before `t`; the start of the data if there is none.
    pub(crate) fn ord_end(&self, t: i64) -> u64 {
        let Some(mut c) = self.root() else {
            return self.total;
        };
        loop {
            let meta = &self.pyramid.level(c.l).meta;
            let m = meta.partition_point(c.lo, c.hi, |x| x.t_first <= t);
            if m == c.lo {
                return meta.at(c.lo).first_ordinal;
            }
            let node = meta.at(m - 1);
            let end = node.first_ordinal + node.samples;
            if node.t_last <= t {
                return end;
            }
            if c.l == 1 {
                return match self.block(m - 1) {
                    Some(blk) => blk.first_ordinal + blk.partition_point(t.saturating_add(1)) as u64,
                    None => end,
                };
            }
            match self.children(c.l, m - 1) {
                Some((lo, hi)) => c = Cursor { l: c.l - 1, lo, hi },
                None => return end,
            }
        }
    }

    /// The raw block holding ordinal `o`, if that sample is held at full
    /// resolution.
    pub(crate) fn block_of_ordinal(&self, o: u64) -> Option<&Block> {
        let k = self.blocks.partition_point(|b| b.first_ordinal <= o);
        let blk = self.blocks.get(k.checked_sub(1)?)?;
        (o < blk.first_ordinal + blk.len as u64).then_some(blk)
    }
}

/// Children `lo..hi` (at level `l - 1`) of node `m` of level `l`, if level
/// `l - 1` holds all of the node's data. (Child slots that never held data,
/// before a restart after eviction, are simply not part of the range.)
pub(crate) fn children_of(p: &Pyramid, l: usize, m: u64) -> Option<(u64, u64)> {
    if l < 2 {
        return None;
    }
    let finer = &p.level(l - 1).meta;
    if finer.is_empty() || p.level(l).meta.at(m).first_ordinal < finer.at(finer.start()).first_ordinal {
        return None;
    }
    let lo = (m * FANOUT).max(finer.start());
    let hi = ((m + 1) * FANOUT).min(finer.end());
    (lo < hi).then_some((lo, hi))
}
