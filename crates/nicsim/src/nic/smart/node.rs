//! A programmable adapter of a host (the Malta 2001 dissertation's Alteon Tigon; docs/model.md, "The programmable adapter"): its
//! processors, memory, DMA engines and MAC (`Hw`) running the firmware of
//! `nic::firmware` on real bytes. The host drives it through rings in its
//! memory and doorbells, and learns of completions from an event ring it polls
//! (the adapter's interrupt masked, as in the Malta study). Sending lives in
//! `send.rs`, receiving in `recv.rs`. The host's driver for it
//! (`host::event_driver`) reaches it only through host memory, its doorbell
//! registers and the events it writes.

use crate::bus::HostBus;
use crate::device::{Device, DeviceCx, Event, Interface, Register};
use crate::engine::timers::{part_space, Earliest, Timers};
use crate::engine::{Ctx, PortId};
use crate::nic::firmware::coalesce::Coalescer;
use crate::nic::firmware::gro::Gro;
use crate::nic::smart::config::{SmartConfig, Workload};
use crate::nic::smart::hw::Hw;
use crate::observe::Report;
use crate::processor::Account;
use crate::time::{Duration, Time};
use crate::wire::Frame;

/// What falls due at a programmable adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// The completion event of this send is in host memory.
    SendDone(u64),
    /// The firmware makes its next frames.
    Generate,
    /// The event of a filled receive buffer (by its slot) is in host memory.
    RxDone(u64),
    /// A coalescing or LRO timeout may have passed.
    RxFlush,
    /// A transfer of the firmware's DMA loop completed: it programs the next.
    DmaDone,
}

/// What the sending side has done.
#[derive(Debug, Default)]
pub(super) struct SendState {
    pub frames: u64,
    pub payload: u64,
    pub segmented_sends: u64,
    pub first: Option<Time>,
    pub last_wire_end: Time,
    pub dma_bytes: u64,
    /// Transfers of the DMA loop programmed so far.
    pub dma_programmed: u64,
    pub staging: super::staging::Staging,
    /// When the host made each send in flight (its stack's frame, or its send
    /// call), and the one the firmware is sending now: its frames carry it.
    pub made: rustc_hash::FxHashMap<u64, Time>,
    pub making: Option<Time>,
}

/// What the receiving side has done.
#[derive(Debug, Default)]
pub(super) struct RecvState {
    pub frames_in: u64,
    /// Offloaded XDP's verdicts.
    pub xdp: crate::xdp::Verdicts,
    /// Frames in adapter memory not yet moved to the host.
    pub held: u64,
    pub overruns: u64,
    pub bad_checksums: u64,
    pub counted: u64,
    pub counted_bytes: u64,
    pub posted: u64,
    pub next_slot: u64,
    pub first: Option<Time>,
    pub last: Time,
    /// When each wire frame bound for the host arrived, in order, until its
    /// buffer is written; then each filled slot's, until its event is seen.
    pub arrived: std::collections::VecDeque<Time>,
    pub slots: rustc_hash::FxHashMap<u64, Vec<Time>>,
}

pub struct Programmable {
    pub(super) cfg: SmartConfig,
    pub hw: Hw,
    /// Its own timers, apart from the host's (`engine::timers::part_space`).
    pub(super) timers: Timers<Due>,
    /// Its port on the wire.
    wire: PortId,
    pub(super) send: SendState,
    pub(super) recv: RecvState,
    pub(super) coalescer: Option<Coalescer>,
    pub(super) lro: Option<Gro>,
    /// Buffers ready to move to the host, waiting for a posted host buffer.
    pub(super) ready: std::collections::VecDeque<super::recv::Ready>,
    /// Segments in the open coalescing buffer.
    pub(super) pending_segments: u32,
    /// The coalescing or LRO timeout in flight: when, and its handle.
    pub(super) flush_timer: Earliest,
    /// The events in host memory its driver has not looked at, oldest first.
    events: Vec<Event>,
}

impl Programmable {
    /// Adapter `port` of a host.
    pub fn new(cfg: SmartConfig, port: usize) -> Self {
        let hw = Hw::new(cfg.adapter.clone());
        Programmable {
            hw,
            timers: Timers::new(part_space(port)),
            wire: port as PortId,
            send: SendState::default(),
            recv: RecvState::default(),
            coalescer: cfg.receive.coalesce.map(Coalescer::new),
            lro: cfg.receive.lro.map(Gro::new),
            ready: Default::default(),
            pending_segments: 0,
            flush_timer: Earliest::default(),
            events: Vec::new(),
            cfg,
        }
    }

