//! The unit of a derived series, computed from its expression where the algebra is plain
//! (`docs/derived-series.md`, "Units"); `None` where it is not (the user names it then).
//!
//! Rules: a number has no unit (""); `a + b`, `a - b`, `min`/`max` of two and `clamp` keep the
//! unit both sides share (a number takes the other side's); `a * b` and `a / b` compose (`B / s`
//! → `B/s`, `B/s / B/s` → "", a ratio); a comparison is "" (1 or 0); `rate` divides by seconds,
//! `integral` multiplies by them (`W` → `J`, `B/s` → `B`); `delta`, `cumsum`, `abs` and the
//! windows keep the unit.

use crate::triggers::expr::{BinOp, Expr, Func};

/// The unit of `e`, given the unit of each series it names (`plotted(e)` for a series as read in
/// the expression, `raw(e)` for one inside `rate`/`delta`, whose raw running total counts).
pub fn unit_of(e: &Expr, unit: &impl Fn(&Expr, bool) -> String) -> Option<String> {
    Some(match e {
        Expr::Num(_) => String::new(),
        Expr::Series { .. } => unit(e, false),
        Expr::Neg(x) => unit_of(x, unit)?,
        Expr::Bin(op, a, b) => {
            let (ua, ub) = (unit_of(a, unit)?, unit_of(b, unit)?);
            match op {
                BinOp::Add | BinOp::Sub => same(ua, ub)?,
                BinOp::Mul => times(&ua, &ub),
                BinOp::Div => per(&ua, &ub),
                BinOp::Gt | BinOp::Lt | BinOp::Ge | BinOp::Le => String::new(),
            }
        }
        Expr::Call { func, args, window_ns } => {
            let x = &args[0];
            let raw = matches!(x, Expr::Series { .. }) && matches!(func, Func::Rate | Func::Delta);
            let ux = if raw { unit(x, true) } else { unit_of(x, unit)? };
            match func {
                Func::Rate => per(&ux, "s"),
                Func::Integral => times(&ux, "s"),
                Func::Delta | Func::Cumsum | Func::Abs => ux,
                Func::Clamp => same(same(ux, unit_of(&args[1], unit)?)?, unit_of(&args[2], unit)?)?,
                Func::Max | Func::Min if window_ns.is_none() => same(ux, unit_of(&args[1], unit)?)?,
                Func::Avg | Func::Max | Func::Min | Func::Rms | Func::Stddev => ux,
            }
        }
    })
}

/// The unit two operands of `+`, `-`, `min`, `max` share; a number's "" takes the other's.
fn same(a: String, b: String) -> Option<String> {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => Some(b),
        (_, true) => Some(a),
        _ if a == b => Some(a),
        _ => None,
    }
}

/// `a · b`, with the products that have names of their own.
fn times(a: &str, b: &str) -> String {
    match (a, b) {
        ("", x) | (x, "") => x.to_owned(),
        ("W", "s") | ("s", "W") => "J".into(),
        ("mW", "s") | ("s", "mW") => "mJ".into(),
        _ => {
            // `X/s · s` → `X`.
            if let Some(x) = a.strip_suffix(&format!("/{b}")) {
                return x.to_owned();
            }
            if let Some(x) = b.strip_suffix(&format!("/{a}")) {
                return x.to_owned();
            }
            format!("{a}·{b}")
        }
    }
}

/// `a / b`, with the quotients that simplify.
fn per(a: &str, b: &str) -> String {
    match (a, b) {
        (x, "") => x.to_owned(),
        (x, y) if x == y => String::new(),
        ("", y) => format!("1/{y}"),
        ("J", "s") => "W".into(),
        ("mJ", "s") => "mW".into(),
        (x, y) if y.contains(['/', '·']) => format!("{x}/({y})"),
        (x, y) => format!("{x}/{y}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units of an expression over series named after their units: `U/W`, `U/B`, `U/%`, a
    /// running total `T/B` (plotted B/s).
    fn u(text: &str) -> Option<String> {
        let e = Expr::parse(text).unwrap();
        unit_of(&e, &|x, raw| match x {
            Expr::Series { pattern, .. } if pattern.group == "T" => {
                if raw {
                    pattern.metric.clone()
                } else {
                    format!("{}/s", pattern.metric)
                }
            }
            Expr::Series { pattern, .. } => pattern.metric.clone(),
            _ => unreachable!(),
        })
    }

    #[test]
    fn units_follow_the_algebra() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(u("U/B / U/s"), some("B/s"));
        assert_eq!(u("integral(U/W)"), some("J"));
        assert_eq!(u("U/% - U/%"), some("%"));
        assert_eq!(u("U/% - U/W"), None, "no unit for watts less a share");
        assert_eq!(u("U/W * 2"), some("W"));
        assert_eq!(u("T/B / T/B"), some(""), "a ratio");
        assert_eq!(u("rate(T/B)"), some("B/s"), "the raw total's rate");
        assert_eq!(u("delta(T/B)"), some("B"));
        assert_eq!(u("integral(T/B)"), some("B"), "a rate integrated is its total");
        assert_eq!(u("rate(U/W)"), some("W/s"));
        assert_eq!(u("avg(U/W, 1s) > 3"), some(""));
        assert_eq!(u("stddev(U/W, 1s)"), some("W"));
        assert_eq!(u("max(U/W, 0)"), some("W"));
        assert_eq!(u("clamp(U/%, 0, 100)"), some("%"));
        assert_eq!(u("1 / U/s"), some("1/s"));
        assert_eq!(u("cumsum(U/W) * U/B"), some("W·B"));
    }
}
