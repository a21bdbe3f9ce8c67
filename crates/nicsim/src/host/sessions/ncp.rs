//! File sessions over NCP in packet-burst mode (`wire::ncp`), beside the TCP
//! ones: a reader sends one burst read request and the server answers with the
//! whole block in a burst of packets, none of them acknowledged; the reader asks
//! for the next block once it has every packet (after its think time). A read
//! still missing packets `RETRY` after its request asks again for everything from
//! the first packet missing. Data follow the pattern of `wire::endpoint`, so
//! every byte read is checked.

use super::{AnswerTimes, Role, SessionConfig};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::endpoint::{matches_pattern, pattern};
use crate::wire::ncp::{self, End, MAX_DATA};
use crate::wire::{Frame, FrameMeta};

/// How long a reader waits for a burst before asking again for what is
/// missing (assumed: NetWare sets its burst timeout from the round trips it
/// measures; a LAN's are far shorter).
pub const RETRY: Duration = Duration::from_ms(100);

/// A reader: one block outstanding at a time.
struct Read {
    me: End,
    server: [u8; 6],
    conn: u32,
    request: u32,
    block: u32,
    think: Duration,
    start: Duration,
    ask_at: Option<Time>,
    burst_seq: u16,
    /// Which packets of the block outstanding have come.
    got: Vec<bool>,
    retry_at: Option<Time>,
    waits: AnswerTimes,
}

/// A host's NCP sessions: its readers, and whether it serves reads.
#[derive(Default)]
pub struct Ncp {
    me: [u8; 6],
    reads: Vec<Read>,
    /// Blocks served: the request's size is the reader's.
    serves: bool,
    #[allow(clippy::vec_box, reason = "frames travel boxed from the wire")]
    inbox: Vec<Box<Frame>>,
    pub answers_read: u64,
    pub requests_answered: u64,
    pub measured_read: u64,
    pub measured_sent: u64,
    pub bad_payload: u64,
}

