//! A host with an intelligent adapter, as one component: the host processor, the
//! host bus, and the adapter's processors, memory, DMA engines and MAC (`Hw`).
//! Port 0 is the adapter's wire. The host drives the adapter through rings in
//! its memory and doorbells, and learns of completions by polling an event ring
//! (interrupts masked, as in the Malta study). Sending lives in `send.rs`,
//! receiving in `recv.rs`; timers carry a `Tag` saying what falls due.

use crate::bus::HostBus;
use crate::engine::tag::{pack, unpack};
use crate::engine::{Component, Ctx, Msg, PortId};
use crate::nic::firmware::coalesce::Coalescer;
use crate::nic::firmware::gro::Gro;
use crate::nic::smart::config::{SmartConfig, Workload};
use crate::nic::smart::hw::Hw;
use crate::observe::{Report, SharedTrace, TrackId};
use crate::time::{Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    /// A send doorbell reaches the adapter for this send slot.
    Doorbell(u64),
    /// The host sees the completion event of this send slot.
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
    /// The end of a firmware DMA loop.
    DmaEnd,
}

impl Tag {
    fn encode(self) -> u64 {
        let (kind, v) = match self {
            Tag::Doorbell(v) => (1, v),
            Tag::SendDone(v) => (2, v),
            Tag::Generate => (3, 0),
            Tag::RxPost(v) => (4, v),
            Tag::RxDone(v) => (5, v),
            Tag::RxFlush => (6, 0),
            Tag::GroFlush => (7, 0),
            Tag::DmaEnd => (8, 0),
        };
        pack(kind, 0, v)
    }
    fn decode(t: u64) -> Option<Tag> {
        let (kind, _, v) = unpack(t);
        Some(match kind {
            1 => Tag::Doorbell(v),
            2 => Tag::SendDone(v),
            3 => Tag::Generate,
            4 => Tag::RxPost(v),
            5 => Tag::RxDone(v),
            6 => Tag::RxFlush,
            7 => Tag::GroFlush,
            8 => Tag::DmaEnd,
            _ => return None,
        })
    }
}

pub(super) fn wake(ctx: &mut Ctx, at: Time, tag: Tag) {
    ctx.wake_at(at, tag.encode());
}

/// What the sending side has done.
#[derive(Debug, Default)]
pub(super) struct SendState {
    pub issued: u64,
    pub completed: u64,
    pub frames: u64,
    pub payload: u64,
    pub segmented_sends: u64,
    pub ip_id: u16,
    pub first: Option<Time>,
    pub last_wire_end: Time,
    pub dma_bytes: u64,
    pub staging: super::staging::Staging,
}

/// What the receiving side has done.
#[derive(Debug, Default)]
pub(super) struct RecvState {
    pub frames_in: u64,
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
    /// Per receive-buffer slot in use: the bytes written, frames and segments.
    pub slots: std::collections::HashMap<u64, (usize, u32, u32)>,
}

pub struct Node {
    pub(super) cfg: SmartConfig,
    pub(super) hw: Hw,
    pub(super) host_free: Time,
    pub(super) host_cycles: u64,
    pub(super) host_copy: Duration,
    pub(super) send: SendState,
    pub(super) recv: RecvState,
    pub(super) coalescer: Option<Coalescer>,
    pub(super) lro: Option<Gro>,
    pub(super) gro: Option<Gro>,
    pub(super) gro_armed: Option<Time>,
    /// Buffers ready to move to the host, waiting for a posted host buffer.
    pub(super) ready: std::collections::VecDeque<super::recv::Ready>,
    /// Segments in the open coalescing buffer.
    pub(super) pending_segments: u32,
    pub(super) flush_armed: Option<Time>,
    /// The host processor's timeline track, when the run is traced.
    host_track: Option<(SharedTrace, TrackId)>,
}

impl Node {
    /// A node that draws its host processor, firmware runs and host bus into
    /// `trace` under `name`, when one is given.
    pub fn traced(cfg: SmartConfig, name: &str, trace: Option<SharedTrace>) -> Self {
        let mut node = Node::new(cfg);
        if let Some(t) = trace {
            node.hw.trace_into(t.clone(), name);
            let track = t.borrow_mut().track(name, "host cpu");
            node.host_track = Some((t, track));
        }
        node
    }

