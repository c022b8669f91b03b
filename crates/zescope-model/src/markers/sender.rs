//! Who sent a datagram: the credentials the kernel attaches (`SCM_CREDENTIALS`; the socket has
//! `SO_PASSCRED` on from before it was bound, so Linux attaches them to every datagram without
//! the sender doing anything). Only the user zescope runs as may mark: a datagram of another user
//! (possible only if the folder or socket modes were loosened by hand) or without credentials is
//! dropped and counted. Descriptors a sender passes along (`SCM_RIGHTS`) are closed at once.
//!
//! Received through rustix's safe `recvmsg` (no `unsafe` here). Only the uid is read: rustix keeps
//! the sender's pid in a non-zero type, and a sender in another pid namespace has pid 0 there
//! (docs/dependencies.md).

use std::io;
use std::mem::MaybeUninit;
use std::os::unix::net::UnixDatagram;

use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};

/// What the sender check says of a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sender {
    /// Sent by the user zescope runs as.
    Mine,
    /// Sent by the user with this uid.
    OtherUser(u32),
    /// No credentials came with it.
    Unknown,
}

/// The check: the sender's uid (`None`: no credentials) against the user `me`.
pub(super) fn check(uid: Option<u32>, me: u32) -> Sender {
    match uid {
        Some(u) if u == me => Sender::Mine,
        Some(u) => Sender::OtherUser(u),
        None => Sender::Unknown,
    }
}

/// Receives one datagram into `buf`: its length and its sender's uid, if credentials came with it.
pub(super) fn recv(sock: &UnixDatagram, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
    // Credentials and a few descriptors (which are closed); more descriptors are cut off by the
    // kernel, which closes them itself.
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmCredentials(1), ScmRights(8))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(sock, &mut [io::IoSliceMut::new(buf)], &mut control, RecvFlags::CMSG_CLOEXEC)?;
    let mut uid = None;
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmCredentials(c) = m {
            uid = Some(c.uid.as_raw());
        }
    }
    Ok((got.bytes, uid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::net::sockopt;

    #[test]
    fn only_the_same_user_passes_the_check() {
        assert_eq!(check(Some(1000), 1000), Sender::Mine);
        assert_eq!(check(Some(1001), 1000), Sender::OtherUser(1001));
        assert_eq!(check(Some(0), 1000), Sender::OtherUser(0));
        assert_eq!(check(None, 1000), Sender::Unknown);
    }

    #[test]
    fn credentials_come_with_every_datagram_when_the_receiver_asks_and_not_otherwise() {
        let (a, b) = UnixDatagram::pair().unwrap();
        let mut buf = [0u8; 64];
        b.send(b"no creds asked").unwrap();
        assert_eq!(recv(&a, &mut buf).unwrap(), (14, None));
        sockopt::set_socket_passcred(&a, true).unwrap();
        b.send(b"zm1 I 1 x\n").unwrap();
        let (n, uid) = recv(&a, &mut buf).unwrap();
        assert_eq!((&buf[..n], uid), (&b"zm1 I 1 x\n"[..], Some(super::super::folder::my_uid())));
    }
}