impl Ncp {
    /// The NCP sessions among `sessions` (the others are returned); a reader's
    /// server is found by `mac_of` its address.
    pub fn new(
        me: [u8; 6],
        sessions: Vec<SessionConfig>,
        mac_of: impl Fn([u8; 4]) -> Option<[u8; 6]>,
    ) -> Result<(Ncp, Vec<SessionConfig>), String> {
        let mut ncp = Ncp { me, ..Ncp::default() };
        let mut tcp = Vec::new();
        for s in sessions {
            if !s.ncp {
                tcp.push(s);
                continue;
            }
            match s.role {
                Role::Ask { ip, request, answer, think, start, .. } => {
                    let server = mac_of(ip).ok_or_else(|| format!("no station at {ip:?} to read from over NCP"))?;
                    let conn = ncp.reads.len() as u32 + 1;
                    let me = End { node: me, socket: 0x4000 + conn as u16 };
                    let got = Vec::new();
                    let (ask_at, retry_at, waits) = (None, None, AnswerTimes::default());
                    ncp.reads.push(Read {
                        me,
                        server,
                        conn,
                        request,
                        block: answer,
                        think,
                        start,
                        ask_at,
                        burst_seq: 0,
                        got,
                        retry_at,
                        waits,
                    });
                }
                Role::Answer { .. } => ncp.serves = true,
                _ => return Err("only file sessions run over NCP".into()),
            }
        }
        Ok((ncp, tcp))
    }

    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && !self.serves
    }

    pub fn asks(&self) -> bool {
        !self.reads.is_empty()
    }

    pub fn answers(&self) -> bool {
        self.serves
    }

    /// Whether a frame is an IPX packet to this station.
    pub fn claims(&self, frame: &[u8]) -> bool {
        !self.is_empty() && ncp::is_ipx(frame) && frame.get(..6) == Some(&self.me[..])
    }

    pub fn input(&mut self, frame: Box<Frame>) {
        self.inbox.push(frame);
    }

    /// Readers make their first request `start` after `now`.
    pub fn start(&mut self, now: Time) {
        for r in &mut self.reads {
            r.ask_at = Some(now + r.start);
        }
    }

    /// When a reader next has something to do: a request due or a retry.
    pub fn next_timer(&self) -> Option<Time> {
        self.reads.iter().flat_map(|r| [r.ask_at, r.retry_at]).flatten().min()
    }

    /// Answer the requests that came in, take the data, and make the requests
    /// due by `now`: returns the requests made or answered; frames to send go in `out`.
    #[allow(clippy::vec_box, reason = "frames travel boxed to the wire")]
    pub fn run(&mut self, now: Time, measuring: bool, out: &mut Vec<Box<Frame>>) -> u64 {
        let mut requests = 0;
        for f in std::mem::take(&mut self.inbox) {
            let Some(b) = ncp::parse(&f.bytes) else { continue };
            match b.read {
                Some(range) if self.serves => requests += self.answer(&b, range, now, measuring, out),
                Some(_) => {}
                None => self.take(&b, now, measuring),
            }
        }
        for i in 0..self.reads.len() {
            let r = &mut self.reads[i];
            if r.ask_at.is_some_and(|t| t <= now) {
                r.ask_at = None;
                r.got = vec![false; (r.block as usize).div_ceil(MAX_DATA)];
                r.waits.asked(now);
                requests += 1;
                self.ask(i, 0, now, out);
            } else if r.retry_at.is_some_and(|t| t <= now) {
                // A read waiting for a retry misses a packet (it ends when it has them all).
                let first = r.got.iter().position(|g| !g).unwrap_or(0);
                self.ask(i, (first * MAX_DATA) as u32, now, out);
            }
        }
        requests
    }

    /// Reader `i` asks for its block from `from` to the end.
    #[allow(clippy::vec_box, reason = "frames travel boxed to the wire")]
    fn ask(&mut self, i: usize, from: u32, now: Time, out: &mut Vec<Box<Frame>>) {
        let r = &mut self.reads[i];
        r.burst_seq = r.burst_seq.wrapping_add(1);
        r.retry_at = Some(now + RETRY);
        let f = ncp::read_request(r.me, r.server, r.conn, r.burst_seq, (from, r.block - from), r.request as usize);
        out.push(frame(f, now));
    }

    /// The server answers a read of `len` bytes at `offset` of the block.
    #[allow(clippy::vec_box, reason = "frames travel boxed to the wire")]
    fn answer(&mut self, b: &ncp::Burst, (offset, len): (u32, u32), now: Time, measuring: bool, out: &mut Vec<Box<Frame>>) -> u64 {
        self.requests_answered += 1;
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let n = (end - at).min(MAX_DATA as u32);
            let f = ncp::data(self.me, b.from, b.conn, b.burst_seq, (end, at), pattern(at as u64, n as usize));
            out.push(frame(f, now));
            at += n;
        }
        if measuring {
            self.measured_sent += len as u64;
        }
        1
    }

    /// A packet of data for one of the readers.
    fn take(&mut self, b: &ncp::Burst, now: Time, measuring: bool) {
        let Some(r) = self.reads.iter_mut().find(|r| r.me == b.to && r.conn == b.conn) else { return };
        let k = b.offset as usize / MAX_DATA;
        if r.ask_at.is_some() || r.got.get(k).is_none_or(|g| *g) {
            return; // not asked for, or a copy of one already taken
        }
        r.got[k] = true;
        self.bad_payload += !matches_pattern(b.offset as u64, b.data) as u64;
        if measuring {
            self.measured_read += b.data.len() as u64;
        }
        if r.got.iter().all(|g| *g) {
            self.answers_read += 1;
            r.waits.answered(now, measuring);
            r.retry_at = None;
            r.ask_at = Some(now + r.think);
        }
    }

    pub fn waits(&self) -> impl Iterator<Item = &AnswerTimes> {
        self.reads.iter().map(|r| &r.waits)
    }

    pub fn report(&self, r: &mut Report) {
        if !self.is_empty() {
            r.count("ncp_bad_payload", self.bad_payload);
        }
    }
}

