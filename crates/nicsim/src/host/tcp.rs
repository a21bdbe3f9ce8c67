//! Enough TCP to carry bulk request/response traffic honestly: a sender limited
//! by the peer's advertised window and the MSS, in-order delivery (out-of-order
//! segments are dropped and answered with a duplicate ACK), an ACK for every
//! second segment or after the delayed-ACK time, fast retransmit after three
//! duplicate ACKs and a retransmission timeout, both going back to the first
//! unacknowledged byte. Connections exist from time zero (no handshake, no FIN);
//! there is no congestion control, which the receiver's window bounds here.

use crate::host::segment::{matches_pattern, pattern, tcp_frame, Addr, Segment};
use crate::time::{Duration, Time};
use crate::wire::Frame;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub mss: u32,
    /// The receive window this end advertises, bytes (at most 65535: no scaling).
    pub window: u32,
    /// Acknowledge at once after this many in-order segments.
    pub ack_every: u32,
    pub delayed_ack: Duration,
    pub rto: Duration,
}

/// The first sequence number of both directions (no handshake).
const ISS: u32 = 1;

#[derive(Debug)]
pub struct Conn {
    cfg: TcpConfig,
    pub local: Addr,
    pub remote: Addr,
    snd_una: u32,
    snd_nxt: u32,
    /// End of the data the application has queued.
    snd_max: u32,
    peer_window: u32,
    dupacks: u32,
    rto_at: Option<Time>,
    rcv_nxt: u32,
    unacked_segments: u32,
    ack_at: Option<Time>,
    ack_now: bool,
    ip_id: u16,
    pub retransmits: u64,
    pub out_of_order: u64,
    pub bad_payload: u64,
}

fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl Conn {
    pub fn new(cfg: TcpConfig, local: Addr, remote: Addr) -> Self {
        Conn {
            cfg,
            local,
            remote,
            snd_una: ISS,
            snd_nxt: ISS,
            snd_max: ISS,
            // Until the peer speaks, assume it offers what we do.
            peer_window: cfg.window,
            dupacks: 0,
            rto_at: None,
            rcv_nxt: ISS,
            unacked_segments: 0,
            ack_at: None,
            ack_now: false,
            ip_id: 0,
            retransmits: 0,
            out_of_order: 0,
            bad_payload: 0,
        }
    }

    /// The application hands `bytes` more to send.
    pub fn queue(&mut self, bytes: u32) {
        self.snd_max = self.snd_max.wrapping_add(bytes);
    }

    /// Bytes queued and not yet acknowledged.
    pub fn unacknowledged(&self) -> u32 {
        self.snd_max.wrapping_sub(self.snd_una)
    }

    /// Take in a segment for this connection; returns the bytes delivered in order.
    pub fn input(&mut self, seg: &Segment, payload: &[u8], now: Time) -> u32 {
        if let Some(ack) = seg.ack {
            self.peer_window = seg.window as u32;
            if after(ack, self.snd_una) && !after(ack, self.snd_max) {
                self.snd_una = ack;
                if after(ack, self.snd_nxt) {
                    self.snd_nxt = ack;
                }
                self.dupacks = 0;
                self.rto_at = (self.snd_nxt != self.snd_una).then(|| now + self.cfg.rto);
            } else if ack == self.snd_una && payload.is_empty() && self.snd_nxt != self.snd_una {
                self.dupacks += 1;
                if self.dupacks == 3 {
                    self.go_back(now);
                }
            }
        }
        if payload.is_empty() {
            return 0;
        }
        if seg.seq != self.rcv_nxt {
            self.out_of_order += 1;
            self.ack_now = true;
            return 0;
        }
        if !matches_pattern(seg.seq.wrapping_sub(ISS) as u64, payload) {
            self.bad_payload += 1;
        }
        self.rcv_nxt = self.rcv_nxt.wrapping_add(payload.len() as u32);
        self.unacked_segments += 1;
        if self.unacked_segments >= self.cfg.ack_every {
            self.ack_now = true;
        } else {
            self.ack_at.get_or_insert(now + self.cfg.delayed_ack);
        }
        payload.len() as u32
    }

    fn go_back(&mut self, now: Time) {
        self.retransmits += 1;
        self.snd_nxt = self.snd_una;
        self.dupacks = 0;
        self.rto_at = Some(now + self.cfg.rto);
    }

    /// Timers due at `now`: a retransmission timeout, a delayed ACK.
    pub fn on_timer(&mut self, now: Time) {
        if self.rto_at.is_some_and(|t| t <= now) {
            self.go_back(now);
        }
        if self.ack_at.is_some_and(|t| t <= now) {
            self.ack_now = true;
        }
    }

    /// The earliest timer this connection needs.
    pub fn next_timer(&self) -> Option<Time> {
        match (self.rto_at, self.ack_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Segments to send now: new data the window allows, else an ACK if one is due.
    pub fn output(&mut self, now: Time, out: &mut Vec<Frame>) {
        let before = out.len();
        loop {
            let in_flight = self.snd_nxt.wrapping_sub(self.snd_una);
            let left = self.snd_max.wrapping_sub(self.snd_nxt);
            let room = self.peer_window.saturating_sub(in_flight);
            let len = left.min(self.cfg.mss).min(room);
            // Send full segments, or the last piece of what is queued.
            if len == 0 || (len < self.cfg.mss && len < left) {
                break;
            }
            out.push(self.segment(self.snd_nxt, len, len == left));
            self.snd_nxt = self.snd_nxt.wrapping_add(len);
            self.rto_at.get_or_insert(now + self.cfg.rto);
        }
        if out.len() == before && self.ack_now {
            out.push(self.segment(self.snd_nxt, 0, false));
        }
    }

    fn segment(&mut self, seq: u32, len: u32, psh: bool) -> Frame {
        self.ack_now = false;
        self.ack_at = None;
        self.unacked_segments = 0;
        self.ip_id = self.ip_id.wrapping_add(1);
        let payload = pattern(seq.wrapping_sub(ISS) as u64, len as usize);
        tcp_frame(self.local, self.remote, self.ip_id, seq, self.rcv_nxt, self.cfg.window.min(65_535) as u16, psh, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TcpConfig {
        TcpConfig { mss: 1460, window: 8760, ack_every: 2, delayed_ack: Duration::from_ms(200), rto: Duration::from_ms(300) }
    }
    fn pair() -> (Conn, Conn) {
        let a = Addr { mac: [2, 0, 0, 0, 0, 1], ip: [198, 18, 0, 1], port: 5000 };
        let b = Addr { mac: [2, 0, 0, 0, 0, 2], ip: [198, 18, 0, 2], port: 6000 };
        (Conn::new(cfg(), a, b), Conn::new(cfg(), b, a))
    }
    fn deliver(to: &mut Conn, frames: &[Frame], now: Time) -> u32 {
        frames.iter().map(|f| to.input(&Segment::parse(&f.bytes).unwrap(), &f.bytes[Segment::parse(&f.bytes).unwrap().payload], now)).sum()
    }

    #[test]
    fn a_window_of_data_then_acks_every_second_segment() {
        let (mut s, mut r) = pair();
        let t = Time::ZERO;
        s.queue(100_000);
        let mut out = vec![];
        s.output(t, &mut out);
        assert_eq!(out.len(), 6, "8760 bytes of window is six full segments");
        let mut acks = vec![];
        for f in &out {
            deliver(&mut r, std::slice::from_ref(f), t);
            r.output(t, &mut acks);
        }
        assert_eq!(acks.len(), 3, "one ACK per two segments");
        deliver(&mut s, &acks, t);
        let mut more = vec![];
        s.output(t, &mut more);
        assert_eq!(more.len(), 6, "the window reopened");
        assert_eq!(r.bad_payload, 0);
    }

    #[test]
    fn a_lost_segment_is_resent_after_three_duplicate_acks() {
        let (mut s, mut r) = pair();
        let t = Time::ZERO;
        s.queue(5 * 1460);
        let mut out = vec![];
        s.output(t, &mut out);
        // Lose the first; the other four arrive out of order.
        let mut acks = vec![];
        for f in &out[1..] {
            deliver(&mut r, std::slice::from_ref(f), t);
            r.output(t, &mut acks);
        }
        assert_eq!(r.out_of_order, 4);
        deliver(&mut s, &acks, t);
        assert_eq!(s.retransmits, 1);
        let mut again = vec![];
        s.output(t, &mut again);
        assert_eq!(deliver(&mut r, &again, t), 5 * 1460, "go-back-N resends all five");
    }

    #[test]
    fn the_retransmission_timer_recovers_a_lost_tail() {
        let (mut s, mut r) = pair();
        s.queue(1460);
        let mut out = vec![];
        s.output(Time::ZERO, &mut out);
        let due = s.next_timer().unwrap();
        assert_eq!(due, Time::ZERO + Duration::from_ms(300));
        s.on_timer(due);
        let mut again = vec![];
        s.output(due, &mut again);
        assert_eq!(deliver(&mut r, &again, due), 1460);
        // One segment: the receiver waits for its delayed-ACK timer.
        let mut ack = vec![];
        r.output(due, &mut ack);
        assert!(ack.is_empty());
        let t = r.next_timer().unwrap();
        r.on_timer(t);
        r.output(t, &mut ack);
        assert_eq!(ack.len(), 1);
    }
}
