//! The trigger expression syntax (`docs/triggers.md` is the user's description):
//!
//! ```text
//! trigger  := series test | "marker" NAME | "throttle" REASON
//! series   := [DEVICE "/"] GROUP "/" METRIC      one word, or in double quotes when it has spaces
//! test     := ">" NUMBER | "<" NUMBER | "cross" NUMBER
//!           | "rise" NUMBER "in" DURATION | "fall" NUMBER "in" DURATION
//! DURATION := NUMBER UNIT                         UNIT: ns, us, µs, ms, s, min (no space: 500ms)
//! ```
//!
//! DEVICE, GROUP and METRIC are globs (`*` any run of characters, `?` one), case-sensitive, as
//! the commands' `--group`/`--metric`. Values are what is plotted: a rate per second of a
//! cumulative counter, the busy share (%) of busy time, a level as read. A parse error names the
//! column (1-based, in characters) where the expression went wrong.

use std::fmt;
use std::time::Duration;

use zescope_sampler::telemetry::THROTTLE_REASONS;

/// What a trigger waits for.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// A test on the plotted values of every series the pattern matches.
    Series {
        /// Which series.
        pattern: SeriesPattern,
        /// What about them.
        test: Test,
    },
    /// A marker of the workload whose name matches this glob (an instant, or a range's begin).
    Marker(String),
    /// A throttle reason set (telemetry's throttle series): the bits whose reason names contain
    /// `word` (case-insensitive; `any` takes every bit).
    Throttle(String),
}

/// Which series a trigger watches: globs on the device's name, the group's and the metric's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesPattern {
    /// The device's name (`None`: any device).
    pub device: Option<String>,
    /// The metric group's name.
    pub group: String,
    /// The metric's name.
    pub metric: String,
}

/// A test on consecutive plotted values; each fires when it becomes true (edge-triggered), never
/// on a run's or gap's first value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Test {
    /// `> v`: the value went from at most `v` to above it.
    Above(f64),
    /// `< v`: the value went from at least `v` to below it.
    Below(f64),
    /// `cross v`: either of those.
    Cross(f64),
    /// `rise by in T`: the value is more than `by` above the lowest value of the last `T`.
    Rise {
        /// How much.
        by: f64,
        /// Within how long, ns.
        within_ns: i64,
    },
    /// `fall by in T`: the value is more than `by` below the highest value of the last `T`.
    Fall {
        /// How much.
        by: f64,
        /// Within how long, ns.
        within_ns: i64,
    },
}

/// A trigger: its text (as typed, what firings are named by), its condition, and how much before
/// and after a firing is kept or shown.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// The expression as written (trimmed).
    pub text: String,
    /// What it waits for.
    pub condition: Condition,
    /// Time kept before a firing.
    pub pre: Duration,
    /// Time kept after a firing.
    pub post: Duration,
}

/// The default time kept before and after a firing.
pub const DEFAULT_AROUND: Duration = Duration::from_secs(5);

/// An expression that does not parse: where (1-based column, in characters) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerError {
    /// The column the problem starts at (1-based, in characters).
    pub column: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for TriggerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for TriggerError {}

impl Trigger {
    /// Parses `text` with the default time around firings ([`DEFAULT_AROUND`] each side).
    pub fn parse(text: &str) -> Result<Trigger, TriggerError> {
        let condition = parse_condition(text)?;
        Ok(Trigger { text: text.trim().to_owned(), condition, pre: DEFAULT_AROUND, post: DEFAULT_AROUND })
    }

    /// The same trigger with `pre` and `post` as the time kept around its firings.
    pub fn around(mut self, pre: Duration, post: Duration) -> Trigger {
        (self.pre, self.post) = (pre, post);
        self
    }
}

/// A token of the expression language.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Word(String),
    Quoted(String),
    Greater,
    Less,
    GreaterEq,
    LessEq,
    Open,
    Close,
    Comma,
}

