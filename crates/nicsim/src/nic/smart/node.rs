//! A programmable adapter of a host (the Malta 2001 dissertation's Alteon Tigon; docs/model.md, "The programmable adapter"): its
//! processors, memory, DMA engines and MAC (`Hw`) running the firmware of
//! `nic::firmware` on real bytes. The host drives it through rings in its
//! memory and doorbells, and learns of completions from an event ring it polls
//! (the adapter's interrupt masked, as in the Malta study). Sending lives in
//! `send.rs`, receiving in `recv.rs`. What the host's processors must do in
//! answer (a send call, an event to take) is queued in `host_work`; the host
//! runs it as steps of its own (`host::programmable_steps`).

use crate::bus::HostBus;
use crate::device::{Device, DeviceCx, DriverStep, DriverWork, Interface};
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
    /// A send doorbell reaches the adapter for this send.
    Doorbell(u64),
    /// The host sees the completion event of this send.
    SendDone(u64),
    /// The firmware makes its next frames.
    Generate,
    /// A receive-buffer doorbell reaches the adapter with this many buffers.
    RxPost(u64),
    /// The host sees a filled receive buffer (by its slot).
    RxDone(u64),
    /// A coalescing or LRO timeout may have passed.
    RxFlush,
    /// The host driver's GRO timeout may have passed.
    GroFlush,
    /// A transfer of the firmware's DMA loop completed: it programs the next.
    DmaDone,
}

/// Work for the host's processors that the adapter's events call for.
pub use crate::device::DriverWork as HostWork;

/// What a host step did (`DriverStep`: the work the host prices with its own
/// costs, the bytes copied, none with zero copy), and what the adapter does
/// when it ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct HostStep {
    /// What it did, as the host sees it.
    pub done: DriverStep,
    /// A doorbell to ring when the step ends: a send (by number), or receive buffers (a count).
    pub doorbell: Option<Due>,
    /// The step hands received data to the application (it ends a receive interval).
    pub delivers: bool,
    /// A frame of the host's stack to send when the step ends (it waited for a slot).
    pub resend: Option<Frame>,
}

impl std::ops::Deref for HostStep {
    type Target = DriverStep;
    fn deref(&self) -> &DriverStep {
        &self.done
    }
}

impl std::ops::DerefMut for HostStep {
    fn deref_mut(&mut self) -> &mut DriverStep {
        &mut self.done
    }
}

