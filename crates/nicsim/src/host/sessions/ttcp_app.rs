//! A TTCP end's application, the same over the host's stack
//! (`host::sessions`) and over an offload engine (`host::offload`): a sender
//! writes its stream's bytes from its start until all are written, then
//! closes; a receiver reads until the sender's FIN. Every byte goes through
//! the stream's digest (`host::stream`). The socket takes the bytes as it can:
//! a stack's as room allows, an offload engine's a message of one call.

use super::Role;
use crate::host::stream::Stream;
use crate::time::Duration;

#[derive(Debug)]
pub struct TtcpApp {
    pub stream: Stream,
    /// It writes (else it reads).
    sender: bool,
    /// The bytes a sender writes in all (none for a receiver).
    total: u64,
    /// When a sender starts, from the run's start.
    pub start: Duration,
    /// A sender has started writing.
    started: bool,
}

impl TtcpApp {
    /// The application of a TTCP role; none for a file session's.
    pub fn new(role: &Role) -> Option<TtcpApp> {
        let (stream, sender, total, start) = match *role {
            Role::Send { message, bytes, seed, start, .. } => (Stream::new(message, seed), true, bytes, start),
            Role::Receive { message } => (Stream::new(message, 0), false, 0, Duration::ZERO),
            Role::Ask { .. } | Role::Answer { .. } => return None,
        };
        Some(TtcpApp { stream, sender, total, start, started: false })
    }

    pub fn sender(&self) -> bool {
        self.sender
    }

    /// A sender starts writing.
    pub fn begin(&mut self) {
        self.started = true;
    }

    /// The bytes a started sender has still to hand its socket.
    pub fn owed(&self) -> u64 {
        if self.started {
            self.total - self.stream.bytes
        } else {
            0
        }
    }

    /// A sender has handed its socket all its bytes.
    pub fn all_written(&self) -> bool {
        self.stream.bytes == self.total
    }

    /// The bytes left of the call under way: what one call writes or reads.
    pub fn left_of_call(&self) -> usize {
        let m = self.stream.message as u64;
        (m - self.stream.bytes % m) as usize
    }

    /// The next at most `room` bytes it owes (not yet written).
    pub fn next(&self, room: usize) -> Vec<u8> {
        self.stream.next(room.min(self.owed() as usize))
    }

    /// Its next bytes written over `out` (no more than it owes): the calls that took.
    pub fn write(&mut self, out: &mut [u8]) -> u64 {
        debug_assert!(out.len() as u64 <= self.owed(), "never more than it owes");
        self.stream.write(out)
    }

    /// The socket took `data` (written or read); returns the calls that took.
    pub fn through(&mut self, data: &[u8]) -> u64 {
        self.stream.through(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender(bytes: u64) -> TtcpApp {
        let role = Role::Send { ip: [10, 0, 0, 2], port: 5001, message: 8192, bytes, seed: 7, start: Duration::from_ms(1) };
        TtcpApp::new(&role).expect("a TTCP role")
    }

    #[test]
    fn a_sender_owes_nothing_before_its_start_then_its_bytes_down_to_none() {
        let mut t = sender(20_000);
        assert!(t.sender());
        assert_eq!(t.owed(), 0, "not started");
        t.begin();
        assert_eq!(t.owed(), 20_000);
        let first = t.next(t.left_of_call());
        assert_eq!(first.len(), 8192, "one call of the message size");
        assert_eq!(t.through(&first), 1);
        let rest = t.next(usize::MAX);
        assert_eq!(rest.len(), 20_000 - 8192, "never more than it owes");
        assert_eq!(t.through(&rest), 2, "the rest begins two more calls");
        assert!(t.all_written());
        assert_eq!(t.owed(), 0);
    }

    #[test]
    fn a_receiver_writes_nothing_and_file_roles_have_no_ttcp_application() {
        let t = TtcpApp::new(&Role::Receive { message: 4096 }).expect("a TTCP role");
        assert!(!t.sender() && t.owed() == 0 && t.all_written());
        assert_eq!(t.left_of_call(), 4096);
        assert!(TtcpApp::new(&Role::Answer { request: 64, answer: 100 }).is_none());
    }

    #[test]
    fn what_it_writes_is_the_streams_next_bytes_and_what_it_reads_the_digest_checks() {
        let mut a = sender(10_000);
        a.begin();
        let mut b = TtcpApp::new(&Role::Receive { message: 8192 }).expect("a TTCP role");
        while !a.all_written() {
            let d = a.next(1460);
            a.through(&d);
            b.through(&d);
        }
        assert_eq!(a.stream.xxh128_hex(), b.stream.xxh128_hex());
        assert_eq!(b.stream.bytes, 10_000);
    }
}
