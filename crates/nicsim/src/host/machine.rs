//! A modelled host as one component: its processors, its bus, its adapter, and
//! the driver, stack and applications that run on the processors. The parts
//! share the bus calendar and the processors, contended resources whose timing is
//! booked directly; so a host is one component and its port 0 is the adapter's
//! wire. Internal events are timers whose tag says what falls due (see `Tag`).

use crate::bus::HostBus;
use crate::engine::{Component, Ctx, Msg, PortId};
use crate::host::apps::{Blast, FileRequest, SinkCount};
use crate::host::config::{DriverMode, HostConfig};
use crate::host::cpu::{Activity, Cpu, Effects, Item};
use crate::nic::{Irq, Rx, Tx};
use crate::observe::{Report, SharedTrace, TrackId};
use crate::time::{Duration, Time};

/// What a timer is for: the kind in the top byte, a value below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    /// The adapter's interrupt timer, with its generation.
    Irq(u64),
    /// A receive tail write reaches the adapter, posting this many buffers.
    RxPost(u32),
    /// A transmit tail write reaches the adapter.
    TxTail,
    /// Processor `cpu`'s current step ends.
    StepEnd(usize),
    /// A TCP timer of a session.
    Conn(usize),
    /// The thread pinned to a processor may run again.
    Thread(usize),
}

impl Tag {
    fn encode(self) -> u64 {
        let (kind, value) = match self {
            Tag::Irq(g) => (1, g),
            Tag::RxPost(n) => (2, n as u64),
            Tag::TxTail => (3, 0),
            Tag::StepEnd(c) => (4, c as u64),
            Tag::Conn(i) => (5, i as u64),
            Tag::Thread(c) => (6, c as u64),
        };
        (kind << 56) | (value & ((1 << 56) - 1))
    }
    fn decode(tag: u64) -> Option<Tag> {
        let v = tag & ((1 << 56) - 1);
        Some(match tag >> 56 {
            1 => Tag::Irq(v),
            2 => Tag::RxPost(v as u32),
            3 => Tag::TxTail,
            4 => Tag::StepEnd(v as usize),
            5 => Tag::Conn(v as usize),
            6 => Tag::Thread(v as usize),
            _ => return None,
        })
    }
}

pub(super) fn wake(ctx: &mut Ctx, at: Time, tag: Tag) {
    ctx.wake_after(at.since(ctx.now()), tag.encode());
}

pub struct Machine {
    pub(super) cfg: HostConfig,
    pub(super) bus: HostBus,
    pub(super) rx: Rx,
    pub(super) tx: Tx,
    pub(super) irq: Irq,
    pub(super) cpus: Vec<Cpu>,
    pub(super) stack_held: bool,
    pub(super) files: Option<FileRequest>,
    pub(super) sink: Option<SinkCount>,
    pub(super) blast: Option<Blast>,
    pub(super) conn_armed: Vec<Option<Time>>,
    /// Receive buffers the driver has taken and not yet handed back.
    pub(super) refill_pending: u32,
    /// The poll loop found nothing booked and sleeps from this time.
    pub(super) poll_asleep_since: Option<Time>,
    pub(super) trace: Option<SharedTrace>,
    wire_track: Option<TrackId>,
    pub(super) tx_ring_full: u64,
    pub(super) unclaimed: u64,
    pub(super) handler_frames: u64,
}

impl Machine {
    pub fn new(cfg: HostConfig, name: &str, trace: Option<SharedTrace>) -> Result<Self, String> {
        let reach_back = Duration::for_bits(10_000 * 8, cfg.nic.link_rate_bps);
        let mut bus = HostBus::new(cfg.bus.clone(), reach_back);
        let mut cpus: Vec<Cpu> = (0..cfg.cpus).map(|_| Cpu::default()).collect();
        let mut wire_track = None;
        if let Some(t) = &trace {
            bus.trace_into(t.clone(), name);
            for (i, c) in cpus.iter_mut().enumerate() {
                c.trace_into(t, name, i);
            }
            wire_track = Some(t.borrow_mut().track(name, "adapter wire (frames in)"));
        }
        let files = cfg.file_request.clone().map(|f| FileRequest::new(f, cfg.mac, cfg.ip));
        let n_conns = files.as_ref().map_or(0, |f| f.conns.len());
        let blast = cfg.blast.clone().map(Blast::new).transpose()?;
        Ok(Machine {
            rx: Rx::new(cfg.nic.clone()),
            tx: Tx::new(cfg.nic.clone()),
            irq: Irq::new(cfg.nic.moderation),
            sink: cfg.sink.then(SinkCount::default),
            bus,
            cpus,
            stack_held: false,
            files,
            blast,
            conn_armed: vec![None; n_conns],
            refill_pending: 0,
            poll_asleep_since: None,
            trace,
            wire_track,
            tx_ring_full: 0,
            unclaimed: 0,
            handler_frames: 0,
            cfg,
        })
    }