fn frame(bytes: Vec<u8>, now: Time) -> Box<Frame> {
    Box::new(Frame { bytes, meta: FrameMeta { created: now, ..FrameMeta::default() } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::{AckPolicy, SocketConfig};

    const SERVER: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const CLIENT: [u8; 6] = [2, 0, 0, 0, 0, 2];

    fn session(role: Role) -> SessionConfig {
        let socket = SocketConfig {
            rx_buffer: 8760,
            tx_buffer: 8760,
            nagle: true,
            ack_delay: None,
            ack_policy: AckPolicy::default(),
            min_rto: Duration::from_ms(1000),
            cubic: false,
            byte_counting: false,
            tso_defer: false,
        };
        SessionConfig { role, port: 524, socket, peer: None, ncp: true }
    }

    fn pair(block: u32) -> (Ncp, Ncp) {
        let ask = Role::Ask { ip: [10, 0, 0, 1], port: 524, request: 64, answer: block, think: Duration::ZERO, start: Duration::ZERO };
        let (server, _) = Ncp::new(SERVER, vec![session(Role::Answer { request: 64, answer: block })], |_| None).expect("a server");
        let (client, _) = Ncp::new(CLIENT, vec![session(ask)], |_| Some(SERVER)).expect("a reader");
        (server, client)
    }

    /// Run `from` at `now` and hand what it sends to `to`, dropping the packets `drop` picks.
    fn exchange(from: &mut Ncp, to: &mut Ncp, now: Time, drop: impl Fn(usize) -> bool) -> usize {
        let mut out = Vec::new();
        from.run(now, true, &mut out);
        let n = out.len();
        for (i, f) in out.into_iter().enumerate() {
            assert!(to.claims(&f.bytes), "a packet to the other end");
            if !drop(i) {
                to.input(f);
            }
        }
        n
    }

    #[test]
    fn one_request_brings_the_whole_block_in_a_burst_and_the_next_request_follows() {
        let (mut server, mut client) = pair(65_536);
        client.start(Time::ZERO);
        assert_eq!(exchange(&mut client, &mut server, Time::ZERO, |_| false), 1, "one read request");
        assert_eq!(exchange(&mut server, &mut client, Time::ZERO, |_| false), 65_536usize.div_ceil(MAX_DATA));
        assert_eq!(exchange(&mut client, &mut server, Time::ZERO, |_| false), 1, "the next request at once");
        assert_eq!((client.answers_read, client.measured_read, client.bad_payload), (1, 65_536, 0));
        assert_eq!((server.requests_answered, server.measured_sent), (1, 65_536), "the second waits for the server's next run");
    }

    #[test]
    fn a_burst_missing_packets_is_asked_for_again_from_the_first_missing_after_the_retry_time() {
        let (mut server, mut client) = pair(10 * MAX_DATA as u32);
        client.start(Time::ZERO);
        exchange(&mut client, &mut server, Time::ZERO, |_| false);
        exchange(&mut server, &mut client, Time::ZERO, |i| i == 3 || i == 7);
        assert_eq!(client.next_timer(), Some(Time::ZERO + RETRY));
        assert_eq!(exchange(&mut client, &mut server, Time::ZERO + Duration::from_ms(50), |_| false), 0, "no retry before its time");
        exchange(&mut client, &mut server, Time::ZERO + RETRY, |_| false);
        assert_eq!(exchange(&mut server, &mut client, Time::ZERO + RETRY, |_| false), 7, "packets 3 to 9 again");
        assert_eq!(exchange(&mut client, &mut server, Time::ZERO + RETRY, |_| false), 1, "complete: the next request");
        assert_eq!((client.answers_read, client.measured_read), (1, 10 * MAX_DATA as u64), "the copies are not counted twice");
    }
}
