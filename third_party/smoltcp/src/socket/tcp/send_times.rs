//! nicsim: when the data in flight was sent, oldest first, for TSO deferral
//! (`Socket::set_tso_defer`): Linux asks how long ago the oldest unacknowledged
//! send left (`tcp_rtx_queue_head`'s timestamp) to judge whether an ACK is near.

use crate::time::Instant;
use crate::wire::TcpSeqNumber;

/// Sends remembered at most; past this the newest record stretches to cover
/// later sends, so the oldest stays exact and only later heads come out early.
const SENDS: usize = 64;

#[derive(Debug, Clone, Copy)]
pub(super) struct SendTimes {
    /// (sequence number just after the send, when it left), a ring.
    sends: [(TcpSeqNumber, Instant); SENDS],
    first: usize,
    len: usize,
}

impl Default for SendTimes {
    fn default() -> Self {
        SendTimes { sends: [(TcpSeqNumber::default(), Instant::from_micros(0)); SENDS], first: 0, len: 0 }
    }
}

impl SendTimes {
    /// New data up to `end` left at `at` (a resend of old data is not recorded).
    pub fn sent(&mut self, end: TcpSeqNumber, at: Instant) {
        if self.len > 0 {
            let last = &mut self.sends[(self.first + self.len - 1) % SENDS];
            if end <= last.0 {
                return;
            }
            if self.len == SENDS {
                last.0 = end;
                return;
            }
        }
        self.sends[(self.first + self.len) % SENDS] = (end, at);
        self.len += 1;
    }

    /// Everything before `ack` arrived.
    pub fn acked(&mut self, ack: TcpSeqNumber) {
        while self.len > 0 && self.sends[self.first].0 <= ack {
            self.first = (self.first + 1) % SENDS;
            self.len -= 1;
        }
    }

    /// When the oldest send not wholly acknowledged left.
    pub fn oldest(&self) -> Option<Instant> {
        (self.len > 0).then(|| self.sends[self.first].1)
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }
}