/// What the sending side has done.
#[derive(Debug, Default)]
pub(super) struct SendState {
    pub issued: u64,
    pub completed: u64,
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
    pub to_repost: u64,
    pub next_slot: u64,
    pub batches: u64,
    pub delivered_frames: u64,
    pub delivered_segments: u64,
    pub delivered_payload: u64,
    pub host_bad: u64,
    pub first: Option<Time>,
    pub last: Time,
    /// Per receive-buffer slot in use: the bytes written, frames and segments,
    /// and when its event was in host memory.
    pub slots: rustc_hash::FxHashMap<u64, (usize, u32, u32, Time)>,
    /// When each wire frame bound for the host arrived, in order: once for the
    /// driver taking its buffer, once for its protocol work.
    pub arrived_for_driver: std::collections::VecDeque<Time>,
    pub arrived_for_stack: std::collections::VecDeque<Time>,
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
    pub(super) gro: Option<Gro>,
    /// The host driver's GRO timeout in flight: when, and its handle.
    pub(super) gro_timer: Earliest,
    /// Buffers ready to move to the host, waiting for a posted host buffer.
    pub(super) ready: std::collections::VecDeque<super::recv::Ready>,
    /// Segments in the open coalescing buffer.
    pub(super) pending_segments: u32,
    /// The coalescing or LRO timeout in flight: when, and its handle.
    pub(super) flush_timer: Earliest,
    /// What the host's processors must do next, oldest first.
    pub host_work: Vec<HostWork>,
    /// Frames of the host's stack waiting for a send slot.
    pub(super) backlog: std::collections::VecDeque<Frame>,
    /// Frames handed up to the host's stack, for it to take in.
    pub delivered: Vec<Vec<u8>>,
    /// Wire frames whose buffers the host's driver took in this step: when
    /// each arrived and when it was in host memory.
    pub taken: Vec<(Time, Time)>,
    /// Wire frames that went up the protocol in this step: when each arrived.
    pub went_up: Vec<Time>,
    /// What the host steps under way do when they end, in the order they started.
    step_ends: std::collections::VecDeque<HostStep>,
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
            gro: cfg.receive.gro.map(Gro::new),
            gro_timer: Earliest::default(),
            ready: Default::default(),
            pending_segments: 0,
            flush_timer: Earliest::default(),
            host_work: Vec::new(),
            backlog: Default::default(),
            delivered: Vec::new(),
            taken: Vec::new(),
            went_up: Vec::new(),
            step_ends: Default::default(),
            cfg,
        }
    }

    /// The run starts: buffers are posted, the workload begins.
    fn begin(&mut self, bus: &mut HostBus, ctx: &mut Ctx) {
        if self.cfg.receive.to_host {
            self.post_initial_buffers();
        }
        match self.cfg.workload.clone() {
            Workload::Idle => {}
            Workload::Frames { outstanding, .. } => {
                self.host_work.extend(std::iter::repeat_n(HostWork::Send, outstanding as usize));
            }
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
            Due::Doorbell(n) => self.adapter_send(n, bus, ctx),
            Due::SendDone(_) => self.host_work.push(HostWork::SendDone),
            Due::Generate => self.generate(bus, ctx),
            Due::RxPost(n) => self.buffers_posted(n, bus, ctx),
            Due::RxDone(slot) => self.host_work.push(HostWork::Receive(slot)),
            Due::RxFlush => self.rx_flush(bus, ctx),
            Due::GroFlush => self.host_work.push(HostWork::GroFlush),
            Due::DmaDone => {
                self.dma_done(ctx.now());
                self.dma_next(bus, ctx);
            }
        }
    }

    /// The host step for `work` at `now`: what it did.
    fn host_step(&mut self, work: HostWork, now: Time, ctx: &mut Ctx) -> HostStep {
        let mut step = self.host_work_step(work, now, ctx);
        if self.cfg.host.zero_copy {
            step.copy_bytes = 0;
        }
        step
    }

    fn host_work_step(&mut self, work: HostWork, now: Time, ctx: &mut Ctx) -> HostStep {
        match work {
            HostWork::Send => self.host_send(now),
            HostWork::SendDone => {
                self.send.completed += 1;
                if self.stack_frames() {
                    // A send slot is free: the oldest waiting frame takes it.
                    if let Some(frame) = self.backlog.pop_front() {
                        return HostStep {
                            done: DriverStep { completions: 1, ..Default::default() },
                            resend: Some(frame),
                            ..Default::default()
                        };
                    }
                } else {
                    self.host_work.push(HostWork::Send);
                }
                HostStep { done: DriverStep { completions: 1, ..Default::default() }, ..Default::default() }
            }
            HostWork::Receive(slot) => self.host_receive(slot, now, ctx),
            HostWork::GroFlush => self.gro_flush(now, ctx),
        }
    }

    /// Whether the host's own stack sends and receives through this adapter
    /// (it runs no workload of its own).
    pub fn stack_frames(&self) -> bool {
        self.cfg.workload == Workload::Idle
    }

    /// A host step of this adapter ended at `end`: ring its doorbell, if any.
    fn host_step_end(&mut self, cost: HostStep, end: Time, bus: &mut HostBus, ctx: &mut Ctx) {
        if let Some(frame) = cost.resend {
            self.send_frame(frame, end, bus, ctx);
        }
        if cost.delivers {
            self.recv.last = self.recv.last.max(end);
        }
        if let Some(due) = cost.doorbell {
            let at = self.hw.doorbell(bus, end);
            self.timers.arm(ctx, at, due);
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

    /// The adapter's figures; `host_busy` is the host processors' busy time,
    /// for the host cycles per byte.
    fn figures(&self, r: &mut Report, end: Time, host_busy: Duration) {
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
        let payload = (self.send.payload + self.recv.delivered_payload + self.send.dma_bytes).max(1);
        r.count("host_bus_bytes", c.bus_bytes);
        r.real("bus_bytes_per_payload_byte", c.bus_bytes as f64 / payload as f64);
        r.real("bus_transactions_per_frame", c.bus_transactions as f64 / frames as f64);
        r.real("host_cycles_per_byte", host_busy.as_secs_f64() * self.cfg.host.clock.hz() / payload as f64);
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

    fn report(&self, r: &mut Report, end: Time, host_busy: Duration) {
        self.figures(r, end, host_busy);
    }

    fn start(&mut self, cx: &mut DeviceCx) {
        self.settle(cx.now());
        self.begin(cx.bus, cx.ctx);
        cx.out.driver_work = true;
    }

    fn driver_work(&mut self) -> Vec<DriverWork> {
        std::mem::take(&mut self.host_work)
    }

    fn driver_step(&mut self, work: DriverWork, cx: &mut DeviceCx) -> DriverStep {
        let now = cx.now();
        self.settle(now);
        let mut step = self.host_step(work, now, cx.ctx);
        let done = DriverStep {
            delivered: std::mem::take(&mut self.delivered),
            taken: std::mem::take(&mut self.taken),
            went_up: std::mem::take(&mut self.went_up),
            ..std::mem::take(&mut step.done)
        };
        self.step_ends.push_back(step);
        done
    }

    fn driver_step_end(&mut self, end: Time, cx: &mut DeviceCx) {
        self.settle(cx.now());
        let step = self.step_ends.pop_front().expect("a host step of this adapter was under way");
        self.host_step_end(step, end, cx.bus, cx.ctx);
        cx.out.driver_work = true;
    }

    fn send(&mut self, frame: Frame, cx: &mut DeviceCx) {
        let now = cx.now();
        self.settle(now);
        self.send_frame(frame, now, cx.bus, cx.ctx);
    }

    fn stack_segments(&self) -> Option<bool> {
        self.stack_frames().then_some(true)
    }
}
