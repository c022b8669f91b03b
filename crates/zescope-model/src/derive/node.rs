//! An expression bound to a run, with the state its functions keep: evaluated once per tick of
//! the derived series, O(size of the expression) per tick, whatever the history (windows are
//! running sums over a deque of the window's values, `max`/`min` a monotonic deque).
//!
//! A value is `Option<f64>`: `None` is a gap (a missing or unreadable sample, a division by zero,
//! a result that is not finite, a window with nothing in it). Every node is stepped on every tick,
//! whether or not its neighbours have a value, so `rate` and the windows see every sample.

use std::collections::VecDeque;

use crate::triggers::expr::{BinOp, Func};

/// The most values a window keeps (past this its oldest are dropped: the window is shortened).
pub const MAX_WINDOW_SAMPLES: usize = 1 << 20;

/// A node of a bound expression.
#[derive(Debug)]
pub(crate) enum Node {
    Num(f64),
    /// The value of input `i` of the derived series at this tick.
    Input(usize),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    /// `rate` (`per_second`) or `delta`; `wrap`: the modulus of a running total read raw.
    Change {
        x: Box<Node>,
        per_second: bool,
        wrap: Option<f64>,
        running_total: bool,
        prev: Option<(i64, f64)>,
    },
    /// Trapezoids between consecutive values; of interval means (`means`: a running total read
    /// as its rate, or `rate(…)`), each value times the time since the tick before, which that
    /// value is the mean over (the total's increase, exactly).
    Integral {
        x: Box<Node>,
        prev: Option<(i64, f64)>,
        sum: f64,
        means: bool,
    },
    Cumsum {
        x: Box<Node>,
        sum: f64,
    },
    Abs(Box<Node>),
    Clamp(Box<[Node; 3]>),
    /// `max`/`min` of two.
    Pick {
        x: Box<[Node; 2]>,
        max: bool,
    },
    Window {
        x: Box<Node>,
        func: Func,
        within_ns: i64,
        w: Window,
    },
}

/// A window's values and running sums (shifted by the first value kept, so that the variance of
/// a large value that moves little keeps its digits).
#[derive(Debug, Default)]
pub(crate) struct Window {
    values: VecDeque<(i64, f64)>,
    /// Monotonic deque for `max`/`min`.
    extreme: VecDeque<(i64, f64)>,
    shift: f64,
    sum: f64,
    sum_sq: f64,
}

impl Window {
    fn push(&mut self, t: i64, v: f64, within_ns: i64, func: Func) {
        if self.values.is_empty() {
            // RMS is of the values themselves; the others' sums are of the values less the first.
            (self.shift, self.sum, self.sum_sq) = (if func == Func::Rms { 0.0 } else { v }, 0.0, 0.0);
        }
        if self.values.len() == MAX_WINDOW_SAMPLES {
            self.pop();
        }
        let d = v - self.shift;
        self.values.push_back((t, v));
        self.sum += d;
        self.sum_sq += d * d;
        if matches!(func, Func::Max | Func::Min) {
            let max = func == Func::Max;
            while self.extreme.back().is_some_and(|&(_, o)| if max { o <= v } else { o >= v }) {
                self.extreme.pop_back();
            }
            self.extreme.push_back((t, v));
        }
        self.expire(t, within_ns);
    }

    /// Drops what is `within_ns` or more before `t` (the window is `(t - within, t]`).
    fn expire(&mut self, t: i64, within_ns: i64) {
        let from = t.saturating_sub(within_ns);
        while self.values.front().is_some_and(|&(ft, _)| ft <= from) {
            self.pop();
        }
        while self.extreme.front().is_some_and(|&(ft, _)| ft <= from) {
            self.extreme.pop_front();
        }
        if self.values.is_empty() {
            (self.sum, self.sum_sq) = (0.0, 0.0);
        }
    }

    fn pop(&mut self) {
        if let Some((t, v)) = self.values.pop_front() {
            let d = v - self.shift;
            self.sum -= d;
            self.sum_sq -= d * d;
            if self.extreme.front().is_some_and(|&(ft, _)| ft <= t) {
                self.extreme.pop_front();
            }
        }
    }

    fn value(&self, func: Func) -> Option<f64> {
        let n = self.values.len() as f64;
        if n == 0.0 {
            return None;
        }
        match func {
            Func::Avg => Some(self.shift + self.sum / n),
            Func::Rms => Some((self.sum_sq / n).max(0.0).sqrt()),
            Func::Stddev => {
                let mean = self.sum / n;
                Some((self.sum_sq / n - mean * mean).max(0.0).sqrt())
            }
            _ => self.extreme.front().map(|&(_, v)| v),
        }
    }
}