    /// The run starts: the host's ring of receive buffers is posted, the
    /// firmware's own workload begins.
    fn begin(&mut self, bus: &mut HostBus, ctx: &mut Ctx) {
        if self.cfg.receive.to_host {
            self.post_initial_buffers();
        }
        match self.cfg.workload.clone() {
            Workload::Idle => {}
            Workload::Generate { .. } => {
                self.timers.arm(ctx, ctx.now(), Due::Generate);
            }
            Workload::Dma { .. } => {
                self.send.first = Some(ctx.now());
                self.dma_next(bus, ctx);
            }
        }
    }

    /// The simulation has reached `now` (its owner says so before each call in).
    pub fn settle(&mut self, now: Time) {
        self.hw.settle(now);
    }

    /// A timer of this adapter fell due.
    pub fn due(&mut self, due: Due, bus: &mut HostBus, ctx: &mut Ctx) {
        match due {
            Due::SendDone(n) => self.events.push(Event::SendDone(n)),
            Due::Generate => self.generate(bus, ctx),
            Due::RxDone(slot) => {
                let arrived = self.recv.slots.remove(&slot).unwrap_or_default();
                self.events.push(Event::Received { slot, seen: ctx.now(), arrived });
            }
            Due::RxFlush => self.rx_flush(bus, ctx),
            Due::DmaDone => {
                self.dma_done(ctx.now());
                self.dma_next(bus, ctx);
            }
        }
    }

    /// Frames out of the MAC go on this adapter's wire.
    pub(super) fn wire(&self) -> PortId {
        self.wire
    }

    /// It sits on wire port `wire` (not its place among the host's adapters
    /// when an adapter before it has several queues).
    pub fn on_wire(mut self, wire: usize) -> Self {
        self.wire = wire as PortId;
        self
    }

    /// The adapter's figures (its driver adds the host's: `host::event_driver`).
    fn figures(&self, r: &mut Report, end: Time) {
        let secs = end.as_secs_f64().max(1e-12);
        self.send_report(r);
        self.recv_report(r);
        let c = &self.hw.c;
        let frames = (self.send.frames + self.recv.frames_in).max(1);
        for (k, cpu) in self.hw.cpus.iter().enumerate() {
            cpu.account.report(r, &format!("adapter_cpu{k}"), end);
        }
        r.real("adapter_cycles_per_frame", self.hw.cycles() as f64 / frames as f64);
        r.count("adapter_memory_payload_bytes", c.memory_payload_written);
        r.count("adapter_memory_bytes", c.memory_bytes);
        r.real("adapter_memory_utilization", self.hw.memory_busy(end).as_secs_f64() / secs);
        r.count("dma_transfers", c.dma_transfers);
        r.real("adapter_dma_read_utilization", self.hw.engine_busy(0, end).as_secs_f64() / secs);
        r.real("adapter_dma_write_utilization", self.hw.engine_busy(1, end).as_secs_f64() / secs);
        r.count("host_bus_bytes", c.bus_bytes);
        r.real("bus_transactions_per_frame", c.bus_transactions as f64 / frames as f64);
    }
}

impl Device for Programmable {
    fn interface(&self) -> Interface {
        Interface::Events
    }

    /// Its firmware books its transfers ahead of time and out of order (a
    /// DMA loop, a segmented send).
    fn books_back(&self) -> Duration {
        Duration::from_ms(10)
    }

    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx) {
        self.settle(cx.now());
        self.arrive(frame.bytes, cx.bus, cx.ctx);
        cx.out.driver_work = true;
    }

    fn timer(&mut self, tag: u64, cx: &mut DeviceCx) {
        let Some(due) = self.timers.fire(tag) else { return };
        self.settle(cx.now());
        self.due(due, cx.bus, cx.ctx);
        cx.out.driver_work = true;
    }

    fn processors(&mut self) -> Vec<&mut Account> {
        self.hw.cpus.iter_mut().map(|c| &mut c.account).collect()
    }

    fn report(&self, r: &mut Report, end: Time, _host_busy: Duration) {
        self.figures(r, end);
    }

    fn start(&mut self, cx: &mut DeviceCx) {
        self.settle(cx.now());
        self.begin(cx.bus, cx.ctx);
        cx.out.driver_work = true;
    }

    fn register_write(&mut self, reg: Register, cx: &mut DeviceCx) {
        self.settle(cx.now());
        self.hw.doorbell_rung();
        match reg {
            Register::SendPosted { n, made, issued } => {
                self.send.made.insert(n, made);
                self.send.first.get_or_insert(issued);
                self.adapter_send(n, cx.bus, cx.ctx);
            }
            Register::BuffersPosted(n) => self.buffers_posted(n, cx.bus, cx.ctx),
            // A ring adapter's tails: it has no rings.
            Register::RxTail { .. } | Register::TxTail { .. } => {}
        }
        cx.out.driver_work = true;
    }

    fn events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn host_memory(&mut self) -> Option<&mut crate::mem::Memory> {
        Some(&mut self.hw.mem)
    }
}