    /// Completions became visible: raise the interrupt, or wake the poll loop.
    pub(super) fn completed(&mut self, done: Vec<(Time, u32)>, ctx: &mut Ctx) {
        for (at, n) in done {
            if self.cfg.driver.mode == DriverMode::Poll {
                if self.poll_asleep_since.is_some() {
                    wake(ctx, at.max(ctx.now()), Tag::Thread(self.cfg.driver.poll_cpu as usize));
                }
            } else if let Some((due, generation)) = self.irq.completed(at, n) {
                wake(ctx, due.max(ctx.now()), Tag::Irq(generation));
            }
        }
    }

    /// The adapter raised its interrupt: one processor takes it, an idle one if
    /// there is one, else the first not already in the handler.
    fn interrupt(&mut self, ctx: &mut Ctx) {
        let k = self.cpus.iter().position(|c| c.idle()).or_else(|| self.cpus.iter().position(|c| !c.in_handler)).unwrap_or(0);
        self.cpus[k].irq_pending = true;
        self.dispatch(k, ctx);
    }

    /// Apply what a finished step changes, then find the processor more work.
    fn end_step(&mut self, k: usize, ctx: &mut Ctx) {
        let Some(step) = self.cpus[k].step.take() else { return };
        let now = ctx.now();
        let Effects { transmit, refill, enable_irq, queue, leave_handler } = step.effects;
        if refill > 0 {
            let at = self.bus.register_write(now);
            wake(ctx, at, Tag::RxPost(refill));
        }
        let mut filled: u32 = 0;
        for f in transmit {
            if self.tx.room() == 0 {
                self.tx.reclaim(now);
            }
            if self.tx.room() == 0 {
                self.tx_ring_full += 1;
                continue;
            }
            self.tx.fill(f);
            filled += 1;
        }
        for _ in 0..filled.div_ceil(self.cfg.driver.tx_tail_batch.max(1)) {
            let at = self.bus.register_write(now);
            wake(ctx, at, Tag::TxTail);
        }
        if enable_irq {
            let at = self.bus.register_write(now);
            if let Some((due, generation)) = self.irq.enable(at) {
                wake(ctx, due, Tag::Irq(generation));
            }
        }
        if leave_handler {
            self.cpus[k].in_handler = false;
        }
        self.cpus[k].queue.extend(queue);
        self.dispatch(k, ctx);
        if step.holds_stack {
            self.stack_held = false;
            for other in 0..self.cpus.len() {
                self.dispatch(other, ctx);
            }
        }
    }

    pub(super) fn arm_conn(&mut self, i: usize, ctx: &mut Ctx) {
        let Some(t) = self.files.as_ref().and_then(|f| f.conns[i].next_timer()) else { return };
        if self.conn_armed[i].is_none_or(|a| t < a) {
            self.conn_armed[i] = Some(t);
            wake(ctx, t.max(ctx.now()), Tag::Conn(i));
        }
    }
}

