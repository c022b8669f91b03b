//! The marker protocol, version 1: one datagram, one line.
//!
//! ```text
//! zm1 <kind> <t_ns> <name>\n
//! ```
//!
//! - `zm1`: the protocol and its version;
//! - `kind`: `I` (an instant), `B` (a range begins) or `E` (the range of that name ends);
//! - `t_ns`: when, in nanoseconds of the sender's `CLOCK_MONOTONIC` (decimal, no sign);
//! - `name`: 1 to [`MAX_NAME`] bytes of UTF-8 without control characters (spaces are allowed);
//! - the trailing newline is required; the whole message is at most [`MAX_MESSAGE`] bytes.
//!
//! Anything else is malformed: receivers count it and drop it.

use std::fmt;

/// Longest name, in bytes.
pub const MAX_NAME: usize = 200;
/// Longest message, in bytes (a longest name and the longest time fit).
pub const MAX_MESSAGE: usize = 256;
/// What every message starts with.
pub const MAGIC: &str = "zm1";

/// What a marker marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A point in time (`I`).
    Instant,
    /// A range of this name begins (`B`).
    Begin,
    /// The newest open range of this name ends (`E`).
    End,
}

impl Kind {
    /// The protocol's letter for it.
    pub fn letter(self) -> u8 {
        match self {
            Kind::Instant => b'I',
            Kind::Begin => b'B',
            Kind::End => b'E',
        }
    }
}

/// A marker as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// What it marks.
    pub kind: Kind,
    /// When, in ns of `CLOCK_MONOTONIC`.
    pub t_ns: u64,
    /// Its name.
    pub name: &'a str,
}

/// Why a message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Longer than [`MAX_MESSAGE`] bytes.
    TooLong,
    /// It does not start with `zm1 `.
    NotZm1,
    /// The kind is not `I`, `B` or `E`.
    BadKind,
    /// The time is not a decimal number of ns that fits 63 bits.
    BadTime,
    /// The name is empty, longer than [`MAX_NAME`], not UTF-8 or holds a control character.
    BadName,
    /// No newline at the end.
    NoNewline,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Malformed::TooLong => "longer than 256 bytes",
            Malformed::NotZm1 => "does not start with \"zm1 \"",
            Malformed::BadKind => "the kind is not I, B or E",
            Malformed::BadTime => "the time is not a number of nanoseconds",
            Malformed::BadName => "the name is empty, longer than 200 bytes, not UTF-8 or holds control characters",
            Malformed::NoNewline => "does not end with a newline",
        })
    }
}

impl std::error::Error for Malformed {}

/// Checks a name: 1..=[`MAX_NAME`] bytes, no control characters.
pub fn check_name(name: &str) -> Result<(), Malformed> {
    match name_problem(name) {
        Some(_) => Err(Malformed::BadName),
        None => Ok(()),
    }
}

/// What is wrong with `name` as a marker's name, said for its sender ("is empty", "is 250 bytes
/// long, over the 200 a name may have", "holds a control character (U+000A)"); `None`: nothing.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".to_owned());
    }
    if name.len() > MAX_NAME {
        return Some(format!("is {} bytes long, over the {MAX_NAME} a name may have", name.len()));
    }
    let c = name.chars().find(|c| c.is_control())?;
    Some(format!("holds a control character (U+{:04X}; a name is one line of text)", u32::from(c)))
}

/// Writes `zm1 <kind> <t_ns> <name>\n` into `buf`; returns its length. The name must have passed
/// [`check_name`] (it is cut at [`MAX_NAME`] bytes otherwise, on a character boundary).
pub fn encode(buf: &mut [u8; MAX_MESSAGE], kind: Kind, t_ns: u64, name: &str) -> usize {
    let mut end = name.len().min(MAX_NAME);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let name = &name.as_bytes()[..end];
    buf[..4].copy_from_slice(b"zm1 ");
    buf[4] = kind.letter();
    buf[5] = b' ';
    let mut digits = [0u8; 20];
    let mut n = digits.len();
    let mut t = t_ns;
    loop {
        n -= 1;
        digits[n] = b'0' + (t % 10) as u8;
        t /= 10;
        if t == 0 {
            break;
        }
    }
    let mut at = 6;
    let d = &digits[n..];
    buf[at..at + d.len()].copy_from_slice(d);
    at += d.len();
    buf[at] = b' ';
    at += 1;
    buf[at..at + name.len()].copy_from_slice(name);
    at += name.len();
    buf[at] = b'\n';
    at + 1
}

