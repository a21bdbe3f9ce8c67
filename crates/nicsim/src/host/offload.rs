//! A host's side of a TCP offload engine adapter (`toe::engine`): the
//! applications' calls become messages to the adapter, written word by word
//! across the bus (small sends inside the message, large ones copied to pinned
//! buffers the adapter fetches, unless the host's buffers are pinned already);
//! the adapter's completions and received data come back as messages the
//! interrupt handler takes, one at a time, and the application then reads and
//! posts its buffers again. Each socket on the engine serves one application:
//! a TTCP end (`host::sessions::TtcpApp`) or a file session (`host::sessions::FileApp`,
//! the same as over the host's own stack).

use crate::bus::HostBus;
use crate::device::{Device, Message};
use crate::host::sessions::{FileApp, Role, TtcpApp};
use crate::observe::Report;
use crate::time::{Clock, Duration, Time};
use crate::toe::engine::{EngineConfig, Open};

/// A message to the adapter is a 16-byte header, then any inline data.
const MESSAGE_HEADER: usize = 16;

/// The TTCP end on the engine: its socket and application; send calls made,
/// and sends the adapter has not completed.
pub struct Ttcp {
    pub s: usize,
    pub app: TtcpApp,
    pub calls: u64,
    outstanding: u32,
    /// The sender waits for a completion.
    blocked: bool,
}

/// The host's driver for an offload engine (reached by messages and the
/// interrupt) and the applications on the host that use it.
pub struct Offload {
    /// What the engine was built from: its sockets, its message queues.
    cfg: EngineConfig,
    pub ttcp: Option<Ttcp>,
    /// The file sessions, by socket.
    files: Vec<(usize, FileApp)>,
    pub messages: u64,
    pub completions: u64,
    pub deliveries: u64,
}

/// A host step's work with the adapter: its cycles, the time it stalls to
/// (copies, programmed I/O), and the messages it leaves for the adapter.
pub struct Call {
    pub cycles: u64,
    pub until: Time,
    pub to_adapter: Vec<Message>,
    /// The sender may make its next call at once.
    pub again: bool,
    /// File sessions that ask (first, or again after their think time) then.
    pub asks: Vec<(usize, Time)>,
}

/// What a host call costs: its processor, its copy and its bus.
pub struct Costs<'a> {
    pub clock: Clock,
    pub syscall: u64,
    pub copy_ns_per_byte: f64,
    pub bus: &'a mut HostBus,
}

impl Call {
    fn at(now: Time) -> Call {
        Call { cycles: 0, until: now, to_adapter: vec![], again: false, asks: vec![] }
    }

    /// A call of `syscall` cycles from where this one got to.
    fn syscall(&mut self, c: &Costs) -> Time {
        self.cycles += c.syscall;
        self.until + c.clock.cycles(c.syscall)
    }
}

impl Offload {
    /// The driver for the offload engine `cfg` describes; the engine's socket
    /// `i` serves the session of `roles[i]`.
    pub fn new(cfg: EngineConfig, roles: &[Role]) -> Offload {
        let mut ttcp = None;
        let mut files = Vec::new();
        for (s, role) in roles.iter().enumerate() {
            match TtcpApp::new(role) {
                Some(app) => ttcp = Some(Ttcp { s, app, calls: 0, outstanding: 0, blocked: false }),
                None => files.push((s, FileApp::new(role))),
            }
        }
        Offload { cfg, ttcp, files, messages: 0, completions: 0, deliveries: 0 }
    }

    /// The local port whose frames the engine's TCP figures are to count:
    /// the TTCP connection's, where other sessions share the engine (alone,
    /// the whole engine's are its own).
    pub fn watched(&self) -> Option<u16> {
        self.ttcp_port().filter(|_| self.cfg.sockets.len() > 1)
    }

    /// The TTCP end's port, where there is one.
    pub fn ttcp_port(&self) -> Option<u16> {
        self.ttcp.as_ref().map(|t| local_port(&self.cfg.sockets[t.s].open))
    }