/// Tokens with their 1-based columns. Words end at whitespace, quotes, `<`, `>`, parentheses and
/// commas; `/`, `*`, `-` and `+` belong to words (series names, globs, numbers) unless they stand
/// alone.
pub(crate) fn tokens(text: &str) -> Result<Vec<(usize, Tok)>, TriggerError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c == '>' || c == '<' {
            let eq = chars.get(i + 1) == Some(&'=');
            out.push((
                column,
                match (c, eq) {
                    ('>', false) => Tok::Greater,
                    ('>', true) => Tok::GreaterEq,
                    (_, false) => Tok::Less,
                    (_, true) => Tok::LessEq,
                },
            ));
            i += 1 + usize::from(eq);
        } else if matches!(c, '(' | ')' | ',') {
            out.push((
                column,
                match c {
                    '(' => Tok::Open,
                    ')' => Tok::Close,
                    _ => Tok::Comma,
                },
            ));
            i += 1;
        } else if c == '"' {
            let end = chars[i + 1..]
                .iter()
                .position(|&c| c == '"')
                .ok_or_else(|| TriggerError { column, message: "this quote is not closed".into() })?;
            let s: String = chars[i + 1..i + 1 + end].iter().collect();
            if s.is_empty() {
                return Err(TriggerError { column, message: "empty quotes".into() });
            }
            out.push((column, Tok::Quoted(s)));
            i += end + 2;
        } else if c.is_control() {
            return Err(TriggerError { column, message: format!("unexpected control character {c:?}") });
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !matches!(chars[i], '>' | '<' | '"' | '(' | ')' | ',')
            {
                i += 1;
            }
            out.push((column, Tok::Word(chars[start..i].iter().collect())));
        }
    }
    Ok(out)
}

pub(crate) fn err<T>(column: usize, message: impl Into<String>) -> Result<T, TriggerError> {
    Err(TriggerError { column, message: message.into() })
}

/// The tokens and where the text ends (for "missing X" errors).
pub(crate) struct Cursor {
    toks: Vec<(usize, Tok)>,
    at: usize,
    pub(crate) end: usize,
}

impl Cursor {
    /// The tokens of `text`.
    pub(crate) fn new(text: &str) -> Result<Cursor, TriggerError> {
        Ok(Cursor { toks: tokens(text)?, at: 0, end: text.chars().count() + 1 })
    }

    pub(crate) fn next(&mut self) -> Option<(usize, Tok)> {
        let t = self.toks.get(self.at).cloned();
        self.at += usize::from(t.is_some());
        t
    }

    pub(crate) fn peek(&self) -> Option<&(usize, Tok)> {
        self.toks.get(self.at)
    }

    /// The column of the next token (or of the text's end).
    pub(crate) fn column(&self) -> usize {
        self.peek().map_or(self.end, |t| t.0)
    }

    fn number(&mut self, after: &str) -> Result<f64, TriggerError> {
        match self.next() {
            Some((c, Tok::Word(w))) => match w.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => err(c, format!("expected a number after {after}, found '{w}'")),
            },
            Some((c, t)) => err(c, format!("expected a number after {after}, found {}", shown(&t))),
            None => err(self.end, format!("expected a number after {after}")),
        }
    }

    fn done(&mut self) -> Result<(), TriggerError> {
        match self.next() {
            None => Ok(()),
            Some((c, t)) => err(c, format!("unexpected {} after the condition", shown(&t))),
        }
    }
}

/// A token as an error message shows it.
pub(crate) fn shown(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("'{w}'"),
        Tok::Quoted(q) => format!("\"{q}\""),
        Tok::Greater => "'>'".into(),
        Tok::Less => "'<'".into(),
        Tok::GreaterEq => "'>='".into(),
        Tok::LessEq => "'<='".into(),
        Tok::Open => "'('".into(),
        Tok::Close => "')'".into(),
        Tok::Comma => "','".into(),
    }
}

