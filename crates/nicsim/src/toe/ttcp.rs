//! The TTCP-style application: the sender writes `bytes` in messages of
//! `message` bytes (the last one shorter if need be) and closes; the receiver reads until the sender's FIN. The bytes come
//! from a seeded generator and both ends keep a SHA-256 of the stream, so a
//! transfer that arrives complete and in order shows equal digests.

use sha2::{Digest, Sha256};

use crate::time::Time;
use crate::toe::config::TtcpConfig;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The stream's bytes from `offset`, `len` of them.
pub fn content(seed: u64, offset: u64, len: usize) -> Vec<u8> {
    (offset..offset + len as u64).map(|i| (splitmix(seed ^ (i / 8)) >> ((i % 8) * 8)) as u8).collect()
}

pub struct Ttcp {
    pub cfg: TtcpConfig,
    /// Sender: messages begun (their call made) and bytes handed on.
    pub messages: u64,
    pub offered: u64,
    /// Receiver: bytes taken.
    pub received: u64,
    /// Sender: a send call is under way (its message not yet all taken).
    in_call: bool,
    digest: Sha256,
    /// Receiver: when the sender's FIN was read.
    pub done: Option<Time>,
}

impl Ttcp {
    pub fn new(cfg: TtcpConfig) -> Ttcp {
        Ttcp { cfg, messages: 0, offered: 0, received: 0, in_call: false, digest: Sha256::new(), done: None }
    }

    pub fn total(&self) -> u64 {
        self.cfg.bytes
    }

    /// Sender: the unsent rest of the current message, at most `max` bytes.
    pub fn next_bytes(&self, max: usize) -> Vec<u8> {
        let in_message = self.offered % self.cfg.message as u64;
        let left = (self.cfg.message as u64 - in_message).min(self.total() - self.offered);
        content(self.cfg.content_seed, self.offered, (left as usize).min(max))
    }

    /// Sender: `bytes` more were taken; true when that finished a message.
    pub fn taken(&mut self, bytes: &[u8]) -> bool {
        self.digest.update(bytes);
        self.offered += bytes.len() as u64;
        let finished = !bytes.is_empty() && (self.offered.is_multiple_of(self.cfg.message as u64) || self.all_offered());
        self.in_call &= !finished;
        finished
    }

    /// Sender: start the next send call unless one is under way; true if started.
    pub fn begin_call(&mut self) -> bool {
        if self.in_call || self.offered == self.total() {
            return false;
        }
        self.in_call = true;
        self.messages += 1;
        true
    }

    pub fn all_offered(&self) -> bool {
        self.offered == self.total()
    }

    /// Receiver: bytes arrived in the application.
    pub fn receive(&mut self, bytes: &[u8]) {
        self.digest.update(bytes);
        self.received += bytes.len() as u64;
    }

    /// Receive calls to take `bytes`: one per message-sized read.
    pub fn reads_for(&self, bytes: usize) -> u64 {
        (bytes as u64).div_ceil(self.cfg.message as u64)
    }

    /// The first 48 bits of the stream's SHA-256, as a number a report can hold.
    pub fn digest48(&self) -> u64 {
        let d = self.digest.clone().finalize();
        d[..6].iter().fold(0, |acc, b| acc << 8 | *b as u64)
    }

    /// The stream's SHA-256 so far, in hex, as `sha256sum` writes it.
    pub fn sha256_hex(&self) -> String {
        self.digest.clone().finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(s.offered, 30);
        assert_eq!(s.digest48(), r.digest48());
        let mut wrong = Ttcp::new(cfg(10, 3));
        wrong.receive(&content(9, 1, 30));
        assert_ne!(wrong.digest48(), s.digest48());
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
        assert_eq!((calls, s.offered), (3, 25), "10 + 10 + 5, not 30");
        assert!(s.all_offered() && s.next_bytes(100).is_empty());
    }
}