impl Component for Machine {
    fn kind(&self) -> &'static str {
        "host"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let done = self.rx.post(self.cfg.nic.rx_ring - 1, ctx.now(), &mut self.bus);
        self.completed(done, ctx);
        if self.files.is_some() {
            self.cpus[0].queue.push_back(Item::Start);
        }
        if self.cfg.driver.mode == DriverMode::Poll {
            self.cpus[self.cfg.driver.poll_cpu as usize].thread_ready = true;
        }
        if let Some(b) = &self.blast {
            self.cpus[b.cfg.cpu as usize].thread_ready = true;
        }
        for k in 0..self.cpus.len() {
            self.dispatch(k, ctx);
        }
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        let now = ctx.now();
        match msg {
            Msg::Frame(frame) => {
                if let (Some(t), Some(track)) = (&self.trace, self.wire_track) {
                    t.borrow_mut().instant(track, "frame in", now);
                }
                let done = self.rx.arrive(*frame, now, &mut self.bus);
                self.completed(done, ctx);
            }
            Msg::TxReady => {}
            Msg::Timer(tag) => match Tag::decode(tag) {
                Some(Tag::Irq(generation)) if self.irq.fire(generation, now) => self.interrupt(ctx),
                Some(Tag::RxPost(n)) => {
                    let done = self.rx.post(n, now, &mut self.bus);
                    self.completed(done, ctx);
                }
                Some(Tag::TxTail) => {
                    for (at, frame) in self.tx.tail(now, &mut self.bus) {
                        ctx.send_at(0, at, Msg::frame(frame));
                    }
                }
                Some(Tag::StepEnd(k)) => self.end_step(k, ctx),
                Some(Tag::Conn(i)) if self.conn_armed[i].is_some_and(|a| a <= now) => {
                    self.conn_armed[i] = None;
                    self.cpus[0].queue.push_back(Item::ConnTimer(i));
                    self.dispatch(0, ctx);
                }
                Some(Tag::Thread(k)) => {
                    let poller = self.cfg.driver.mode == DriverMode::Poll && k == self.cfg.driver.poll_cpu as usize;
                    if let Some(since) = self.poll_asleep_since.take_if(|_| poller) {
                        let trace = self.trace.clone();
                        self.cpus[k].account(crate::host::cpu::Activity::Poll, since, now, trace.as_ref());
                    }
                    self.cpus[k].thread_ready = true;
                    self.dispatch(k, ctx);
                }
                _ => {}
            },
        }
    }

    fn finish(&mut self, end: Time) -> Result<(), String> {
        if let Some(since) = self.poll_asleep_since.take() {
            let k = self.cfg.driver.poll_cpu as usize;
            self.cpus[k].account(crate::host::cpu::Activity::Poll, since, end.max(since), self.trace.as_ref());
        }
        for c in &mut self.cpus {
            c.close_trace(self.trace.as_ref());
        }
        Ok(())
    }

    fn report(&self, end: Time) -> Report {
        let mut r = Report::default();
        let seconds = end.since(Time::ZERO + self.cfg.warmup).as_secs_f64();
        if let Some(f) = &self.files {
            f.report(&mut r, seconds);
        }
        if let Some(s) = &self.sink {
            s.report(&mut r, seconds);
        }
        if let Some(b) = &self.blast {
            b.report(&mut r, seconds);
        }
        self.rx.report(&mut r);
        self.tx.report(&mut r);
        r.count("tx_ring_full_drops", self.tx_ring_full);
        r.count("rx_unclaimed", self.unclaimed);
        r.count("interrupts", self.irq.raised);
        let total: f64 = self.cpus.iter().map(|c| c.utilization(end)).sum();
        r.real("cpu_utilization", total / self.cpus.len() as f64);
        r.count("handler_frames", self.handler_frames);
        r.real(
            "frames_per_handler_run",
            self.handler_frames as f64 / self.cpus.iter().map(|c| c.runs(Activity::Interrupt).1).sum::<u64>().max(1) as f64,
        );
        for (a, name) in [(Activity::Interrupt, "interrupt"), (Activity::Deferred, "deferred")] {
            let (busy, runs) = self.cpus.iter().map(|c| c.runs(a)).fold((Duration::ZERO, 0), |(b, n), (b2, n2)| (b + b2, n + n2));
            r.real(&format!("mean_{name}_run_us"), busy.as_secs_f64() * 1e6 / runs.max(1) as f64);
        }
        for (i, c) in self.cpus.iter().enumerate() {
            c.report(&mut r, i, end);
        }
        self.bus.report(&mut r, end);
        r
    }
}