fn parse_condition(text: &str) -> Result<Condition, TriggerError> {
    let mut cur = Cursor::new(text)?;
    let end = cur.end;
    let Some((column, first)) = cur.peek().cloned() else {
        return err(1, "empty trigger: expected a series (GROUP/METRIC), 'marker' or 'throttle'");
    };
    let condition = match first {
        Tok::Word(w) if w == "marker" => match cur.next().and(cur.next()) {
            Some((_, Tok::Word(n) | Tok::Quoted(n))) => Condition::Marker(n),
            Some((c, t)) => return err(c, format!("expected a marker name after 'marker', found {}", shown(&t))),
            None => return err(end, "expected a marker name after 'marker'"),
        },
        Tok::Word(w) if w == "throttle" => match cur.next().and(cur.next()) {
            Some((c, Tok::Word(r) | Tok::Quoted(r))) => {
                if throttle_mask(&r).is_none() {
                    return err(
                        c,
                        format!("no throttle reason matches '{r}' (try any, power, thermal, current, frequency)"),
                    );
                }
                Condition::Throttle(r)
            }
            Some((c, t)) => return err(c, format!("expected a throttle reason after 'throttle', found {}", shown(&t))),
            None => return err(end, "expected a throttle reason after 'throttle' (any, power, thermal, …)"),
        },
        _ => {
            // The left side is an expression of the derived series' language; a trigger tests
            // one series (a derived series is one).
            let left = super::expr::parse_sum(&mut cur)?;
            let after = cur.column();
            let super::expr::Expr::Series { pattern, .. } = left else {
                return err(
                    column,
                    "a trigger tests one series (GROUP/METRIC); derive the expression first (NAME=EXPR) and \
                     test Derived/NAME",
                );
            };
            let test = parse_test(&mut cur, after)?;
            Condition::Series { pattern, test }
        }
    };
    cur.done()?;
    Ok(condition)
}

pub(crate) fn series_pattern(s: &str, column: usize) -> Result<SeriesPattern, TriggerError> {
    let parts: Vec<&str> = s.split('/').collect();
    let (device, group, metric) = match parts.as_slice() {
        [g, m] => (None, *g, *m),
        [d, g, m] => (Some(*d), *g, *m),
        [_] => return err(column, format!("'{s}' is not a series: write GROUP/METRIC or DEVICE/GROUP/METRIC")),
        _ => return err(column, format!("'{s}' has too many '/': write GROUP/METRIC or DEVICE/GROUP/METRIC")),
    };
    for (name, part) in [("device", device.unwrap_or("x")), ("group", group), ("metric", metric)] {
        if part.is_empty() {
            return err(column, format!("'{s}' has an empty {name} name"));
        }
    }
    Ok(SeriesPattern { device: device.map(str::to_owned), group: group.to_owned(), metric: metric.to_owned() })
}

fn parse_test(cur: &mut Cursor, after_series: usize) -> Result<Test, TriggerError> {
    let Some((column, tok)) = cur.next() else {
        return err(after_series, "expected a test after the series: > N, < N, cross N, rise N in T or fall N in T");
    };
    Ok(match tok {
        Tok::Greater => Test::Above(cur.number("'>'")?),
        Tok::Less => Test::Below(cur.number("'<'")?),
        Tok::Word(w) if w == "cross" => Test::Cross(cur.number("'cross'")?),
        Tok::Word(w) if w == "rise" || w == "fall" => {
            let by = cur.number(&format!("'{w}'"))?;
            if by <= 0.0 {
                return err(column, format!("'{w}' needs an amount above 0"));
            }
            match cur.next() {
                Some((_, Tok::Word(i))) if i == "in" => {}
                Some((c, t)) => return err(c, format!("expected 'in' after '{w} {by}', found {}", shown(&t))),
                None => return err(cur.end, format!("expected 'in DURATION' after '{w} {by}'")),
            }
            let within_ns = match cur.next() {
                Some((c, Tok::Word(d))) => match duration_ns(&d) {
                    Some(ns) if ns > 0 => ns,
                    _ => return err(c, format!("expected a duration such as 500ms or 2s, found '{d}'")),
                },
                Some((c, t)) => return err(c, format!("expected a duration such as 500ms, found {}", shown(&t))),
                None => return err(cur.end, "expected a duration such as 500ms or 2s after 'in'"),
            };
            if w == "rise" { Test::Rise { by, within_ns } } else { Test::Fall { by, within_ns } }
        }
        t => {
            return err(
                column,
                format!("expected a test (> N, < N, cross N, rise N in T, fall N in T), found {}", shown(&t)),
            );
        }
    })
}

/// `500ms`, `2s`, `1.5min`, `100us` → ns; `None` when it is not one (or is out of range).
pub fn duration_ns(s: &str) -> Option<i64> {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().ok()?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        _ => return None,
    };
    let ns = v * scale;
    (ns.is_finite() && ns < 1e18).then_some(ns.round() as i64)
}