/// `Some(v)` when finite: a result that is not is a gap.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl Node {
    /// Steps the node at time `t` with the inputs' values; its value, `None` for a gap.
    pub(crate) fn eval(&mut self, t: i64, inputs: &[Option<f64>]) -> Option<f64> {
        match self {
            Node::Num(v) => Some(*v),
            Node::Input(i) => inputs[*i],
            Node::Neg(x) => x.eval(t, inputs).map(|v| -v),
            Node::Bin(op, a, b) => {
                let (a, b) = (a.eval(t, inputs), b.eval(t, inputs));
                let (a, b) = (a?, b?);
                finite(match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div if b == 0.0 => return None,
                    BinOp::Div => a / b,
                    BinOp::Gt => f64::from(u8::from(a > b)),
                    BinOp::Lt => f64::from(u8::from(a < b)),
                    BinOp::Ge => f64::from(u8::from(a >= b)),
                    BinOp::Le => f64::from(u8::from(a <= b)),
                })
            }
            Node::Change { x, per_second, wrap, running_total, prev } => {
                let v = x.eval(t, inputs);
                let before = std::mem::replace(prev, v.map(|v| (t, v)));
                let ((t0, v0), v) = (before?, v?);
                if t <= t0 {
                    return None;
                }
                let mut d = v - v0;
                if d < 0.0 && *running_total {
                    // A running total that went down wrapped (or, without a modulus, was reset).
                    d += (*wrap)?;
                }
                finite(if *per_second { d / ((t - t0) as f64 * 1e-9) } else { d })
            }
            Node::Integral { x, prev, sum, means: true } => {
                let v = x.eval(t, inputs);
                // The tick's time whatever its value: the next value is the mean since it.
                let before = prev.replace((t, f64::NAN));
                let v = v?;
                if let Some((t0, _)) = before.filter(|&(t0, _)| t > t0) {
                    *sum += v * ((t - t0) as f64 * 1e-9);
                }
                Some(*sum)
            }
            Node::Integral { x, prev, sum, means: false } => {
                let v = x.eval(t, inputs);
                let before = std::mem::replace(prev, v.map(|v| (t, v)));
                let v = v?;
                if let Some((t0, v0)) = before.filter(|&(t0, _)| t > t0) {
                    *sum += (v0 + v) * 0.5 * ((t - t0) as f64 * 1e-9);
                }
                Some(*sum)
            }
            Node::Cumsum { x, sum } => {
                *sum += x.eval(t, inputs)?;
                Some(*sum)
            }
            Node::Abs(x) => x.eval(t, inputs).map(f64::abs),
            Node::Clamp(n) => {
                let [x, lo, hi] = &mut **n;
                let (x, lo, hi) = (x.eval(t, inputs), lo.eval(t, inputs), hi.eval(t, inputs));
                let (x, lo, hi) = (x?, lo?, hi?);
                (lo <= hi).then(|| x.clamp(lo, hi))
            }
            Node::Pick { x, max } => {
                let [a, b] = &mut **x;
                let (a, b) = (a.eval(t, inputs), b.eval(t, inputs));
                let (a, b) = (a?, b?);
                Some(if *max { a.max(b) } else { a.min(b) })
            }
            Node::Window { x, func, within_ns, w } => {
                match x.eval(t, inputs) {
                    Some(v) => w.push(t, v, *within_ns, *func),
                    None => w.expire(t, *within_ns),
                }
                w.value(*func).and_then(finite)
            }
        }
    }

    /// Forgets what connects one sample to the one before (after a gap in the driving stream):
    /// `rate`, `delta` and `integral` start again; sums and windows go on.
    pub(crate) fn break_continuity(&mut self) {
        match self {
            Node::Num(_) | Node::Input(_) => {}
            Node::Neg(x) | Node::Abs(x) | Node::Cumsum { x, .. } | Node::Window { x, .. } => x.break_continuity(),
            Node::Bin(_, a, b) => {
                a.break_continuity();
                b.break_continuity()
            }
            Node::Change { x, prev, .. } | Node::Integral { x, prev, .. } => {
                *prev = None;
                x.break_continuity()
            }
            Node::Clamp(n) => n.iter_mut().for_each(Node::break_continuity),
            Node::Pick { x, .. } => x.iter_mut().for_each(Node::break_continuity),
        }
    }
}
