//! Glob matching for layout `matches` (and the commands' `--group`/`--metric` patterns): `*` any
//! run of characters, `?` one character, anything else itself (case-sensitive).

/// Does `pattern` match the whole of `text`?
pub fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Is `s` a pattern (has `*` or `?`) rather than a plain name?
pub fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?'])
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("ComputeBasic", "ComputeBasic"));
        assert!(!matches("ComputeBasic", "ComputeBasic2"));
        assert!(matches("Compute*", "ComputeBasic"));
        assert!(matches("*Basic", "ComputeBasic"));
        assert!(matches("C?mpute*c", "ComputeBasic"));
        assert!(matches("*", ""));
        assert!(!matches("?", ""));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(super::is_pattern("Gpu*") && super::is_pattern("L3_?") && !super::is_pattern("GpuTime"));
    }
}