/// The bits of the throttle reasons whose names contain `word` (case-insensitive; `any`: all of
/// them), among `names` (bit, name); `None` when none does.
pub(crate) fn mask_of(word: &str, names: &[(u32, String)]) -> Option<u32> {
    let w = word.to_lowercase();
    let mask = names
        .iter()
        .filter(|(_, n)| w == "any" || n.to_lowercase().contains(&w))
        .fold(0u32, |m, (b, _)| m | 1u32.checked_shl(*b).unwrap_or(0));
    (mask != 0).then_some(mask)
}

/// [`mask_of`] over the sampler's throttle reasons.
fn throttle_mask(word: &str) -> Option<u32> {
    let names: Vec<(u32, String)> =
        THROTTLE_REASONS.iter().enumerate().map(|(b, n)| (b as u32, n.to_string())).collect();
    mask_of(word, &names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Condition {
        Trigger::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")).condition
    }

    fn error(s: &str) -> TriggerError {
        Trigger::parse(s).expect_err(s)
    }

    #[test]
    fn every_form_parses() {
        let p = |d: Option<&str>, g: &str, m: &str| SeriesPattern {
            device: d.map(str::to_owned),
            group: g.into(),
            metric: m.into(),
        };
        assert_eq!(
            parse("ComputeBasic/GpuBusy > 80"),
            Condition::Series { pattern: p(None, "ComputeBasic", "GpuBusy"), test: Test::Above(80.0) }
        );
        assert_eq!(
            parse("*GPU/Telemetry/Power*<10.5"),
            Condition::Series { pattern: p(Some("*GPU"), "Telemetry", "Power*"), test: Test::Below(10.5) }
        );
        assert_eq!(
            parse(r#""ze-sim GPU/ComputeBasic/GpuTime (sub-device 1)" cross -2"#),
            Condition::Series {
                pattern: p(Some("ze-sim GPU"), "ComputeBasic", "GpuTime (sub-device 1)"),
                test: Test::Cross(-2.0)
            }
        );
        assert_eq!(
            parse("A/b rise 20 in 500ms"),
            Condition::Series { pattern: p(None, "A", "b"), test: Test::Rise { by: 20.0, within_ns: 500_000_000 } }
        );
        assert_eq!(
            parse("A/b fall 1e3 in 1.5s"),
            Condition::Series { pattern: p(None, "A", "b"), test: Test::Fall { by: 1000.0, within_ns: 1_500_000_000 } }
        );
        assert_eq!(parse(r#"marker "solve step""#), Condition::Marker("solve step".into()));
        assert_eq!(parse("marker phase*"), Condition::Marker("phase*".into()));
        assert_eq!(parse("throttle power"), Condition::Throttle("power".into()));
    }

    #[test]
    fn errors_name_the_column() {
        let e = error("ComputeBasic/GpuBusy > eighty");
        assert_eq!((e.column, e.to_string().contains("expected a number after '>'")), (24, true), "{e}");
        assert_eq!(error("GpuBusy > 80").column, 1);
        assert_eq!(error("A/b >").column, 6);
        assert_eq!(error("A/b above 3").column, 5);
        assert_eq!(error("A/b rise 5 in 3 parsecs").column, 15);
        assert_eq!(error("A/b rise 5 over 3s").column, 12);
        assert_eq!(error("A/b > 5 and more").column, 9);
        assert_eq!(error("throttle gremlins").column, 10);
        assert_eq!(error(r#""A/b > 3"#).column, 1);
        assert_eq!(error("   ").column, 1);
        assert_eq!(error("a/b/c/d < 1").column, 1);
        assert!(error("A/b rise -5 in 1s").message.contains("above 0"));
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ns("250us"), Some(250_000));
        assert_eq!(duration_ns("2min"), Some(120_000_000_000));
        assert_eq!(duration_ns("2"), None);
        assert_eq!(duration_ns("s"), None);
        assert_eq!(duration_ns("1e30s"), None);
    }

    #[test]
    fn throttle_words_pick_their_bits() {
        assert_eq!(throttle_mask("power"), Some(0b1_0011), "PL1, PL2 and the power supply alert");
        assert_eq!(throttle_mask("Thermal"), Some(0b1000));
        assert_eq!(throttle_mask("any"), Some(0b111_1111));
        assert_eq!(throttle_mask("nope"), None);
    }
}
