//! Request heads as RFC 9112 has them, strictly, and `Accept` as Prometheus' client libraries read it.
//!
//! - Lines end in CRLF. A bare LF (which RFC 9112 §2.2 lets a recipient take as a line end) or a
//!   bare CR is refused with `400` as soon as it arrives ([`head_end`]), so such a client gets its
//!   answer at once instead of waiting out the deadline for a blank line that never comes.
//! - The request line is `METHOD SP request-target SP HTTP-version`, single spaces: the method a
//!   token; the version exactly `HTTP/1.0` or `HTTP/1.1` (another `HTTP/d.d`: `505`; anything else,
//!   `HTTP/1.banana` or `http/1.1`: `400`); the target in origin-form (`/metrics?x`) or
//!   absolute-form (`http://host:port/metrics`, routed by its path; RFC 9112 §3.2.2), never
//!   asterisk-form (`*`) or authority-form (`host:port`): `400`.
//! - Header lines are `name: value`, the name a token with no space before the colon (§5.1), no
//!   obs-fold (§5.2), no control characters in values; an HTTP/1.1 request carries exactly one
//!   `Host`, an HTTP/1.0 one at most one (§3.2). Else `400`.
//! - [`negotiate`]: OpenMetrics only when `Accept` names `application/openmetrics-text` (version
//!   1.0.0, 0.0.1 or none) with a q above 0 and at least as high as `text/plain`'s; otherwise
//!   Prometheus text 0.0.4, as client_golang's `expfmt.Negotiate` and client_python do (no
//!   `Accept`, `*/*`: text).

use crate::commands::serve::latest::Format;

/// A parsed request head.
#[derive(Debug, PartialEq)]
pub struct Head {
    /// `GET`, `HEAD`, ... (a token; case matters).
    pub method: String,
    /// The path, without the query (`/` for an absolute-form target with no path).
    pub path: String,
    /// The query (after `?`, without a `#` fragment), if any.
    pub query: Option<String>,
    /// The `Accept` header (several joined with `, `), if any.
    pub accept: Option<String>,
    /// Every header line, `(name, value)` as sent (value trimmed), in order.
    pub fields: Vec<(String, String)>,
}

/// Where the head in `buf` ends: `Ok(Some(n))` when `buf[..n]` is the head and `buf[n..n + 4]` the
/// blank line; `Ok(None)` when more is needed; `Err(400)` at the first bare LF or bare CR.
/// `buf[..scanned]` was looked at before (and needed more): only what follows is scanned again.
pub fn head_end(buf: &[u8], scanned: usize) -> Result<Option<usize>, u16> {
    // The last byte scanned may have been a CR whose LF had not come yet.
    for (i, &b) in buf.iter().enumerate().skip(scanned.saturating_sub(1)) {
        match b {
            b'\n' if i == 0 || buf[i - 1] != b'\r' => return Err(400),
            b'\r' if buf.get(i + 1).is_some_and(|&n| n != b'\n') => return Err(400),
            b'\n' if buf[..=i].ends_with(b"\r\n\r\n") => return Ok(Some(i - 3)),
            _ => {}
        }
    }
    Ok(None)
}

/// RFC 9110 §5.6.2 `tchar`.
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| tchar(b))
}

