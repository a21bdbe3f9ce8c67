//! A TCP host as one component: the host processor, its PCI bus, the adapter
//! (plain, fast-path or offloading, with its processor and private bus) and the
//! TTCP application. Port 0 is the adapter's wire. Timers carry the id of an
//! `Action` kept here until it falls due.

use std::collections::{HashMap, VecDeque};

use crate::bus::{Fill, HostBus, Purpose};
use crate::engine::{Component, Ctx, Msg, PortId};
use crate::observe::{Report, SharedTrace, TrackId};
use crate::stack::tally::{classify, Class};
use crate::stack::{Sock, Stack};
use crate::time::{Duration, Time};
use crate::toe::config::{Design, Role, TcpHostConfig};
use crate::toe::exec::{Processor, Run, Work};
use crate::toe::ttcp::Ttcp;
use crate::wire::ethernet::wire_bytes;
use crate::wire::{Frame, FrameMeta};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Host,
    Adapter,
}

/// What a run hands on when it ends.
#[derive(Debug, Default)]
pub(super) struct Outputs {
    pub frames: Vec<Vec<u8>>,
    pub host: Vec<Work>,
    pub adapter: Vec<Work>,
}

#[derive(Debug)]
enum Action {
    Queue(Side, Work),
    RunEnd(Side, Run, Outputs),
    StackTimer,
    FastFlush(u64),
}

/// Frames of data one way: how many, their wire bytes, the first and last.
#[derive(Debug, Default)]
pub(super) struct WireTally {
    /// Wire bytes after the first frame: N frames span N - 1 gaps between starts.
    pub bytes: u64,
    pub payload: u64,
    pub first: Option<Time>,
    pub last: Option<Time>,
}

impl WireTally {
    fn add(&mut self, frame_len: usize, payload: u32, at: Time) {
        if self.first.is_some() {
            self.bytes += wire_bytes(frame_len) as u64;
            self.payload += payload as u64;
        }
        self.first.get_or_insert(at);
        self.last = Some(at);
    }
}

pub struct TcpHost {
    pub(super) cfg: TcpHostConfig,
    pub(super) stack: Stack,
    /// The one socket the TTCP uses.
    pub(super) sock: Sock,
    pub(super) app: Ttcp,
    pub(super) host: Processor,
    pub(super) adapter: Processor,
    pub(super) bus: HostBus,
    pub(super) private_bus: HostBus,
    actions: HashMap<u64, Action>,
    next_action: u64,
    timer_at: Option<Time>,
    /// Frames leave the adapter in the order they were handed to it.
    tx_free: Time,
    // The host application's side of the adapter interface.
    pub(super) outstanding: u32,
    pub(super) blocked: bool,
    pub(super) closing: bool,
    // The offloading adapter's socket-level state.
    pub(super) pending_tx: VecDeque<Vec<u8>>,
    pub(super) close_requested: bool,
    pub(super) posted: u32,
    pub(super) fin_delivered: bool,
    // The fast path's receive state.
    fast_next: Option<u32>,
    batch: Vec<Vec<u8>>,
    batch_gen: u64,
    // Counters.
    pub(super) interrupts: u64,
    pub(super) messages: u64,
    pub(super) completions: u64,
    pub(super) deliveries: u64,
    pub(super) fast_batches: u64,
    pub(super) fast_segments: u64,
    pub(super) wire_out: WireTally,
    pub(super) wire_in: WireTally,
    /// Timeline tracks of the host and adapter processors, when traced.
    tracks: Option<(SharedTrace, TrackId, TrackId)>,
}

fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl TcpHost {
    /// A TCP host that draws its processors' runs and its buses into `trace`
    /// under `name`, when one is given.
    pub fn traced(cfg: TcpHostConfig, name: &str, trace: Option<SharedTrace>) -> TcpHost {
        let mut h = TcpHost::new(cfg);
        if let Some(t) = trace {
            h.bus.trace_into(t.clone(), name);
            h.private_bus.trace_into(t.clone(), &format!("{name} adapter"));
            let host = t.borrow_mut().track(name, "host cpu");
            let adapter = t.borrow_mut().track(name, "adapter cpu");
            h.tracks = Some((t, host, adapter));
        }
        h
    }

    pub fn new(cfg: TcpHostConfig) -> TcpHost {
        let reach_back = Duration::from_ms(1);
        let mut stack = Stack::new(&cfg.stack, cfg.seed);
        let sock = stack.open(&cfg.socket);
        TcpHost {
            stack,
            sock,
            app: Ttcp::new(cfg.ttcp.clone()),
            host: Processor::new(cfg.host_clock),
            adapter: Processor::new(cfg.adapter.clock),
            bus: HostBus::new(cfg.bus.clone(), reach_back),
            private_bus: HostBus::new(cfg.adapter.private_bus.clone(), reach_back),
            actions: HashMap::new(),
            next_action: 0,
            timer_at: None,
            tx_free: Time::ZERO,
            outstanding: 0,
            blocked: false,
            closing: false,
            pending_tx: VecDeque::new(),
            close_requested: false,
            posted: 0,
            fin_delivered: false,
            fast_next: None,
            batch: Vec::new(),
            batch_gen: 0,
            interrupts: 0,
            messages: 0,
            completions: 0,
            deliveries: 0,
            fast_batches: 0,
            fast_segments: 0,
            wire_out: WireTally::default(),
            wire_in: WireTally::default(),
            tracks: None,
            cfg,
        }
    }

    /// The receiver listens, the sender connects, on whichever side the stack runs.
    pub(super) fn open_stack(&mut self) {
        let t = &self.cfg.ttcp;
        let opened = match t.role {
            Role::Receive => self.stack.listen(self.sock, t.port),
            Role::Send => self.stack.connect(self.sock, t.peer_ip, t.port, 40_000),
        };
        opened.expect("addresses are checked when the scenario is");
    }

    /// The processor the protocol stack runs on.
    pub(super) fn stack_side(&self) -> Side {
        if self.cfg.design == Design::FullOffload {
            Side::Adapter
        } else {
            Side::Host
        }
    }

    fn later(&mut self, ctx: &mut Ctx, at: Time, action: Action) {
        let id = self.next_action;
        self.next_action += 1;
        self.actions.insert(id, action);
        ctx.wake_after(at.since(ctx.now()), id);
    }

    fn processor(&mut self, side: Side) -> &mut Processor {
        match side {
            Side::Host => &mut self.host,
            Side::Adapter => &mut self.adapter,
        }
    }

    fn queue(&mut self, ctx: &mut Ctx, side: Side, w: Work) {
        if self.processor(side).push(w) {
            self.start_run(ctx, side);
        }
    }

    fn start_run(&mut self, ctx: &mut Ctx, side: Side) {
        let batch = self.processor(side).take();
        let mut run = Run::new(ctx.now(), self.processor(side).clock);
        let mut out = Outputs::default();
        match side {
            Side::Host => self.host_run(batch, &mut run, &mut out),
            Side::Adapter => self.adapter_run(batch, &mut run, &mut out),
        }
        let end = run.at;
        self.later(ctx, end, Action::RunEnd(side, run, out));
    }

    fn run_end(&mut self, ctx: &mut Ctx, side: Side, run: Run, out: Outputs) {
        let now = ctx.now();
        if let Some((trace, host, adapter)) = &self.tracks {
            let (track, name) = if side == Side::Host { (*host, "host") } else { (*adapter, "firmware") };
            trace.borrow_mut().span(track, name, run.start, run.at, &[("cycles", run.cycles)]);
        }
        for f in out.frames {
            self.transmit(ctx, f);
        }
        for w in out.host {
            self.queue(ctx, Side::Host, w);
        }
        for w in out.adapter {
            self.queue(ctx, Side::Adapter, w);
        }
        if self.processor(side).finish(&run) {
            self.start_run(ctx, side);
        }
        if side == self.stack_side() {
            self.arm_timer(ctx, now);
        }
    }

    fn arm_timer(&mut self, ctx: &mut Ctx, now: Time) {
        // A closed connection's TIME-WAIT would only stretch the run.
        if self.stack.closed(self.sock) {
            return;
        }
        if let Some(t) = self.stack.poll_at(now) {
            if self.timer_at.is_none_or(|x| t < x) {
                self.timer_at = Some(t);
                self.later(ctx, t, Action::StackTimer);
            }
        }
    }

    /// A frame the stack produced: the adapter fetches it and the MAC sends it.
    fn transmit(&mut self, ctx: &mut Ctx, bytes: Vec<u8>) {
        let now = ctx.now();
        let fetched = match self.cfg.design {
            Design::FullOffload => self.private_bus.read(now, bytes.len() as u64, Purpose::TxData),
            _ => self.bus.read(now, bytes.len() as u64, Purpose::TxData),
        };
        let at = fetched.max(self.tx_free);
        self.tx_free = at;
        if let Class::Data { len, .. } = classify(&bytes) {
            self.wire_out.add(bytes.len(), len, at);
        }
        ctx.send_at(0, at, Msg::frame(Frame { bytes, meta: FrameMeta::default() }));
    }

    /// A frame from the wire: the adapter moves it to where the stack runs.
    fn receive(&mut self, ctx: &mut Ctx, bytes: Vec<u8>) {
        let now = ctx.now();
        let class = classify(&bytes);
        if let Class::Data { len, .. } = class {
            self.wire_in.add(bytes.len(), len, now);
        }
        let len = bytes.len() as u64;
        let design = self.cfg.design;
        match design {
            Design::FullOffload => {
                let at = self.private_bus.write(now, len, Fill::Ready, Purpose::RxData);
                self.later(ctx, at, Action::Queue(Side::Adapter, Work::Frame(bytes)));
            }
            Design::PartialOffload if self.fast_path_takes(class) => {
                let at = self.bus.write(now, len, Fill::Ready, Purpose::RxData);
                self.batch.push(bytes);
                self.fast_segments += 1;
                if self.batch.len() == 1 {
                    self.batch_gen += 1;
                    let (at, gen) = (now + self.cfg.fast_path.timeout, self.batch_gen);
                    self.later(ctx, at, Action::FastFlush(gen));
                }
                if self.batch.len() >= self.cfg.fast_path.batch as usize {
                    self.flush_batch(ctx, at);
                }
            }
            _ => {
                if let Class::Data { seq, len } = class {
                    let end = seq.wrapping_add(len);
                    if self.fast_next.is_none_or(|n| after(end, n)) {
                        self.fast_next = Some(end);
                    }
                }
                // Whatever the fast path holds goes up first, keeping order.
                self.flush_batch(ctx, now);
                let at = self.bus.write(now, len, Fill::Ready, Purpose::RxData);
                let at = self.bus.write(at, 16, Fill::Ready, Purpose::RxStatus);
                self.later(ctx, at, Action::Queue(Side::Host, Work::Frame(bytes)));
            }
        }
    }

    /// The fast path takes in-order data segments of the connection and nothing else.
    fn fast_path_takes(&mut self, class: Class) -> bool {
        match class {
            Class::Data { seq, len } if self.fast_next == Some(seq) => {
                self.fast_next = Some(seq.wrapping_add(len));
                true
            }
            _ => false,
        }
    }

    fn flush_batch(&mut self, ctx: &mut Ctx, at: Time) {
        if self.batch.is_empty() {
            return;
        }
        self.batch_gen += 1;
        let frames = std::mem::take(&mut self.batch);
        let at = self.bus.write(at, 16, Fill::Ready, Purpose::RxStatus);
        self.later(ctx, at, Action::Queue(Side::Host, Work::FastBatch(frames)));
    }
}

impl Component for TcpHost {
    fn kind(&self) -> &'static str {
        "tcp_host"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let at = ctx.now() + if self.cfg.ttcp.role == Role::Send { self.cfg.ttcp.start } else { Duration::ZERO };
        self.later(ctx, at, Action::Queue(Side::Host, Work::Open));
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        match msg {
            Msg::Frame(f) => self.receive(ctx, f.bytes),
            Msg::Timer(id) => match self.actions.remove(&id) {
                Some(Action::Queue(side, w)) => self.queue(ctx, side, w),
                Some(Action::RunEnd(side, run, out)) => self.run_end(ctx, side, run, out),
                Some(Action::StackTimer) if self.timer_at == Some(ctx.now()) => {
                    self.timer_at = None;
                    let side = self.stack_side();
                    self.queue(ctx, side, Work::Timer);
                }
                Some(Action::FastFlush(gen)) if gen == self.batch_gen => self.flush_batch(ctx, ctx.now()),
                _ => {}
            },
            Msg::TxReady => {}
        }
    }

    fn report(&self, end: Time) -> Report {
        self.report_into(end)
    }
    fn text(&self) -> Vec<(&'static str, String)> {
        vec![("ttcp_sha256", self.app.stream.sha256_hex())]
    }
}