    /// The time after `at` when a message with `data` inline bytes has been
    /// written, word by word, and its doorbell rung: the processor waits for
    /// each write to post.
    fn write_message(&mut self, bus: &mut HostBus, mut at: Time, data: usize) -> Time {
        self.messages += 1;
        for _ in 0..(MESSAGE_HEADER + data).div_ceil(4) + 1 {
            at = bus.register_write(at);
        }
        at
    }

    /// A message of `w` with no data inside, after a call.
    fn message(&mut self, call: &mut Call, c: &mut Costs, w: Message) {
        let at = call.syscall(c);
        call.until = self.write_message(c.bus, at, 0);
        call.to_adapter.push(w);
    }

    /// A send call of `bytes` on socket `s`: inside the message, or copied to a
    /// pinned buffer the adapter fetches.
    fn send_bytes(&mut self, call: &mut Call, c: &mut Costs, s: usize, bytes: Vec<u8>) {
        let inline = bytes.len() <= self.cfg.adapter.inline_max as usize;
        let at = call.syscall(c);
        call.until = if inline {
            self.write_message(c.bus, at, bytes.len())
        } else {
            let at = at + copy_time(c.copy_ns_per_byte, bytes.len());
            self.write_message(c.bus, at, 0)
        };
        call.to_adapter.push(Message::SendData { s, bytes, inline });
    }

    /// The applications open their sockets: listen or connect, posting their
    /// receive buffers (all but a TTCP sender); a file session that asks makes
    /// its first request, or does all this at its start.
    pub fn open(&mut self, now: Time, c: &mut Costs) -> Call {
        let mut call = Call::at(now);
        for s in 0..self.cfg.sockets.len() {
            match self.file(s) {
                Some(f) if f.start > Duration::ZERO => call.asks.push((s, now + f.start)),
                Some(_) => self.ask_on(&mut call, c, s),
                None => {
                    self.connect(&mut call, c, s);
                    if !self.ttcp.as_ref().is_some_and(|t| t.s == s && t.app.sender()) {
                        let depth = self.cfg.adapter.queue_depth;
                        self.message(&mut call, c, Message::PostReceive(s, depth));
                    }
                }
            }
        }
        call
    }

    /// Socket `s` connects; a listener has listened since the engine started.
    fn connect(&mut self, call: &mut Call, c: &mut Costs, s: usize) {
        if !matches!(self.cfg.sockets[s].open, Open::Listen(_)) {
            self.message(call, c, Message::OpenSocket(s));
        }
    }

    /// File session `s` asks: a listener or an asker that is not open yet
    /// opens its socket and posts its receive buffers; an asker then requests.
    fn ask_on(&mut self, call: &mut Call, c: &mut Costs, s: usize) {
        let f = self.file(s).expect("a file session's socket");
        if !std::mem::replace(&mut f.opened, true) {
            self.connect(call, c, s);
            let depth = self.cfg.adapter.queue_depth;
            self.message(call, c, Message::PostReceive(s, depth));
        }
        let now = call.until;
        if let Some(bytes) = self.file(s).filter(|f| f.asks()).map(|f| {
            let len = f.ask(now);
            f.write_whole(len)
        }) {
            self.send_bytes(call, c, s, bytes);
        }
    }

    fn file(&mut self, s: usize) -> Option<&mut FileApp> {
        self.files.iter_mut().find(|(i, _)| *i == s).map(|(_, f)| f)
    }

