//! Who holds the HTTP server's connection slots.
//!
//! At most `total` connections at once and at most `per_peer` from one peer address. A
//! connection is *idle* until it has sent a whole request head, and again once its answer is
//! written (while the server drains what it sent beyond the head); it is *busy* in between. When a
//! new connection finds its peer's slots, or all slots, taken, it displaces the connection that has
//! been idle longest (of that peer, or of all) — shut down at once, its slot handed over — and is
//! refused only when every slot it could have is busy. So clients that connect and say nothing, or
//! trickle bytes, cannot keep a scrape out: they are shed first. A connection whose whole head
//! already waits in its socket, not yet read by its thread (a scrape on a loaded machine, its
//! thread not scheduled yet), is about to be busy: it is never the one displaced.
//!
//! [`Slots::admit`] hands out a [`Slot`], a guard that gives the slot back when dropped — also
//! when the thread holding it unwinds from a panic.

use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The slot table; shared between the accept thread and the connections.
#[derive(Debug)]
pub struct Slots {
    total: usize,
    per_peer: usize,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    held: Vec<Held>,
}

#[derive(Debug)]
struct Held {
    id: u64,
    peer: IpAddr,
    /// Since when it is idle; `None` while busy.
    idle_since: Option<Instant>,
    /// A handle on the connection's socket, to shut it down when it is displaced.
    socket: TcpStream,
}

/// Why a connection got no slot.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Every slot it could have is busy answering.
    Busy,
    /// Its socket could not be shared with the table (out of file descriptors).
    NoHandle,
}

/// A connection's hold on a slot; dropping it gives the slot back.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<Slots>,
    id: u64,
}

impl Slots {
    /// A table of `total` slots, at most `per_peer` of them for one peer address.
    pub fn new(total: usize, per_peer: usize) -> Arc<Slots> {
        Arc::new(Slots { total, per_peer, table: Mutex::new(Table::default()) })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for `socket`, a new connection from `peer`, idle; displaces the longest idle
    /// connection when its peer's slots or all slots are taken.
    pub fn admit(self: &Arc<Self>, peer: IpAddr, socket: &TcpStream) -> Result<Slot, Refused> {
        let mut t = self.lock();
        if t.held.iter().filter(|h| h.peer == peer).count() >= self.per_peer {
            t.shed(|h| h.peer == peer).ok_or(Refused::Busy)?;
        }
        if t.held.len() >= self.total {
            t.shed(|_| true).ok_or(Refused::Busy)?;
        }
        let socket = socket.try_clone().map_err(|_| Refused::NoHandle)?;
        t.next += 1;
        let id = t.next;
        t.held.push(Held { id, peer, idle_since: Some(Instant::now()), socket });
        Ok(Slot { slots: Arc::clone(self), id })
    }

    /// Connections holding a slot.
    pub fn held(&self) -> usize {
        self.lock().held.len()
    }
}

impl Table {
    /// Displaces the longest idle connection that `of` picks; `None` when none is idle.
    fn shed(&mut self, of: impl Fn(&Held) -> bool) -> Option<()> {
        let (i, _) = self
            .held
            .iter()
            .enumerate()
            .filter(|(_, h)| of(h) && !head_waits(&h.socket))
            .filter_map(|(i, h)| Some((i, h.idle_since?)))
            .min_by_key(|&(_, since)| since)?;
        let h = self.held.swap_remove(i);
        // Wakes its thread from the read it waits in; that thread then finds its slot gone.
        let _ = h.socket.shutdown(Shutdown::Both);
        Some(())
    }
}

/// Whether the end of a request head (a blank line) waits unread in `socket`: looked at without
/// taking it and without waiting (`MSG_PEEK | MSG_DONTWAIT`), in the first 8 KiB.
fn head_waits(socket: &TcpStream) -> bool {
    use rustix::net::{RecvFlags, recv};
    let mut buf = [0u8; 8192];
    match recv(socket, &mut buf[..], RecvFlags::PEEK | RecvFlags::DONTWAIT) {
        Ok((n, _)) => buf[..n].windows(2).any(|w| w == b"\n\n") || buf[..n].windows(4).any(|w| w == b"\r\n\r\n"),
        Err(_) => false,
    }
}

impl Slot {
    /// Marks the connection busy (a whole head arrived); false when it was displaced meanwhile.
    pub fn busy(&self) -> bool {
        self.set(None)
    }

