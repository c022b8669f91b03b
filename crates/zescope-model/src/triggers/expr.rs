//! Expressions over series: the one language of triggers and derived series
//! (`docs/derived-series.md` is the user's description).
//!
//! ```text
//! expr    := sum [ CMP sum ]                CMP: >  <  >=  <=   (1 where true, 0 where false)
//! sum     := product { ("+" | "-") product }
//! product := unary { ("*" | "/") unary }
//! unary   := "-" unary | atom
//! atom    := NUMBER | series | FUNC "(" args ")" | "(" expr ")"
//! series  := [DEVICE "/"] GROUP "/" METRIC    one word, or in double quotes
//! FUNC    := rate delta integral cumsum abs clamp      avg max min rms stddev
//! ```
//!
//! Operators stand apart (`a / b`, `x * 2`): `/`, `*`, `-` and `+` inside a word belong to it,
//! since series names hold `/` and globs `*`. A trigger's left side is a `sum` (its `>` and `<`
//! are its test). Errors name the column (1-based, in characters) as the triggers' do.

use super::syntax::{Cursor, SeriesPattern, Tok, TriggerError, duration_ns, err, series_pattern, shown};

/// An operator of two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `>`
    Gt,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `<=`
    Le,
}

/// A function of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// `rate(x)`: increase per second (of a running total's raw value, wrap-aware).
    Rate,
    /// `delta(x)`: increase since the previous sample (wrap-aware on a running total).
    Delta,
    /// `integral(x)`: integral over time, in unit·s (trapezoids; of a running total or a rate,
    /// each value times the time since the tick before).
    Integral,
    /// `cumsum(x)`: running sum of the values.
    Cumsum,
    /// `abs(x)`.
    Abs,
    /// `clamp(x, lo, hi)`.
    Clamp,
    /// `avg(x, T)`: mean over the last `T`.
    Avg,
    /// `max(x, T)` over the last `T`, or `max(a, b)` of two.
    Max,
    /// `min(x, T)` over the last `T`, or `min(a, b)` of two.
    Min,
    /// `rms(x, T)`: root mean square over the last `T`.
    Rms,
    /// `stddev(x, T)`: population standard deviation over the last `T`.
    Stddev,
}

impl Func {
    /// Every function with its name.
    pub const ALL: [(&'static str, Func); 11] = [
        ("rate", Func::Rate),
        ("delta", Func::Delta),
        ("integral", Func::Integral),
        ("cumsum", Func::Cumsum),
        ("abs", Func::Abs),
        ("clamp", Func::Clamp),
        ("avg", Func::Avg),
        ("max", Func::Max),
        ("min", Func::Min),
        ("rms", Func::Rms),
        ("stddev", Func::Stddev),
    ];

    fn named(w: &str) -> Option<Func> {
        Func::ALL.iter().find(|(n, _)| *n == w).map(|&(_, f)| f)
    }
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A number.
    Num(f64),
    /// A series, at the column it was written (for errors of binding).
    Series {
        /// Which series.
        pattern: SeriesPattern,
        /// 1-based column.
        column: usize,
        /// As written (for messages).
        text: String,
    },
    /// `-x`.
    Neg(Box<Expr>),
    /// `a OP b`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `f(args)`; a windowed function holds its window in `window_ns` and one argument.
    Call {
        /// Which function.
        func: Func,
        /// Its operands.
        args: Vec<Expr>,
        /// The window of `avg`/`max`/`min`/`rms`/`stddev(x, T)`, ns.
        window_ns: Option<i64>,
    },
}

impl Expr {
    /// Parses a whole expression (`expr` above).
    pub fn parse(text: &str) -> Result<Expr, TriggerError> {
        let mut cur = Cursor::new(text)?;
        if cur.peek().is_none() {
            return err(1, "empty expression: expected a series (GROUP/METRIC), a number or a function");
        }
        let e = parse_expr(&mut cur)?;
        match cur.next() {
            None => Ok(e),
            Some((c, Tok::Close)) => err(c, "this ')' closes nothing"),
            Some((c, t)) => {
                err(c, format!("expected an operator (+ - * / > <) with spaces around it, found {}", shown(&t)))
            }
        }
    }

