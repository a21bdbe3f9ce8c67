//! TCP sessions over the one stack (`crate::stack`), for a modelled host and an
//! ideal host alike: an end that asks for a block or file and waits for all of
//! it before asking again (after a think time), or one that answers each whole
//! request with a block; or either end of a TTCP bulk transfer (`host::stream`).
//! Request and answer bytes follow the pattern of `wire::endpoint`, so every
//! byte an application reads is checked; a TTCP stream is checked by digest. The sessions cost nothing here;
//! `Work` says what happened and the caller charges its processors for it.

mod answer_times;
mod calls;
mod figures;
mod file_app;
mod ncp;
#[cfg(test)]
mod tests;
mod ttcp_app;
mod turns;

pub use answer_times::AnswerTimes;
pub use file_app::FileApp;
pub use ttcp_app::TtcpApp;
pub use turns::Turns;

use rustc_hash::FxHashMap;

use crate::host::stream::Stream;
use crate::stack::tally::Tally;
use crate::stack::{Sock, SocketConfig, Stack, StackConfig};
use crate::time::{Duration, Time};
use crate::wire::Frame;

/// What one end of a session does.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// At `start`, connect to `ip`:`port`; send `request` bytes, read `answer`
    /// bytes, wait `think`, ask again.
    Ask { ip: [u8; 4], port: u16, request: u32, answer: u32, think: Duration, start: Duration },
    /// Listen; answer each whole `request` bytes with `answer` bytes.
    Answer { request: u32, answer: u32 },
    /// TTCP sender: at `start`, connect to `ip`:`port` and write `bytes`
    /// of the stream seeded by `seed` in calls of `message` bytes; then close.
    Send { ip: [u8; 4], port: u16, message: u32, bytes: u64, seed: u64, start: Duration },
    /// TTCP receiver: listen; read in calls of `message` bytes until the sender closes.
    Receive { message: u32 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SessionConfig {
    pub role: Role,
    /// This end's port.
    pub port: u16,
    pub socket: SocketConfig,
    /// The far end's address, where it is known before it connects: which of
    /// a host's adapters carries the session.
    pub peer: Option<[u8; 4]>,
    /// A file session over NCP in packet-burst mode (IPX), not TCP.
    pub ncp: bool,
}

/// A session's state beyond its socket.
struct Session {
    cfg: SessionConfig,
    sock: Sock,
    /// The socket's send queue after the last run (what it drops is acknowledged).
    queued: usize,
    /// An asking session's next request (a sender's start) is due then.
    ask_at: Option<Time>,
    app: App,
}

/// What runs on a session's socket.
enum App {
    File(FileApp),
    Ttcp(Box<TtcpApp>),
}

impl Session {
    fn stream(&self) -> Option<&Stream> {
        match &self.app {
            App::Ttcp(t) => Some(&t.stream),
            App::File(_) => None,
        }
    }

    fn file(&self) -> Option<&FileApp> {
        match &self.app {
            App::File(f) => Some(f),
            App::Ttcp(_) => None,
        }
    }
}

/// What a run of the sessions did, for the caller's cost model.
#[derive(Debug, Default)]
pub struct Work {
    /// Frames to send, each with the adapter it leaves by.
    pub out: Vec<(usize, Box<Frame>)>,
    /// Requests made or answered.
    pub requests: u64,
    /// Bytes a TTCP end copied between its buffers and the socket's.
    pub copied: u64,
}

/// Socket buffer for sending: the application's data waits here until the
/// window lets it go.
pub const SEND_BUFFER: usize = 65_536;

pub struct Sessions {
    stack: Stack,
    /// The file sessions over NCP.
    ncp: ncp::Ncp,
    ip: [u8; 4],
    sessions: Vec<Session>,
    /// The adapter each far end was last heard on (a MAC learned per port), or
    /// before that the first that reaches it.
    routes: FxHashMap<[u8; 6], usize>,
    /// The next run visits every session (a timer, a request made), not only
    /// those whose sockets the stack polled.
    visit_all: bool,
    /// A TTCP end makes one read or write call a step (a modelled host's
    /// process), not all it can at once (an ideal host, at no cost).
    one_call: bool,
    /// Sessions whose applications may have a call to make, in turn.
    due: std::collections::VecDeque<usize>,
    is_due: Vec<bool>,
    /// Sessions with a request due (an `ask_at`), so that finding the next
    /// timer does not walk every session when none waits.
    asks_waiting: usize,
    /// Per adapter: whether it segments large sends and sums TCP checksums
    /// (TSO; the driver does both in software for the others, GSO), or `None`
    /// for one that does not carry the stack (it runs a workload of its own).
    segments: Vec<Option<bool>>,
    /// The first adapter that carries the stack.
    first: usize,
    measured_read: u64,
    measured_acked: u64,
    /// A run's frames and the sessions it visits, kept for the next run's
    /// use: a run is made for every frame, and these were two allocations.
    #[allow(clippy::vec_box, reason = "frames travel boxed from the stack to the wire: a move is a pointer")]
    frames_buf: Vec<Box<Frame>>,
    visit_buf: Vec<usize>,
}

impl Sessions {
    /// One adapter per entry of `segments` (whether it segments large sends:
    /// if any does, the stack makes them; `None` if it does not carry the
    /// stack); `routes`, the adapter that reaches a station not heard from
    /// yet. Sessions listen or connect at once.
    pub fn new(
        stack: &StackConfig,
        seed: u64,
        sessions: Vec<SessionConfig>,
        segments: Vec<Option<bool>>,
        routes: &[([u8; 6], usize)],
    ) -> Result<Sessions, String> {
        let (ncp, sessions) = ncp::Ncp::new(stack.mac, sessions, |ip| stack.neighbor(ip))?;
        let tso = StackConfig { tso: segments.iter().flatten().any(|s| *s), ..stack.clone() };
        let mut s = Stack::new(&tso, seed);
        let mut list = Vec::new();
        for cfg in sessions {
            let sock = s.open(&cfg.socket);
            debug_assert_eq!(sock.0, list.len(), "session i has socket i");
            let app = match cfg.role {
                Role::Ask { ip, port, start, .. } if start == Duration::ZERO => {
                    s.connect(sock, ip, port, cfg.port)?;
                    App::File(FileApp::new(&cfg.role))
                }
                // A sender, or a session that asks later, connects at its start.
                Role::Ask { .. } => App::File(FileApp::new(&cfg.role)),
                Role::Send { .. } => App::Ttcp(Box::new(TtcpApp::new(&cfg.role).expect("a TTCP role"))),
                Role::Answer { .. } => {
                    s.listen(sock, cfg.port)?;
                    App::File(FileApp::new(&cfg.role))
                }
                Role::Receive { .. } => {
                    s.listen(sock, cfg.port)?;
                    App::Ttcp(Box::new(TtcpApp::new(&cfg.role).expect("a TTCP role")))
                }
            };
            list.push(Session { cfg, sock, queued: 0, ask_at: None, app });
        }
        // A TTCP transfer's figures count its own connection's frames: those
        // of the whole stack, unless other sessions share it.
        if list.len() > 1 {
            s.watched = list.iter().find(|x| x.stream().is_some()).map(|x| Tally::of_port(x.cfg.port));
        }
        let list_len = list.len();
        Ok(Sessions {
            stack: s,
            ncp,
            ip: stack.ip,
            sessions: list,
            routes: routes.iter().copied().collect(),
            visit_all: true,
            one_call: false,
            due: Default::default(),
            is_due: vec![false; list_len],
            asks_waiting: 0,
            first: segments.iter().position(Option::is_some).unwrap_or(0),
            segments: if segments.is_empty() { vec![Some(false)] } else { segments },
            measured_read: 0,
            measured_acked: 0,
            frames_buf: Vec::new(),
            visit_buf: Vec::new(),
        })
    }

    /// Asking sessions make their first request.
    pub fn start(&mut self, now: Time) -> Work {
        self.ncp.start(now);
        for s in &mut self.sessions {
            let start = match s.cfg.role {
                Role::Ask { start, .. } | Role::Send { start, .. } => start,
                _ => continue,
            };
            s.ask_at = Some(now + start);
            self.asks_waiting += 1;
        }
        self.timer(now, false)
    }

    /// Whether a frame is this stack's to take: ARP, or TCP or ICMP in IPv4 to
    /// its address (it has no UDP sockets: a sink counts UDP); IPX to it when
    /// it has NCP sessions.
    pub fn claims(&self, frame: &[u8]) -> bool {
        match frame.get(12..14) {
            Some([0x81, 0x37]) => self.ncp.claims(frame),
            Some([0x08, 0x06]) => true,
            Some([0x08, 0x00]) => frame.get(30..34) == Some(&self.ip[..]) && matches!(frame.get(23), Some(1 | 6)),
            _ => false,
        }
    }

    /// A frame that came in by adapter `port`; the stack takes it in at `run`.
    pub fn input(&mut self, port: usize, frame: Box<Frame>) {
        // With one adapter every frame leaves by it: nothing to learn.
        if self.segments.len() > 1 {
            if let Some(src) = frame.bytes.get(6..12) {
                self.routes.insert(src.try_into().expect("six bytes"), port);
            }
        }
        if crate::wire::ncp::is_ipx(&frame.bytes) {
            self.ncp.input(frame);
        } else {
            self.stack.input(frame);
        }
    }

    /// Requests due by `now` are made, then the stack runs (a timer may concern
    /// any session).
    pub fn timer(&mut self, now: Time, measuring: bool) -> Work {
        self.visit_all = true;
        let mut work = Work::default();
        for s in &mut self.sessions {
            if s.ask_at.is_some_and(|at| at <= now) {
                s.ask_at = None;
                self.asks_waiting -= 1;
                match (&s.cfg.role, &mut s.app) {
                    (&Role::Ask { ip, port, .. }, App::File(f)) => {
                        if self.stack.closed(s.sock) {
                            self.stack.connect(s.sock, ip, port, s.cfg.port).expect("addresses are checked with the scenario");
                        }
                        f.ask(now);
                        work.requests += 1;
                    }
                    (&Role::Send { ip, port, .. }, App::Ttcp(t)) => {
                        self.stack.connect(s.sock, ip, port, s.cfg.port).expect("addresses are checked with the scenario");
                        t.begin();
                    }
                    _ => {}
                }
            }
        }
        self.run(now, measuring, work)
    }

    /// Take in waiting frames, let each application act on what arrived and what
    /// was acknowledged, and send what is due.
    pub fn run(&mut self, now: Time, measuring: bool, work: Work) -> Work {
        let (mut answer, apps) = self.run_apart(now, measuring, work);
        answer.out.extend(apps.out);
        Work { requests: answer.requests + apps.requests, copied: answer.copied + apps.copied, out: answer.out }
    }

    /// As `run`, with the stack's own answer to what came in (ACKs, data an ACK
    /// let go) apart from what the applications then did and sent: a processor
    /// sends the answer when its protocol work ends, before the applications'.
    pub fn run_apart(&mut self, now: Time, measuring: bool, mut work: Work) -> (Work, Work) {
        let mut answer = Work::default();
        let mut frames = std::mem::take(&mut self.frames_buf);
        self.stack.poll_into(now, &mut frames);
        for mut f in frames.drain(..) {
            f.meta.created = now;
            self.route(f, &mut answer.out);
        }
        let mut visit = std::mem::take(&mut self.visit_buf);
        visit.clear();
        if std::mem::take(&mut self.visit_all) {
            visit.extend(0..self.sessions.len());
        } else {
            visit.extend(self.stack.polled().iter().map(|s| s.0));
        }
        let mut acted = false;
        if self.one_call {
            // A file session's reads and writes are the socket layer's, at
            // once; a TTCP end waits its turn for its next call, the first
            // in turn makes it now.
            for &i in &visit {
                if self.sessions[i].stream().is_some() {
                    self.make_due(i);
                } else {
                    acted |= self.act(i, now, measuring, &mut work, &mut frames);
                }
            }
            acted |= self.next_call(now, measuring, &mut work, &mut frames);
        } else {
            for &i in &visit {
                acted |= self.act(i, now, measuring, &mut work, &mut frames);
            }
        }
        self.visit_buf = visit;
        // What the applications read or wrote may send more (data, a window update).
        if acted {
            self.stack.poll_into(now, &mut frames);
        }
        if !self.ncp.is_empty() {
            work.requests += self.ncp.run(now, measuring, &mut frames);
        }
        for mut f in frames.drain(..) {
            f.meta.created = now;
            self.route(f, &mut work.out);
        }
        self.frames_buf = frames;
        (answer, work)
    }

    /// A TTCP end closes its side when its part is done: the sender once all
    /// its bytes are written, the receiver once it has read the sender's FIN.
    /// Returns whether it closed.
    fn end_stream(stack: &mut Stack, s: &mut Session, now: Time) -> bool {
        let App::Ttcp(t) = &mut s.app else { return false };
        let sender = t.sender();
        let all_written = t.all_written();
        let st = &mut t.stream;
        let finished = if sender {
            if st.closed && st.done.is_none() && stack.send_queue(s.sock) == 0 {
                st.done = Some(now);
            }
            all_written
        } else {
            let fin = stack.peer_finished(s.sock);
            if fin && st.done.is_none() {
                st.done = Some(now);
            }
            fin
        };
        if finished && !st.closed {
            st.closed = true;
            stack.close(s.sock);
            return true;
        }
        false
    }

    /// A frame from the stack to the adapter its far end is on; a broadcast
    /// (an ARP request) to every adapter. (The driver cuts a large send for an
    /// adapter that does not segment: `Machine::charge`.)
    fn route(&self, frame: Box<Frame>, out: &mut Vec<(usize, Box<Frame>)>) {
        let dst: [u8; 6] = frame.bytes[..6].try_into().expect("an Ethernet header");
        if dst == [0xff; 6] {
            for p in (0..self.segments.len()).filter(|p| *p != self.first && self.segments[*p].is_some()) {
                out.push((p, frame.clone()));
            }
            out.push((self.first, frame));
            return;
        }
        let p = self.routes.get(&dst).copied().filter(|p| self.segments[*p].is_some()).unwrap_or(self.first);
        out.push((p, frame));
    }

    /// When the sessions next need to run: a stack timer or a request due. Once
    /// every session's connection is closed the stack needs none: TIME-WAIT's
    /// timer would only stretch the run (a FIN sent again still finds the socket).
    pub fn next_timer(&mut self, now: Time) -> Option<Time> {
        let asks = if self.asks_waiting > 0 { self.sessions.iter().filter_map(|s| s.ask_at).min() } else { None };
        let done = !self.sessions.is_empty() && self.sessions.iter().all(|s| self.stack.closed(s.sock));
        let stack = if done { None } else { self.stack.poll_at(now) };
        [stack, asks, self.ncp.next_timer()].into_iter().flatten().min()
    }
}
