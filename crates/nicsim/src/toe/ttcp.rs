//! The TTCP-style application: the sender writes `bytes` in messages of
//! `message` bytes (the last one shorter if need be) and closes; the receiver reads until the sender's FIN. The bytes come
//! from a seeded generator and both ends keep a SHA-256 of the stream, so a
//! transfer that arrives complete and in order shows equal digests.

use crate::host::stream::Stream;
use crate::toe::config::TtcpConfig;

/// The TTCP application of a TCP host: the stream (bytes through the
/// application, their digest, when the receiver read the FIN) is the one a
/// modelled host's TTCP keeps (`host::stream`); the calls are counted here,
/// where the host charges for each.
pub struct Ttcp {
    pub cfg: TtcpConfig,
    /// Sender: messages begun (their call made).
    pub messages: u64,
    /// Sender: a send call is under way (its message not yet all taken).
    in_call: bool,
    pub stream: Stream,
}

impl Ttcp {
    pub fn new(cfg: TtcpConfig) -> Ttcp {
        let stream = Stream::new(cfg.message, cfg.content_seed);
        Ttcp { cfg, messages: 0, in_call: false, stream }
    }

    /// Bytes offered (sender) or received (receiver).
    pub fn bytes(&self) -> u64 {
        self.stream.bytes
    }

    pub fn total(&self) -> u64 {
        self.cfg.bytes
    }

    /// Sender: the unsent rest of the current message, at most `max` bytes.
    pub fn next_bytes(&self, max: usize) -> Vec<u8> {
        let offered = self.bytes();
        let in_message = offered % self.cfg.message as u64;
        let left = (self.cfg.message as u64 - in_message).min(self.total() - offered);
        self.stream.next((left as usize).min(max))
    }

    /// Sender: `bytes` more were taken; true when that finished a message.
    pub fn taken(&mut self, bytes: &[u8]) -> bool {
        self.stream.through(bytes);
        let finished = !bytes.is_empty() && (self.bytes().is_multiple_of(self.cfg.message as u64) || self.all_offered());
        self.in_call &= !finished;
        finished
    }

    /// Sender: start the next send call unless one is under way; true if started.
    pub fn begin_call(&mut self) -> bool {
        if self.in_call || self.all_offered() {
            return false;
        }
        self.in_call = true;
        self.messages += 1;
        true
    }

    pub fn all_offered(&self) -> bool {
        self.bytes() == self.total()
    }

    /// Receiver: bytes arrived in the application.
    pub fn receive(&mut self, bytes: &[u8]) {
        self.stream.through(bytes);
    }

    /// Receive calls to take `bytes`: one per message-sized read.
    pub fn reads_for(&self, bytes: usize) -> u64 {
        (bytes as u64).div_ceil(self.cfg.message as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::stream::content;
    use crate::time::Duration;
    use crate::toe::config::Role;

    fn cfg(message: u32, count: u64) -> TtcpConfig {
        TtcpConfig {
            role: Role::Send,
            message,
            bytes: message as u64 * count,
            port: 5001,
            peer_ip: [0; 4],
            start: Duration::ZERO,
            content_seed: 9,
        }
    }

    #[test]
    fn pieces_of_the_stream_join_up_and_digests_agree_only_on_equal_bytes() {
        assert_eq!(content(1, 0, 20)[5..], content(1, 5, 15)[..]);
        let mut s = Ttcp::new(cfg(10, 3));
        let mut r = Ttcp::new(cfg(10, 3));
        while !s.all_offered() {
            let b = s.next_bytes(7);
            s.taken(&b);
            r.receive(&b);
        }
        assert_eq!(s.bytes(), 30);
        assert_eq!(s.stream.digest48(), r.stream.digest48());
        let mut wrong = Ttcp::new(cfg(10, 3));
        wrong.receive(&content(9, 1, 30));
        assert_ne!(wrong.stream.digest48(), s.stream.digest48());
    }

    #[test]
    fn a_message_ends_exactly_at_its_size() {
        let mut s = Ttcp::new(cfg(10, 2));
        s.begin_call();
        s.messages = 0;
        assert!(!s.taken(&s.next_bytes(4)));
        assert_eq!(s.next_bytes(100).len(), 6, "only the rest of the message");
        assert!(s.taken(&s.next_bytes(100)));
        assert!(s.begin_call() && !s.begin_call(), "one call per message");
        assert_eq!(s.messages, 1);
    }

    #[test]
    fn bytes_that_are_not_a_multiple_of_the_message_end_with_a_short_message() {
        let mut s = Ttcp::new(TtcpConfig { bytes: 25, ..cfg(10, 1) });
        let mut calls = 0;
        while s.begin_call() {
            calls += 1;
            while !s.taken(&s.next_bytes(100)) {}
        }
        assert_eq!((calls, s.bytes()), (3, 25), "10 + 10 + 5, not 30");
        assert!(s.all_offered() && s.next_bytes(100).is_empty());
    }
}
