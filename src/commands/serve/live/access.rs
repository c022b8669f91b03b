//! Who may watch the live feed: anyone connecting over loopback (which is also what an `ssh -L`
//! tunnel looks like to the server), and beyond loopback only a viewer that sends the token of
//! `--token-file` (`Authorization: Bearer TOKEN`), compared in constant time. Without
//! `--token-file` the feed is offered on loopback only; `/metrics` is not concerned.

use std::net::IpAddr;

/// The policy of one server.
#[derive(Clone, Default)]
pub struct Access {
    token: Option<Vec<u8>>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("Access").field("token", &self.token.as_ref().map(|_| "…")).finish()
    }
}

/// Why a viewer may not watch; each is answered with its status and says what to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Beyond loopback, and the server has no token: `403`.
    LoopbackOnly,
    /// Beyond loopback without a token: `401`.
    NoToken,
    /// Beyond loopback with another token: `401`.
    WrongToken,
}

impl Refusal {
    /// The HTTP status it is answered with.
    pub fn status(self) -> u16 {
        match self {
            Refusal::LoopbackOnly => 403,
            Refusal::NoToken | Refusal::WrongToken => 401,
        }
    }

    /// What the answer's body says.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::LoopbackOnly => {
                "the live feed is offered on loopback only: start serve with --token-file to offer it beyond, \
                 or watch through `ssh -L PORT:localhost:PORT HOST`"
            }
            Refusal::NoToken => {
                "the live feed beyond loopback needs the server's token: send `Authorization: Bearer TOKEN`"
            }
            Refusal::WrongToken => "the token sent is not the server's",
        }
    }
}

impl Access {
    /// Loopback only.
    pub fn loopback_only() -> Access {
        Access { token: None }
    }

    /// Loopback, and beyond it whoever sends `token`.
    pub fn with_token(token: &[u8]) -> Result<Access, String> {
        if token.is_empty() {
            return Err("the token is empty".into());
        }
        Ok(Access { token: Some(token.to_vec()) })
    }

    /// The token of `--token-file`: the file's first line, without surrounding white space.
    pub fn from_token_file(path: &std::path::Path) -> Result<Access, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("--token-file {}: {e}", path.display()))?;
        let token = text.lines().next().unwrap_or("").trim();
        Access::with_token(token.as_bytes()).map_err(|e| format!("--token-file {}: {e}", path.display()))
    }

    /// Whether a viewer from `peer` that sent `authorization` (the header's value) may watch.
    pub fn check(&self, peer: IpAddr, authorization: Option<&str>) -> Result<(), Refusal> {
        if peer.to_canonical().is_loopback() {
            return Ok(());
        }
        let Some(token) = &self.token else { return Err(Refusal::LoopbackOnly) };
        let sent = authorization.and_then(|a| {
            let (scheme, rest) = a.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
        match sent {
            None => Err(Refusal::NoToken),
            Some(s) if same(s.as_bytes(), token) => Ok(()),
            Some(_) => Err(Refusal::WrongToken),
        }
    }
}

/// `a == b` in a time that depends on their lengths only, not on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..n {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    const AWAY: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 7));

    #[test]
    fn loopback_needs_no_token_and_beyond_it_only_the_token_passes() {
        let open = Access::loopback_only();
        assert_eq!(open.check(LOCAL, None), Ok(()));
        assert_eq!(open.check("::1".parse().unwrap(), None), Ok(()));
        assert_eq!(open.check("::ffff:127.0.0.1".parse().unwrap(), None), Ok(()));
        assert_eq!(open.check(AWAY, Some("Bearer x")), Err(Refusal::LoopbackOnly));
        let t = Access::with_token(b"s3cret").unwrap();
        assert_eq!(t.check(LOCAL, None), Ok(()));
        assert_eq!(t.check(AWAY, None), Err(Refusal::NoToken));
        assert_eq!(t.check(AWAY, Some("Basic s3cret")), Err(Refusal::NoToken));
        assert_eq!(t.check(AWAY, Some("Bearer s3cre")), Err(Refusal::WrongToken));
        assert_eq!(t.check(AWAY, Some("Bearer s3cret2")), Err(Refusal::WrongToken));
        assert_eq!(t.check(AWAY, Some("Bearer s3creT")), Err(Refusal::WrongToken));
        assert_eq!(t.check(AWAY, Some("bearer  s3cret ")), Ok(()));
        assert!(Access::with_token(b"").is_err());
        assert!(!format!("{t:?}").contains("s3cret"), "the token is never printed");
    }

    #[test]
    fn the_comparison_is_equality() {
        assert!(same(b"", b""));
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abc\0"));
        assert!(!same(b"", b"\0"));
    }
}