    /// Marks the connection idle again (its answer is written); false when it was displaced.
    pub fn idle(&self) -> bool {
        self.set(Some(Instant::now()))
    }

    /// Whether it still holds its slot (was not displaced).
    pub fn held(&self) -> bool {
        self.slots.lock().held.iter().any(|h| h.id == self.id)
    }

    fn set(&self, idle_since: Option<Instant>) -> bool {
        let mut t = self.slots.lock();
        let Some(h) = t.held.iter_mut().find(|h| h.id == self.id) else { return false };
        h.idle_since = idle_since;
        true
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut t = self.slots.lock();
        if let Some(i) = t.held.iter().position(|h| h.id == self.id) {
            t.held.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{Ipv4Addr, TcpListener};

    /// A connected pair over loopback: (the server's end, the client's end).
    fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (l.accept().unwrap().0, client)
    }

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn the_longest_idle_is_displaced_busy_ones_never() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let slots = Slots::new(3, 2);
        let (s1, mut c1) = pair(&l);
        let (s2, _c2) = pair(&l);
        let first = slots.admit(A, &s1).unwrap();
        let second = slots.admit(A, &s2).unwrap();
        assert!(second.busy());
        // A's third displaces A's longest idle: the first, whose socket is shut down.
        let (s3, _c3) = pair(&l);
        let third = slots.admit(A, &s3).unwrap();
        assert!(!first.held() && !first.busy() && second.held());
        c1.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        assert_eq!(c1.read(&mut [0u8; 8]).unwrap(), 0, "the displaced client sees its connection closed");
        assert!(third.busy());
        // A has two busy: a fourth of A is refused, one of B still fits.
        let (s4, _c4) = pair(&l);
        assert_eq!(slots.admit(A, &s4).unwrap_err(), Refused::Busy);
        let b = slots.admit(B, &s4).unwrap();
        assert_eq!(slots.held(), 3);
        // All three taken: another B displaces the idle B, not the busy A's.
        let (s5, _c5) = pair(&l);
        let b2 = slots.admit(B, &s5).unwrap();
        assert!(!b.held() && second.held() && third.held());
        assert!(b2.busy());
        let (s6, _c6) = pair(&l);
        assert_eq!(slots.admit(B, &s6).unwrap_err(), Refused::Busy, "all busy");
        // Answered connections are idle again, and shed in the order they went idle.
        assert!(third.idle() && second.idle());
        let c = slots.admit(B, &s6).unwrap();
        assert!(!third.held() && second.held() && c.held());
        drop((first, second, b, b2, c));
        assert_eq!(slots.held(), 0);
    }

    #[test]
    fn a_connection_whose_whole_head_waits_unread_is_not_displaced() {
        use std::io::Write as _;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let slots = Slots::new(4, 2);
        let (s1, mut c1) = pair(&l);
        let (s2, mut c2) = pair(&l);
        let scrape = slots.admit(A, &s1).unwrap();
        let drip = slots.admit(A, &s2).unwrap();
        // The older one has sent its whole head (its thread has not read it yet); the newer one
        // only part of one.
        c1.write_all(b"GET /metrics HTTP/1.1\r\nHost: z\r\n\r\n").unwrap();
        c2.write_all(b"GET /metrics HTTP/1.1\r\nX-Slow: a").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (s3, _c3) = pair(&l);
        let third = slots.admit(A, &s3).unwrap();
        assert!(scrape.held() && !drip.held(), "the trickling one goes, the waiting head stays");
        // With nothing else idle, the waiting head is still not displaced: the newcomer is refused.
        assert!(third.busy());
        let (s4, _c4) = pair(&l);
        assert_eq!(slots.admit(A, &s4).unwrap_err(), Refused::Busy);
        drop((scrape, third));
    }

    #[test]
    fn a_slot_comes_back_when_its_thread_panics() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let slots = Slots::new(1, 1);
        let (s, _c) = pair(&l);
        let slot = slots.admit(A, &s).unwrap();
        assert!(slot.busy());
        let joined = std::thread::spawn(move || {
            let _slot = slot;
            panic!("a handler's bug");
        })
        .join();
        assert!(joined.is_err());
        assert_eq!(slots.held(), 0);
        assert!(slots.admit(A, &s).is_ok());
    }
}