/// Parses a request head (up to, not including, the blank line); `Err` is the status to answer.
pub fn parse_head(head: &[u8]) -> Result<Head, u16> {
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(400);
    };
    if !token(method) {
        return Err(400);
    }
    let minor = match version {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor] if major.is_ascii_digit() && minor.is_ascii_digit() => {
            if *major != b'1' || !matches!(minor, b'0' | b'1') {
                return Err(505);
            }
            *minor
        }
        _ => return Err(400),
    };
    let (path, query) = target_path(target)?;
    let (mut hosts, mut accept, mut fields) = (0usize, None::<String>, Vec::new());
    for line in lines {
        let colon = line.iter().position(|&b| b == b':').ok_or(400u16)?;
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if !token(name) || value.iter().any(|&b| b != b'\t' && (b < 0x20 || b == 0x7f)) {
            return Err(400);
        }
        let value = String::from_utf8_lossy(value.trim_ascii());
        fields.push((String::from_utf8_lossy(name).into_owned(), value.clone().into_owned()));
        if name.eq_ignore_ascii_case(b"host") {
            hosts += 1;
        } else if name.eq_ignore_ascii_case(b"accept") {
            accept = Some(match accept {
                Some(a) => format!("{a}, {value}"),
                None => value.into_owned(),
            });
        }
    }
    if hosts > 1 || (minor == b'1' && hosts == 0) {
        return Err(400);
    }
    Ok(Head { method: String::from_utf8_lossy(method).into_owned(), path, query, accept, fields })
}

/// The path a request-target names: origin-form as is, absolute-form (`http`/`https`) by the part
/// after its authority; and its query.
fn target_path(target: &[u8]) -> Result<(String, Option<String>), u16> {
    if target.is_empty() || !target.iter().all(|b| b.is_ascii_graphic()) {
        return Err(400);
    }
    let target = std::str::from_utf8(target).map_err(|_| 400u16)?;
    let rest = if target.starts_with('/') {
        target
    } else {
        let (scheme, after) = target.split_once("://").ok_or(400u16)?;
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return Err(400);
        }
        let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
        if authority_end == 0 {
            return Err(400);
        }
        &after[authority_end..]
    };
    let rest = rest.split('#').next().unwrap_or("");
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q.to_owned())),
        None => (rest, None),
    };
    Ok((if path.is_empty() { "/".to_owned() } else { path.to_owned() }, query))
}