    /// One TTCP send call: the next message goes to the adapter; the last one
    /// is followed by the close.
    pub fn send(&mut self, now: Time, c: &mut Costs) -> Option<Call> {
        let depth = self.cfg.adapter.queue_depth;
        let t = self.ttcp.as_mut()?;
        if t.app.all_written() || t.blocked {
            return None;
        }
        // One message per call, the last one shorter when the bytes run out.
        t.app.begin();
        t.calls += 1;
        let bytes = t.app.next(t.app.stream.message as usize);
        t.app.through(&bytes);
        t.outstanding += 1;
        let s = t.s;
        let mut call = Call::at(now);
        self.send_bytes(&mut call, c, s, bytes);
        let t = self.ttcp.as_mut().expect("looked at");
        if t.app.all_written() {
            call.until = self.write_message(c.bus, call.until, 0);
            call.to_adapter.push(Message::CloseSocket(s));
        } else if t.outstanding < depth {
            call.again = true;
        } else {
            t.blocked = true;
        }
        Some(call)
    }

    /// A file session asks at its start, or again after its think time.
    pub fn ask(&mut self, s: usize, now: Time, c: &mut Costs) -> Call {
        let mut call = Call::at(now);
        self.ask_on(&mut call, c, s);
        call
    }

    /// The application's part of a message from the adapter: a completion lets
    /// a blocked sender go on; received data is read (a call per buffer, and
    /// its copy), a file session answers or asks again, and the buffers are
    /// posted again.
    pub fn take(&mut self, w: Message, now: Time, c: &mut Costs, measuring: bool) -> Call {
        let mut call = Call::at(now);
        match w {
            Message::Completion(s, n) => {
                self.completions += n as u64;
                if let Some(t) = self.ttcp.as_mut().filter(|t| t.s == s) {
                    t.outstanding -= n;
                    call.again = std::mem::take(&mut t.blocked);
                }
            }
            Message::Delivery { s, bytes, buffers, fin } => {
                self.deliveries += 1;
                let Some(t) = self.ttcp.as_mut().filter(|t| t.s == s) else {
                    call.cycles = c.syscall * buffers as u64;
                    call.until = now + c.clock.cycles(call.cycles) + copy_time(c.copy_ns_per_byte, bytes.len());
                    let f = self.file(s).expect("a socket serves an application");
                    f.take(&bytes);
                    let reply = f.turn(call.until, measuring);
                    let replies: Vec<Vec<u8>> = (0..reply.writes).map(|_| f.write_whole(reply.each)).collect();
                    for r in replies {
                        self.send_bytes(&mut call, c, s, r);
                    }
                    call.asks.extend(reply.think.map(|t| (s, call.until + t)));
                    self.message(&mut call, c, Message::PostReceive(s, buffers));
                    return call;
                };
                call.cycles = c.syscall * (bytes.len() as u64).div_ceil(t.app.stream.message as u64);
                let read = now + c.clock.cycles(call.cycles) + copy_time(c.copy_ns_per_byte, bytes.len());
                t.app.through(&bytes);
                call.until = read;
                if fin {
                    t.app.stream.done = Some(read);
                } else if buffers > 0 {
                    self.message(&mut call, c, Message::PostReceive(s, buffers));
                }
            }
            other => unreachable!("{other:?} is not a message to the host"),
        }
        call
    }
}

impl Offload {
    /// The applications' figures (named as a host stack's sessions name them),
    /// the engine's TCP counts and its processor's work.
    pub fn report(&self, device: &dyn Device, r: &mut Report, end: Time) {
        if let Some(t) = &self.ttcp {
            let sent = t.app.all_written() && t.outstanding == 0;
            let done = if t.app.sender() { sent } else { t.app.stream.done.is_some() };
            r.count("ttcp_bytes", t.app.stream.bytes).count("transfer_complete", done as u64);
            r.count("ttcp_messages", t.calls).count("ttcp_digest48", t.app.stream.digest48());
        }
        FileApp::report(self.files.iter().map(|(_, f)| f), r);
        device.report(r, end, Duration::ZERO);
        r.count("host_messages", self.messages).count("completions", self.completions).count("deliveries", self.deliveries);
    }
}

fn local_port(open: &Open) -> u16 {
    match *open {
        Open::Listen(port) | Open::Connect { local: port, .. } => port,
    }
}

