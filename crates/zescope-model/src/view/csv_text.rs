//! Text cells of the CSV files zescope writes (samples, markers, phases), made safe to open in a
//! spreadsheet. Names in them come from outside: metric, group and device names from drivers and
//! layouts, marker names from the workload. A cell that starts with `=`, `+`, `-`, `@`, a tab or
//! a carriage return would be taken for a formula (CSV injection), so such a text cell gets a
//! single quote `'` in front, as OWASP advises and spreadsheets hide. Only text cells go through
//! here: numbers are written as they are (a negative number is a number, not a formula).
//! Quoting (commas, quotes, line breaks) is the CSV writer's.

use std::borrow::Cow;

/// `text` as a CSV text cell: with `'` in front when it could be taken for a formula.
pub fn csv_text(text: &str) -> Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_that_look_like_formulas_get_a_quote_and_others_stay() {
        for f in ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=x", "\rx", "=HYPERLINK(\"http://x\")"] {
            assert_eq!(csv_text(f), format!("'{f}"));
        }
        for t in ["phase 1", "g/metric [W]", "a=b", " =x", "'already", "", "1.5"] {
            assert_eq!(csv_text(t), t);
        }
    }
}