/// Parses one message; the error says what is wrong with it.
pub fn parse(msg: &[u8]) -> Result<Message<'_>, Malformed> {
    if msg.len() > MAX_MESSAGE {
        return Err(Malformed::TooLong);
    }
    let body = msg.strip_suffix(b"\n").ok_or(Malformed::NoNewline)?;
    let rest = body.strip_prefix(b"zm1 ").ok_or(Malformed::NotZm1)?;
    let kind = match rest.first() {
        Some(b'I') => Kind::Instant,
        Some(b'B') => Kind::Begin,
        Some(b'E') => Kind::End,
        _ => return Err(Malformed::BadKind),
    };
    let rest = rest.get(1..).and_then(|r| r.strip_prefix(b" ")).ok_or(Malformed::BadKind)?;
    let sp = rest.iter().position(|&b| b == b' ').ok_or(Malformed::BadTime)?;
    let (digits, name) = (&rest[..sp], &rest[sp + 1..]);
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(Malformed::BadTime);
    }
    let t_ns = digits.iter().fold(0u64, |t, &d| t * 10 + u64::from(d - b'0'));
    if t_ns > i64::MAX as u64 {
        return Err(Malformed::BadTime);
    }
    let name = std::str::from_utf8(name).map_err(|_| Malformed::BadName)?;
    check_name(name)?;
    Ok(Message { kind, t_ns, name })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_encoded_parses_back() {
        let mut buf = [0u8; MAX_MESSAGE];
        for (kind, t, name) in
            [(Kind::Instant, 0, "a"), (Kind::Begin, 123_456_789_012, "phase 2 (ü)"), (Kind::End, 9, "x")]
        {
            let n = encode(&mut buf, kind, t, name);
            assert_eq!(parse(&buf[..n]), Ok(Message { kind, t_ns: t, name }));
        }
        let n = encode(&mut buf, Kind::Begin, 42, "p");
        assert_eq!(&buf[..n], b"zm1 B 42 p\n");
    }

    #[test]
    fn the_longest_name_and_time_fit() {
        let mut buf = [0u8; MAX_MESSAGE];
        let name = "n".repeat(MAX_NAME);
        let n = encode(&mut buf, Kind::End, i64::MAX as u64, &name);
        assert!(n <= MAX_MESSAGE);
        assert_eq!(parse(&buf[..n]).unwrap().name, name);
        // A longer name is cut on a character boundary.
        let long = "é".repeat(150);
        let n = encode(&mut buf, Kind::Instant, 1, &long);
        assert_eq!(parse(&buf[..n]).unwrap().name.len(), MAX_NAME);
    }

    #[test]
    fn malformed_messages_say_why() {
        let cases: &[(&[u8], Malformed)] = &[
            (b"zm1 I 5 a", Malformed::NoNewline),
            (b"zm2 I 5 a\n", Malformed::NotZm1),
            (b"zm1 X 5 a\n", Malformed::BadKind),
            (b"zm1 I5 a\n", Malformed::BadKind),
            (b"zm1 I\n", Malformed::BadKind),
            (b"zm1 I -5 a\n", Malformed::BadTime),
            (b"zm1 I 5\n", Malformed::BadTime),
            (b"zm1 I 99999999999999999999 a\n", Malformed::BadTime),
            (b"zm1 I 9223372036854775808 a\n", Malformed::BadTime),
            (b"zm1 I 5 \n", Malformed::BadName),
            (b"zm1 I 5 a\tb\n", Malformed::BadName),
            (b"zm1 I 5 \xff\n", Malformed::BadName),
            (b"zm1 I 5 a\nb\n", Malformed::BadName),
            (b"", Malformed::NoNewline),
        ];
        for (msg, why) in cases {
            assert_eq!(parse(msg), Err(*why), "{:?}", String::from_utf8_lossy(msg));
        }
        let mut big = b"zm1 I 5 ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 300));
        big.push(b'\n');
        assert_eq!(parse(&big), Err(Malformed::TooLong));
        let mut long_name = b"zm1 I 5 ".to_vec();
        long_name.extend(std::iter::repeat_n(b'a', MAX_NAME + 1));
        long_name.push(b'\n');
        assert_eq!(parse(&long_name), Err(Malformed::BadName));
    }

    /// A sender is told which rule its name breaks (`zescope mark ""` printed "the name the name
    /// is empty, longer than 200 bytes, not UTF-8 or holds control characters").
    #[test]
    fn a_bad_name_is_told_what_is_wrong_with_it() {
        assert_eq!(name_problem(""), Some("is empty".to_owned()));
        assert_eq!(name_problem(&"é".repeat(101)), Some("is 202 bytes long, over the 200 a name may have".to_owned()));
        let tab = name_problem("a\tb").unwrap();
        assert_eq!(tab, "holds a control character (U+0009; a name is one line of text)");
        for good in ["a", "phase 2 (ü)", &"n".repeat(MAX_NAME)] {
            assert_eq!((name_problem(good), check_name(good)), (None, Ok(())), "{good:?}");
        }
        for bad in ["", "two\nlines", &"n".repeat(MAX_NAME + 1)] {
            assert_eq!(check_name(bad), Err(Malformed::BadName), "{bad:?}");
        }
    }
}