    /// Every series the expression names, in the order written.
    pub fn series(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if matches!(e, Expr::Series { .. }) {
                out.push(e)
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Num(_) | Expr::Series { .. } => {}
            Expr::Neg(x) => x.walk(f),
            Expr::Bin(_, a, b) => {
                a.walk(f);
                b.walk(f)
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.walk(f)),
        }
    }
}

fn parse_expr(cur: &mut Cursor) -> Result<Expr, TriggerError> {
    let left = parse_sum(cur)?;
    let op = match cur.peek().map(|t| &t.1) {
        Some(Tok::Greater) => BinOp::Gt,
        Some(Tok::Less) => BinOp::Lt,
        Some(Tok::GreaterEq) => BinOp::Ge,
        Some(Tok::LessEq) => BinOp::Le,
        _ => return Ok(left),
    };
    cur.next();
    let right = parse_sum(cur)?;
    Ok(Expr::Bin(op, Box::new(left), Box::new(right)))
}

/// `sum` of the grammar: what a trigger tests.
pub(crate) fn parse_sum(cur: &mut Cursor) -> Result<Expr, TriggerError> {
    let mut left = parse_product(cur)?;
    loop {
        let op = match cur.peek().map(|t| &t.1) {
            Some(Tok::Word(w)) if w == "+" => BinOp::Add,
            Some(Tok::Word(w)) if w == "-" => BinOp::Sub,
            _ => return Ok(left),
        };
        cur.next();
        left = Expr::Bin(op, Box::new(left), Box::new(parse_product(cur)?));
    }
}

fn parse_product(cur: &mut Cursor) -> Result<Expr, TriggerError> {
    let mut left = parse_unary(cur)?;
    loop {
        let op = match cur.peek().map(|t| &t.1) {
            Some(Tok::Word(w)) if w == "*" => BinOp::Mul,
            Some(Tok::Word(w)) if w == "/" => BinOp::Div,
            _ => return Ok(left),
        };
        cur.next();
        left = Expr::Bin(op, Box::new(left), Box::new(parse_unary(cur)?));
    }
}

fn parse_unary(cur: &mut Cursor) -> Result<Expr, TriggerError> {
    if matches!(cur.peek(), Some((_, Tok::Word(w))) if w == "-") {
        cur.next();
        return Ok(Expr::Neg(Box::new(parse_unary(cur)?)));
    }
    parse_atom(cur)
}

fn parse_atom(cur: &mut Cursor) -> Result<Expr, TriggerError> {
    let Some((column, tok)) = cur.next() else {
        return err(cur.end, "expected a series, a number or a function");
    };
    match tok {
        Tok::Open => {
            let e = parse_expr(cur)?;
            match cur.next() {
                Some((_, Tok::Close)) => Ok(e),
                Some((c, t)) => {
                    err(c, format!("expected ')' to close the '(' at column {column}, found {}", shown(&t)))
                }
                None => err(cur.end, format!("the '(' at column {column} is not closed")),
            }
        }
        Tok::Quoted(s) => Ok(Expr::Series { pattern: series_pattern(&s, column)?, column, text: s }),
        Tok::Word(w) => {
            if matches!(cur.peek(), Some((_, Tok::Open))) {
                let Some(func) = Func::named(&w) else {
                    let names: Vec<&str> = Func::ALL.iter().map(|f| f.0).collect();
                    return err(column, format!("no function '{w}'; the functions: {}", names.join(", ")));
                };
                cur.next();
                return parse_call(cur, func, &w, column);
            }
            if let Ok(v) = w.parse::<f64>() {
                return if v.is_finite() {
                    Ok(Expr::Num(v))
                } else {
                    err(column, format!("'{w}' is not a finite number"))
                };
            }
            if matches!(w.as_str(), "+" | "-" | "*" | "/") {
                return err(column, format!("expected a series, a number or a function before '{w}'"));
            }
            if Func::named(&w).is_some() {
                return err(column, format!("'{w}' is a function: write {w}(…)"));
            }
            let pattern = series_pattern(&w, column).map_err(|mut e| {
                if w.contains(['+', '*']) || w.chars().skip(1).any(|c| c == '-') {
                    e.message.push_str(" (operators need a space on each side: a / b)");
                }
                e
            })?;
            Ok(Expr::Series { pattern, column, text: w })
        }
        t => err(column, format!("expected a series, a number or a function, found {}", shown(&t))),
    }
}

/// The arguments of `func(` (the '(' taken) up to its ')'.
fn parse_call(cur: &mut Cursor, func: Func, name: &str, column: usize) -> Result<Expr, TriggerError> {
    let want = match func {
        Func::Rate | Func::Delta | Func::Integral | Func::Cumsum | Func::Abs => "one operand",
        Func::Clamp => "three operands: clamp(x, lo, hi)",
        Func::Avg | Func::Rms | Func::Stddev => "an operand and a window: avg(x, 1s)",
        Func::Max | Func::Min => "an operand and a window, max(x, 1s), or two operands, max(a, b)",
    };
    let mut args = vec![parse_expr(cur)?];
    let mut window_ns = None;
    loop {
        match cur.next() {
            Some((_, Tok::Close)) => break,
            Some((_, Tok::Comma)) => {}
            Some((c, t)) => return err(c, format!("expected ',' or ')' in {name}(…), found {}", shown(&t))),
            None => return err(cur.end, format!("{name}( at column {column} is not closed")),
        }
        // A window: a duration as the second argument of a windowed function.
        let windowed = matches!(func, Func::Avg | Func::Max | Func::Min | Func::Rms | Func::Stddev);
        if let Some((c, Tok::Word(w))) = cur.peek().cloned()
            && let Some(ns) = duration_ns(&w)
        {
            if !(windowed && args.len() == 1) {
                return err(column, format!("{name} takes {want}"));
            }
            cur.next();
            if ns <= 0 {
                return err(c, format!("the window of {name} must be longer than 0"));
            }
            window_ns = Some(ns);
            continue;
        }
        args.push(parse_expr(cur)?);
    }
    let n = args.len() + usize::from(window_ns.is_some());
    let fits = match func {
        Func::Rate | Func::Delta | Func::Integral | Func::Cumsum | Func::Abs => n == 1,
        Func::Clamp => n == 3 && window_ns.is_none(),
        Func::Avg | Func::Rms | Func::Stddev => n == 2 && window_ns.is_some(),
        Func::Max | Func::Min => n == 2,
    };
    if !fits {
        return err(column, format!("{name} takes {want}"));
    }
    Ok(Expr::Call { func, args, window_ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Expr {
        let pattern = series_pattern(text, 1).unwrap();
        Expr::Series { pattern, column: 0, text: text.into() }
    }

    /// The tree without columns, for comparing.
    fn plain(e: Expr) -> Expr {
        match e {
            Expr::Series { pattern, text, .. } => Expr::Series { pattern, column: 0, text },
            Expr::Neg(x) => Expr::Neg(Box::new(plain(*x))),
            Expr::Bin(op, a, b) => Expr::Bin(op, Box::new(plain(*a)), Box::new(plain(*b))),
            Expr::Call { func, args, window_ns } => {
                Expr::Call { func, args: args.into_iter().map(plain).collect(), window_ns }
            }
            e => e,
        }
    }

    fn parse(text: &str) -> Expr {
        plain(Expr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}")))
    }

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn precedence_and_parentheses() {
        use BinOp::*;
        assert_eq!(parse("A/x + A/y * 2"), bin(Add, s("A/x"), bin(Mul, s("A/y"), Expr::Num(2.0))));
        assert_eq!(parse("(A/x + A/y) * 2"), bin(Mul, bin(Add, s("A/x"), s("A/y")), Expr::Num(2.0)));
        assert_eq!(parse("A/x - A/y - 1"), bin(Sub, bin(Sub, s("A/x"), s("A/y")), Expr::Num(1.0)));
        assert_eq!(parse("A/x / A/y / 2"), bin(Div, bin(Div, s("A/x"), s("A/y")), Expr::Num(2.0)));
        assert_eq!(parse("- A/x >= -3"), bin(Ge, Expr::Neg(Box::new(s("A/x"))), Expr::Num(-3.0)));
        assert_eq!(parse(r#""dev 1/A/x y" < 1e3"#), bin(Lt, s("dev 1/A/x y"), Expr::Num(1000.0)));
    }

    #[test]
    fn functions() {
        let call = |func, args, window_ns| Expr::Call { func, args, window_ns };
        assert_eq!(parse("rate(A/x)"), call(Func::Rate, vec![s("A/x")], None));
        assert_eq!(parse("avg(A/x, 500ms)"), call(Func::Avg, vec![s("A/x")], Some(500_000_000)));
        assert_eq!(parse("max(A/x,1s)"), call(Func::Max, vec![s("A/x")], Some(1_000_000_000)));
        assert_eq!(parse("max(A/x, A/y)"), call(Func::Max, vec![s("A/x"), s("A/y")], None));
        assert_eq!(
            parse("clamp(A/x, 0, 100)"),
            call(Func::Clamp, vec![s("A/x"), Expr::Num(0.0), Expr::Num(100.0)], None)
        );
        assert_eq!(
            parse("integral(abs(*/P))"),
            call(Func::Integral, vec![call(Func::Abs, vec![s("*/P")], None)], None)
        );
    }

    #[test]
    fn errors_name_the_column() {
        let e = |t: &str| Expr::parse(t).expect_err(t);
        assert_eq!(e("A/x +").column, 6);
        assert_eq!(e("x+y").column, 1);
        assert!(e("x+y").message.contains("space on each side"), "{}", e("x+y"));
        assert_eq!(e("rate(A/x").column, 9);
        assert_eq!(e("rate(A/x, 1s)").column, 1);
        assert!(e("rate(A/x, 1s)").message.contains("rate takes one operand"));
        assert_eq!(e("avg(A/x)").column, 1);
        assert_eq!(e("sqrt(A/x)").column, 1);
        assert!(e("sqrt(A/x)").message.contains("the functions: rate, delta"));
        assert_eq!(e("(A/x + 1").column, 9);
        assert_eq!(e("A/x )").column, 5);
        assert_eq!(e("A/x A/y").column, 5);
        assert_eq!(e("avg(A/x, 0s)").column, 10);
        assert_eq!(e("").column, 1);
        assert_eq!(e("GpuBusy * 2").column, 1);
    }
}