    pub fn new(cfg: SmartConfig) -> Self {
        let reach_back = Duration::from_ms(10);
        let bus = HostBus::new(cfg.bus.clone(), reach_back);
        Node {
            hw: Hw::new(cfg.adapter.clone(), bus),
            host_free: Time::ZERO,
            host_cycles: 0,
            host_copy: Duration::ZERO,
            send: SendState::default(),
            recv: RecvState::default(),
            coalescer: cfg.receive.coalesce.map(Coalescer::new),
            lro: cfg.receive.lro.map(Gro::new),
            gro: cfg.receive.gro.map(Gro::new),
            gro_armed: None,
            ready: Default::default(),
            pending_segments: 0,
            flush_armed: None,
            host_track: None,
            cfg,
        }
    }

    /// Run `cycles` of host work and copy `copy_bytes` (unless zero copy) from `at`.
    pub(super) fn host_run(&mut self, at: Time, cycles: u64, copy_bytes: u64) -> Time {
        let start = at.max(self.host_free);
        let copy = if self.cfg.host.zero_copy {
            Duration::ZERO
        } else {
            Duration::from_ps((copy_bytes as f64 * self.cfg.host.costs.copy_ns_per_byte * 1e3) as u64)
        };
        self.host_cycles += cycles;
        self.host_copy = self.host_copy + copy;
        self.host_free = start + self.cfg.host.clock.cycles(cycles) + copy;
        if let Some((trace, track)) = &self.host_track {
            trace.borrow_mut().span(
                *track,
                "host",
                start,
                self.host_free,
                &[("cycles", cycles), ("copied_bytes", if copy == Duration::ZERO { 0 } else { copy_bytes })],
            );
        }
        self.host_free
    }

    fn host_busy(&self) -> Duration {
        self.cfg.host.clock.cycles(self.host_cycles) + self.host_copy
    }
}

impl Component for Node {
    fn kind(&self) -> &'static str {
        "smart_host"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        if self.cfg.receive.to_host {
            self.post_initial_buffers();
        }
        match self.cfg.workload.clone() {
            Workload::Idle => {}
            Workload::Tcp { outstanding, .. } | Workload::Frames { outstanding, .. } => {
                for _ in 0..outstanding {
                    self.host_send(ctx.now(), ctx);
                }
            }
            Workload::Generate { .. } => wake(ctx, ctx.now(), Tag::Generate),
            Workload::Dma { to_host, length, count } => {
                let end = self.dma_loop(to_host, length, count);
                wake(ctx, end, Tag::DmaEnd);
            }
        }
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        match msg {
            Msg::Frame(frame) => self.arrive(frame.bytes, ctx),
            Msg::TxReady => {}
            Msg::Timer(t) => match Tag::decode(t) {
                Some(Tag::Doorbell(slot)) => self.adapter_send(slot, ctx),
                Some(Tag::SendDone(slot)) => self.send_done(slot, ctx),
                Some(Tag::Generate) => self.generate(ctx),
                Some(Tag::RxPost(n)) => self.buffers_posted(n, ctx),
                Some(Tag::RxDone(slot)) => self.host_receive(slot, ctx),
                Some(Tag::RxFlush) => self.rx_flush(ctx),
                Some(Tag::GroFlush) => self.gro_flush(ctx),
                Some(Tag::DmaEnd) | None => {}
            },
        }
    }

    fn report(&self, end: Time) -> Report {
        let mut r = Report::default();
        let secs = end.as_secs_f64().max(1e-12);
        self.send_report(&mut r);
        self.recv_report(&mut r);
        let c = &self.hw.c;
        let frames = (self.send.frames + self.recv.frames_in).max(1);
        for (k, busy) in self.hw.busy().into_iter().enumerate() {
            r.real(&format!("adapter_cpu{k}_utilization"), busy.as_secs_f64() / secs);
        }
        r.real("adapter_cycles_per_frame", c.cycles.iter().sum::<u64>() as f64 / frames as f64);
        r.count("adapter_memory_payload_bytes", c.memory_payload_written);
        r.count("adapter_memory_bytes", c.memory_bytes);
        r.real("adapter_memory_utilization", self.hw.memory_busy().as_secs_f64() / secs);
        r.count("dma_transfers", c.dma_transfers);
        let payload = (self.send.payload + self.recv.delivered_payload + self.send.dma_bytes).max(1);
        r.count("host_bus_bytes", c.bus_bytes);
        r.real("bus_bytes_per_payload_byte", c.bus_bytes as f64 / payload as f64);
        r.real("bus_transactions_per_frame", c.bus_transactions as f64 / frames as f64);
        r.real("host_cpu_utilization", self.host_busy().as_secs_f64() / secs);
        let host_cycles = self.host_busy().as_secs_f64() * self.cfg.host.clock.hz();
        r.real("host_cycles_per_byte", host_cycles / payload as f64);
        self.hw.bus.report(&mut r, end);
        r
    }
}
