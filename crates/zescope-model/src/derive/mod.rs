//! Derived series: new series computed from a run's series by an expression of the triggers'
//! language (`triggers::expr`), live, as the samples arrive (`docs/derived-series.md` is the
//! user's description).
//!
//! A [`Derivation`] is `NAME=EXPR` (or `NAME[UNIT]=EXPR`, naming the unit). A [`Deriver`] binds
//! derivations to a run: [`Deriver::run_started`] resolves the series each names (exactly one
//! series per name; a name that matches none is refused with the names it could mean) and adds
//! to the run one stream of group [`GROUP`] per stream that drives derived series, so that
//! everything downstream (the store, legends, sessions, exports, `serve`, triggers) takes them
//! as series like any other; [`Deriver::samples`] turns each batch of a driving stream into a
//! batch of its derived stream.
//!
//! Contract (the gap rules): a derived series ticks with the first series its expression names
//! (its driving stream); every other series it names counts with its latest sample at or before
//! the tick, held at most [`HOLD_NS`]; a series with no such sample, a value that could not be
//! read, a division by zero or a result that is not finite is a gap (NaN in the batch), never a
//! made-up value. A gap in the driving stream is a gap in the derived series and restarts
//! `rate`, `delta` and `integral` (sums and windows go on). Cost: O(size of the expression) per
//! derived series per sample, no history recomputed.

mod backfill;
mod bind;
mod catch_up;
pub mod node;
pub mod units;

use std::fmt;

pub use backfill::{Backfill, PIECE_ROWS};
pub use bind::Deriver;
pub use catch_up::CatchUp;

use crate::triggers::expr::Expr;
use crate::triggers::syntax::TriggerError;

/// The group of derived series' streams (the OpenMetrics catalog knows it by this name).
pub const GROUP: &str = zescope_openmetrics::catalog::DERIVED_GROUP;

/// How long another stream's latest sample counts for a tick of the driving stream (1 s).
pub const HOLD_NS: i64 = 1_000_000_000;

/// The start of a derived series' description; the definition follows (sessions keep it there).
pub const DESCRIPTION_PREFIX: &str = zescope_openmetrics::catalog::DERIVED_PREFIX;

/// Is `s` a stream of derived series (added by a [`Deriver`])?
pub fn is_derived(s: &zescope_sampler::StreamInfo) -> bool {
    s.group == GROUP && s.layout.starts_with(LAYOUT_PREFIX)
}

/// The start of a derived stream's layout ("derived from GROUP").
pub const LAYOUT_PREFIX: &str = "derived from ";

/// One derived series: its name, its unit if the user named it, and its expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Derivation {
    /// The series' name (its metric name, in group [`GROUP`]).
    pub name: String,
    /// The unit the user named (`NAME[UNIT]=EXPR`); otherwise it is computed where it can be.
    pub unit: Option<String>,
    /// The expression as written (trimmed).
    pub text: String,
    /// The parsed expression.
    pub expr: Expr,
}

impl Derivation {
    /// Parses `NAME=EXPR` or `NAME[UNIT]=EXPR`; errors name the column in `def`.
    pub fn parse(def: &str) -> Result<Derivation, TriggerError> {
        let Some(eq) = def.find('=') else {
            return Err(TriggerError { column: 1, message: "expected NAME=EXPR".into() });
        };
        let (head, body) = (&def[..eq], &def[eq + 1..]);
        let (name, unit) = match head.find('[') {
            Some(open) => {
                let Some(unit) = head[open + 1..].trim_end().strip_suffix(']') else {
                    let column = head.chars().count() + 1;
                    return Err(TriggerError { column, message: "expected ']' after the unit".into() });
                };
                (&head[..open], Some(unit.trim().to_owned()))
            }
            None => (head, None),
        };
        let name = name.trim();
        let bad = name.is_empty()
            || name.contains(['/', '"', '*', '?', '[', ']', '<', '>', '(', ')', ','])
            || name.contains(char::is_control);
        if bad {
            return Err(TriggerError {
                column: 1,
                message: format!("'{name}' is no name for a series: one without / \" * ? [ ] < > ( ) , (NAME=EXPR)"),
            });
        }
        let offset = def[..=eq].chars().count();
        let expr = Expr::parse(body).map_err(|e| TriggerError { column: e.column + offset, message: e.message })?;
        Ok(Derivation { name: name.to_owned(), unit, text: body.trim().to_owned(), expr })
    }

    /// The definition as [`Derivation::parse`] takes it.
    pub fn definition(&self) -> String {
        match &self.unit {
            Some(u) => format!("{}[{u}]={}", self.name, self.text),
            None => format!("{}={}", self.name, self.text),
        }
    }

    /// The definition kept in a derived series' description, if `description` is one.
    pub fn from_description(description: &str) -> Option<Derivation> {
        Derivation::parse(description.strip_prefix(DESCRIPTION_PREFIX)?).ok()
    }
}

impl fmt::Display for Derivation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.definition())
    }
}

#[cfg(test)]
mod tests;