/// Picks the format for an `Accept` header (see the module docs).
pub fn negotiate(accept: Option<&str>) -> Format {
    let mut best: Option<(f64, Format)> = None;
    for part in accept.unwrap_or("").split(',') {
        let mut fields = part.split(';').map(str::trim);
        let media = fields.next().unwrap_or("").to_ascii_lowercase();
        let (mut q, mut version) = (Some(1.0), None::<String>);
        for f in fields {
            let Some((k, v)) = f.split_once('=') else { continue };
            let v = v.trim().trim_matches('"');
            match k.trim().to_ascii_lowercase().as_str() {
                "q" => q = v.parse::<f64>().ok().filter(|q| (0.0..=1.0).contains(q)),
                "version" => version = Some(v.to_owned()),
                _ => {}
            }
        }
        let format = match (media.as_str(), version.as_deref()) {
            ("application/openmetrics-text", None | Some("1.0.0" | "0.0.1")) => Format::OpenMetrics,
            ("text/plain", None | Some("0.0.4")) => Format::PrometheusText,
            _ => continue,
        };
        // An unreadable q or q=0: not acceptable. Ties go to the one named first.
        if let Some(q) = q.filter(|&q| q > 0.0)
            && best.is_none_or(|(b, _)| q > b)
        {
            best = Some((q, format));
        }
    }
    best.map_or(Format::PrometheusText, |(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_at_the_first_crlf_blank_line_and_bare_lf_or_cr_is_refused() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nrest", 0), Ok(Some(23)));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: a\r\n", 0), Ok(None));
        assert_eq!(head_end(b"GET / HTTP/1.1\r", 0), Ok(None), "the LF may still come");
        assert_eq!(head_end(b"GET / HTTP/1.1\nHost", 0), Err(400));
        assert_eq!(head_end(b"\n", 0), Err(400));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: a\rb", 0), Err(400));
        // Scanning on from where the last call stopped finds the same.
        assert_eq!(head_end(b"GET / HTTP/1.1\rX", 15), Err(400));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\n", 16), Ok(Some(14)));
    }

    #[test]
    fn request_heads_parse_or_name_the_status_to_answer() {
        let h = parse_head(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\naccept: text/plain;version=0.0.4").unwrap();
        assert_eq!((h.method.as_str(), h.path.as_str(), h.query.as_deref()), ("GET", "/metrics", Some("x=1")));
        assert_eq!(h.fields[1], ("accept".to_owned(), "text/plain;version=0.0.4".to_owned()));
        assert_eq!(h.accept.as_deref(), Some("text/plain;version=0.0.4"));
        let h = parse_head(b"GET https://a:1/healthz#x HTTP/1.0\r\nAccept: a/b\r\nAccept: c/d").unwrap();
        assert_eq!((h.path.as_str(), h.accept.as_deref()), ("/healthz", Some("a/b, c/d")));
        assert_eq!(parse_head(b"GET http://a?q HTTP/1.0").unwrap().path, "/");
        assert_eq!(parse_head(b"M-SEARCH / HTTP/1.1\r\nHost: a").unwrap().method, "M-SEARCH");
        for newer in [&b"GET /metrics HTTP/2.0"[..], b"GET / HTTP/1.2", b"GET / HTTP/0.9", b"GET / HTTP/3.0"] {
            assert_eq!(parse_head(newer), Err(505), "{}", String::from_utf8_lossy(newer));
        }
        for bad in [
            &b"\x00\x01garbage"[..],
            b"GET",
            b"GET metrics HTTP/1.1\r\nHost: a",
            b"GET * HTTP/1.1\r\nHost: a",
            b"CONNECT a:443 HTTP/1.1\r\nHost: a",
            b"GET ftp://a/ HTTP/1.1\r\nHost: a",
            b"GET http:///metrics HTTP/1.1\r\nHost: a",
            b"GET / HTTP/1.banana\r\nHost: a",
            b"GET / http/1.1\r\nHost: a",
            b"GET / HTTP/1.1 \r\nHost: a",
            b"GET /\x7f HTTP/1.1\r\nHost: a",
            b"GET / HTTP/1.1\r\nno colon",
            b"GET / HTTP/1.1\r\nHost: a\r\n folded",
            b"GET / HTTP/1.1\r\nHost : a",
            b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b",
            b"GET / HTTP/1.1",
            b"GET / HTTP/1.0\r\nHost: a\r\nhost: b",
            b"\xff / HTTP/1.1\r\nHost: a",
            b"G(T / HTTP/1.1\r\nHost: a",
        ] {
            assert_eq!(parse_head(bad), Err(400), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn prometheus_text_unless_openmetrics_is_asked_for() {
        assert_eq!(negotiate(None), Format::PrometheusText);
        assert_eq!(negotiate(Some("")), Format::PrometheusText);
        assert_eq!(negotiate(Some("*/*")), Format::PrometheusText);
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
                          text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(negotiate(Some("Application/OpenMetrics-Text; Version=\"1.0.0\"")), Format::OpenMetrics);
        assert_eq!(negotiate(Some("application/openmetrics-text;version=2.0.0")), Format::PrometheusText);
        assert_eq!(negotiate(Some("application/openmetrics-text;q=0")), Format::PrometheusText);
        assert_eq!(negotiate(Some("application/openmetrics-text;q=0.0, text/plain;q=0.1")), Format::PrometheusText);
        assert_eq!(negotiate(Some("text/plain;q=0.9, application/openmetrics-text;q=0.5")), Format::PrometheusText);
        assert_eq!(negotiate(Some("text/plain;q=0.5, application/openmetrics-text;q=0.9")), Format::OpenMetrics);
        assert_eq!(negotiate(Some("application/openmetrics-text, text/plain")), Format::OpenMetrics);
        assert_eq!(negotiate(Some("text/plain, application/openmetrics-text")), Format::PrometheusText);
        assert_eq!(negotiate(Some("application/openmetrics-text;q=nonsense")), Format::PrometheusText);
    }
}