fn copy_time(ns_per_byte: f64, bytes: usize) -> Duration {
    Duration((ns_per_byte * bytes as f64 * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::PartPlan;

    /// The HP study's host under test: a TTCP sender of 4,000,000 bytes in
    /// 8,192-byte calls over the i960RN engine, and its bus.
    fn hp_sender() -> (Offload, HostBus) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/papers/hp2001/send.toml");
        let plan = crate::scenario::load(&path).expect("the shipped scenario");
        let PartPlan::Host(cfg) = &plan.parts.iter().find(|p| p.name == "sut").expect("the host under test").plan else {
            unreachable!("a modelled host")
        };
        let o = cfg.adapters[0].offload.as_ref().expect("an offload engine");
        (Offload::new(o.engine.clone(), &o.roles), HostBus::new(cfg.bus.clone(), Duration::from_ms(1)))
    }

    fn costs(bus: &mut HostBus) -> Costs<'_> {
        Costs { clock: Clock::from_hz(300_000_000), syscall: 2000, copy_ns_per_byte: 5.6, bus }
    }

    #[test]
    fn a_sender_opens_without_posting_buffers_and_counts_all_frames_as_its_own() {
        let (mut o, mut bus) = hp_sender();
        let call = o.open(Time::ZERO, &mut costs(&mut bus));
        assert!(matches!(call.to_adapter.as_slice(), [Message::OpenSocket(0)]), "{:?}", call.to_adapter);
        assert_eq!(o.watched(), None, "alone on the engine, its figures are the engine's");
        assert!(call.until > Time::ZERO, "the message is written across the bus");
    }

    #[test]
    fn sends_fill_the_message_queue_then_wait_for_a_completion() {
        let (mut o, mut bus) = hp_sender();
        let depth = o.cfg.adapter.queue_depth;
        let mut now = Time::ZERO;
        for i in 1..=depth {
            let call = o.send(now, &mut costs(&mut bus)).expect("room in the queue");
            let [Message::SendData { s: 0, bytes, inline: false }] = call.to_adapter.as_slice() else {
                panic!("one send of a pinned buffer: {:?}", call.to_adapter)
            };
            assert_eq!(bytes.len(), 8192);
            assert_eq!(call.again, i < depth, "call {i} of {depth}");
            assert!(call.until > now + copy_time(5.6, 8192), "the copy to the pinned buffer, then the message");
            now = call.until;
        }
        assert!(o.send(now, &mut costs(&mut bus)).is_none(), "a full queue blocks the sender");
        let done = o.take(Message::Completion(0, 1), now, &mut costs(&mut bus), true);
        assert!(done.again, "a completion wakes the blocked sender");
        assert!(o.send(now, &mut costs(&mut bus)).is_some());
    }

    #[test]
    fn the_last_send_is_short_and_followed_by_the_close() {
        let (mut o, mut bus) = hp_sender();
        let (mut sent, mut now) = (0, Time::ZERO);
        let last = loop {
            let Some(call) = o.send(now, &mut costs(&mut bus)) else {
                o.take(Message::Completion(0, 1), now, &mut costs(&mut bus), true);
                continue;
            };
            now = call.until;
            let Message::SendData { bytes, .. } = &call.to_adapter[0] else { panic!("a send first") };
            sent += bytes.len();
            if sent == 4_000_000 {
                break call;
            }
        };
        let [Message::SendData { bytes, .. }, Message::CloseSocket(0)] = last.to_adapter.as_slice() else {
            panic!("the last data, then the close: {:?}", last.to_adapter)
        };
        assert_eq!(bytes.len(), 4_000_000 % 8192);
        assert_eq!(o.ttcp.as_ref().map(|t| t.calls), Some(4_000_000u64.div_ceil(8192)));
        assert!(o.send(now, &mut costs(&mut bus)).is_none(), "nothing after the close");
    }
}
