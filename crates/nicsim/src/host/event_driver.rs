//! The host's driver for an event-ring adapter (a programmable adapter,
//! `nic::smart`), as the Malta study's host ran it with the adapter's
//! interrupt masked: it reaches the adapter only through host memory (send
//! buffers and descriptors it writes, receive buffers and events the adapter
//! writes: `nic::smart::layout`) and the adapter's doorbell registers. A send
//! writes the frame or chunk and its descriptor and rings the send doorbell; a
//! completion event frees its slot. A filled buffer's event is taken in a step:
//! the driver splits a coalesced buffer into its frames, merges TCP segments
//! (GRO, if on), hands each frame up, and posts buffers back in batches. What
//! a step did (`DriverStep`) the host prices with its own costs
//! (`host::event_ring_steps`).

use std::collections::VecDeque;

use crate::device::{Event, Register};
use crate::engine::timers::Earliest;
use crate::mem::Memory;
use crate::nic::firmware::gro::{Gro, Out};
use crate::nic::firmware::tso::Template;
use crate::nic::firmware::{chunk, csum};
use crate::nic::smart::config::SmartConfig;
use crate::nic::smart::layout::*;
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::{verify_checksums, Frame};

/// Work for the host's processors that the adapter's events, or the driver's
/// own timers and workload, call for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverWork {
    /// The application's next send call (its frames the host's sender makes:
    /// `host::apps::FrameSender`).
    Send,
    /// A send's completion event: take it, then make the next send.
    SendDone,
    /// A filled receive buffer: take it up the stack. (Boxed: a processor's
    /// queue holds items of the size of its largest.)
    Receive(Box<Received>),
    /// The driver's GRO timeout passed: hand up what it holds.
    GroFlush,
}

/// A filled receive buffer's event, as the driver found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub slot: u64,
    /// When its event was in host memory, and when its wire frames arrived (figures).
    pub seen: Time,
    pub arrived: Vec<Time>,
}

/// What one driver step did, in work the host prices with its own costs, and
/// the frames it hands the host's stack.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverStep {
    /// The application's send calls.
    pub send_calls: u64,
    /// Frames the host built for a send.
    pub frames_built: u64,
    /// Events taken from the event ring.
    pub completions: u64,
    /// Filled receive buffers the driver took.
    pub buffers_taken: u64,
    /// Segments the driver's GRO took in.
    pub gro_segments: u64,
    /// Frames or merged segments that passed the host's protocol.
    pub protocol_passes: u64,
    pub copy_bytes: u64,
    /// Frames for the host's stack, in order, each with the size of the
    /// segments it was merged from (0: as it came).
    pub delivered: Vec<(Vec<u8>, u16)>,
    /// Wire frames whose buffers the driver took: when each arrived and when
    /// it was in host memory.
    pub taken: Vec<(Time, Time)>,
    /// Wire frames that went up the protocol: when each arrived.
    pub went_up: Vec<Time>,
}

/// What a step does when it ends.
#[derive(Debug, Default)]
struct StepEnd {
    /// A doorbell to ring.
    doorbell: Option<Register>,
    /// It handed received data up (it ends a receive interval).
    delivers: bool,
    /// A frame of the host's stack that waited for a send slot.
    resend: Option<Frame>,
}

/// How the host's frame sender calls this driver: `per_call` frames a call,
/// `outstanding` calls kept posted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendCalls {
    pub per_call: u32,
    pub outstanding: u32,
}

pub struct EventDriver {
    cfg: SmartConfig,
    /// The frame sender that calls it, if the host sends through it.
    sends: Option<SendCalls>,
    /// Sends issued and completed; frames of the host's stack waiting for a slot.
    issued: u64,
    completed: u64,
    backlog: VecDeque<Frame>,
    /// Buffers taken and not yet posted back.
    to_repost: u64,
    gro: Option<Gro>,
    /// The GRO timeout in flight (a host timer).
    pub gro_timer: Earliest,
    /// When each wire frame of the buffers taken arrived, until it goes up.
    arrived_for_stack: VecDeque<Time>,
    /// Work to queue, oldest first.
    work: Vec<DriverWork>,
    /// What the steps under way do when they end, in the order they started.
    step_ends: VecDeque<StepEnd>,
    buffers: u64,
    delivered_frames: u64,
    delivered_segments: u64,
    delivered_payload: u64,
    host_bad: u64,
    first: Option<Time>,
    last: Time,
}

impl EventDriver {
    /// The driver for the programmable adapter `cfg` describes, called by the
    /// host's frame sender as `sends` says, or else by its stack.
    pub fn new(cfg: &SmartConfig, sends: Option<SendCalls>) -> EventDriver {
        EventDriver {
            gro: cfg.receive.gro.map(Gro::new),
            cfg: cfg.clone(),
            sends,
            issued: 0,
            completed: 0,
            backlog: VecDeque::new(),
            to_repost: 0,
            gro_timer: Earliest::default(),
            arrived_for_stack: VecDeque::new(),
            work: Vec::new(),
            step_ends: VecDeque::new(),
            buffers: 0,
            delivered_frames: 0,
            delivered_segments: 0,
            delivered_payload: 0,
            host_bad: 0,
            first: None,
            last: Time::ZERO,
        }
    }

    /// Whether the host's own stack sends and receives through the adapter
    /// (the host's frame sender does not).
    pub fn stack_frames(&self) -> bool {
        self.sends.is_none()
    }

    /// The frames the sender builds in each call (0: it makes no calls).
    pub fn per_call(&self) -> u32 {
        self.sends.map_or(0, |s| s.per_call)
    }

    /// The run starts: the frame sender makes its first calls.
    pub fn start(&mut self) {
        if let Some(s) = self.sends {
            self.work.extend(std::iter::repeat_n(DriverWork::Send, s.outstanding as usize));
        }
    }

    /// The GRO timeout fell due.
    pub fn gro_due(&mut self) {
        self.work.push(DriverWork::GroFlush);
    }

    /// The work to queue now: the driver's own, then what the adapter's new `events` call for.
    pub fn work(&mut self, events: Vec<Event>) -> Vec<DriverWork> {
        self.work.extend(events.into_iter().map(|e| match e {
            Event::SendDone(_) => DriverWork::SendDone,
            Event::Received { slot, seen, arrived } => DriverWork::Receive(Box::new(Received { slot, seen, arrived })),
        }));
        std::mem::take(&mut self.work)
    }

    /// The step for `work` at `now`, over host memory `mem`: what it did, and
    /// when its GRO next falls due, if it holds segments. A send call's
    /// `frames` are the sender's (none for other work).
    pub fn step(&mut self, work: DriverWork, frames: Vec<Frame>, now: Time, mem: &mut Memory) -> (DriverStep, Option<Time>) {
        let receives = matches!(work, DriverWork::Receive(_) | DriverWork::GroFlush);
        let (mut step, end) = match work {
            DriverWork::Send => self.send_call(frames, now, mem),
            DriverWork::SendDone => self.send_done(),
            DriverWork::Receive(r) => self.receive(*r, now, mem),
            DriverWork::GroFlush => {
                self.gro_timer.fired();
                let outs = self.gro.as_mut().map_or_else(Vec::new, |g| g.expire(now));
                self.deliver(outs)
            }
        };
        if self.cfg.host.zero_copy {
            step.copy_bytes = 0;
        }
        let gro = if receives { self.gro.as_ref().and_then(|g| g.deadline()) } else { None };
        self.step_ends.push_back(end);
        (step, gro)
    }

    /// The oldest step under way ended at `end`: the doorbells it rings then.
    pub fn step_end(&mut self, end: Time, mem: &mut Memory) -> Vec<Register> {
        let step = self.step_ends.pop_front().expect("a step of this driver was under way");
        let mut rings = Vec::new();
        if let Some(frame) = step.resend {
            rings.extend(self.send_frame(frame, end, mem));
        }
        if step.delivers {
            self.last = self.last.max(end);
        }
        rings.extend(step.doorbell);
        rings
    }

    /// The sender's send call at `at` with the `frames` it built (none: it
    /// has sent all it had): their checksums left to the adapter, they are
    /// written to a buffer (a chunk of them, for fragmentation, when a call
    /// makes more than one) with a descriptor, and the doorbell rung when the
    /// call ends.
    fn send_call(&mut self, frames: Vec<Frame>, at: Time, mem: &mut Memory) -> (DriverStep, StepEnd) {
        let (k, chunked) = (frames.len() as u32, self.per_call() > 1);
        if k == 0 {
            return Default::default();
        }
        let mut buf = Vec::new();
        for mut f in frames {
            csum::clear(&mut f.bytes);
            if chunked {
                chunk::push(&mut buf, &f.bytes);
            } else {
                buf = f.bytes;
            }
        }
        let n = self.issued;
        let slot = n % SEND_SLOTS;
        let addr = APP + slot * chunk::MAX_CHUNK as u64;
        write(mem, addr, &buf);
        let what = if chunked { CHUNK | k } else { k };
        write(mem, SEND_RING + slot * SEND_SLOT, &descriptor(addr, buf.len() as u32, what));
        self.issued += 1;
        let step = DriverStep { send_calls: 1, frames_built: k as u64, copy_bytes: buf.len() as u64, ..Default::default() };
        (step, StepEnd { doorbell: Some(Register::SendPosted { n, made: at, issued: at }), ..Default::default() })
    }

    /// A frame of the host's own stack, handed over at `at` (its cost is the
    /// stack's): written to a buffer with its descriptor; the doorbell to
    /// ring. A large send (`gso`) leaves its headers in the descriptor as the
    /// template for segmentation. With every send slot in flight it waits for
    /// a completion.
    pub fn send_frame(&mut self, frame: Frame, at: Time, mem: &mut Memory) -> Option<Register> {
        if self.issued - self.completed >= SEND_SLOTS {
            self.backlog.push_back(frame);
            return None;
        }
        let n = self.issued;
        let slot = n % SEND_SLOTS;
        let addr = APP + slot * chunk::MAX_CHUNK as u64;
        let d = SEND_RING + slot * SEND_SLOT;
        match (frame.meta.gso > 0).then(|| Template::parse(&frame.bytes).ok()).flatten() {
            Some(t) => {
                let h = t.header_len();
                write(mem, addr, &frame.bytes[h..]);
                let flags = SEGMENT | (frame.meta.gso as u32) << 8 | h as u32;
                write(mem, d, &descriptor(addr, (frame.bytes.len() - h) as u32, flags));
                write(mem, d + 16, &frame.bytes[..h]);
            }
            None => {
                write(mem, addr, &frame.bytes);
                write(mem, d, &descriptor(addr, frame.bytes.len() as u32, 1));
            }
        }
        self.issued += 1;
        Some(Register::SendPosted { n, made: frame.meta.created, issued: at })
    }

    /// A send's completion: its slot is free for the oldest waiting frame of
    /// the stack, or the frame sender's next send call.
    fn send_done(&mut self) -> (DriverStep, StepEnd) {
        self.completed += 1;
        let step = DriverStep { completions: 1, ..Default::default() };
        let mut end = StepEnd::default();
        if self.stack_frames() {
            end.resend = self.backlog.pop_front();
        } else {
            self.work.push(DriverWork::Send);
        }
        (step, end)
    }

    /// The driver finds a filled buffer in its event ring: it takes the
    /// buffer, merges segments (GRO, if on), hands each frame or merged
    /// segment to the protocol (copying its payload unless zero copy) and
    /// posts buffers back in batches.
    fn receive(&mut self, Received { slot, seen, arrived }: Received, now: Time, mem: &mut Memory) -> (DriverStep, StepEnd) {
        let mut event = [0u8; 16];
        mem.read(RX_EVENTS + (slot % EVENT_SLOTS) * 16, &mut event).expect("mapped");
        let (len, frames, segments) = parse_rx_event(&event);
        self.buffers += 1;
        self.delivered_segments += segments as u64;
        if let Some(&a) = arrived.first() {
            self.first.get_or_insert(a);
        }
        self.arrived_for_stack.extend(arrived.iter().copied());
        let taken = arrived.into_iter().map(|a| (a, seen)).collect();
        let mut buf = vec![0u8; len];
        mem.read(RX_BUFFERS + slot * RX_SLOT, &mut buf).expect("mapped");
        let coalesced = self.cfg.receive.coalesce.is_some();
        let list = if coalesced { chunk::split(&buf).unwrap_or_default() } else { std::iter::once(0..len).collect() };
        // The wire frames each piece stands for: one a coalesced frame, all of
        // the buffer's an LRO segment.
        let weight = if coalesced { 1 } else { segments };
        if list.len() != frames as usize {
            self.host_bad += frames as u64;
        }
        let mut outs = Vec::new();
        let mut gro_in = 0u64;
        for r in list {
            match &mut self.gro {
                Some(g) => {
                    gro_in += 1;
                    outs.extend(g.push_weighted(&buf[r], now, weight));
                }
                None => outs.push(Out { bytes: buf[r].to_vec(), segments: weight, reason: None, gso: 0 }),
            }
        }
        let (mut step, mut end) = self.deliver(outs);
        step.taken = taken;
        step.completions += 1;
        step.buffers_taken += 1;
        step.gro_segments += gro_in;
        self.to_repost += 1;
        if self.to_repost >= self.cfg.host.repost_batch as u64 {
            end.doorbell = Some(Register::BuffersPosted(std::mem::take(&mut self.to_repost)));
        }
        (step, end)
    }

    /// The protocol takes frames (or merged segments): checked, counted, and
    /// handed to the host's stack, or passed and copied for the workload.
    fn deliver(&mut self, outs: Vec<Out>) -> (DriverStep, StepEnd) {
        let mut step = DriverStep::default();
        let stack = self.stack_frames();
        for o in outs {
            let payload = match verify_checksums(&o.bytes) {
                Ok(v) => v.payload.len() as u64,
                Err(_) => {
                    self.host_bad += 1;
                    0
                }
            };
            self.delivered_frames += 1;
            self.delivered_payload += payload;
            let n = (o.segments as usize).min(self.arrived_for_stack.len());
            step.went_up.extend(self.arrived_for_stack.drain(..n));
            if stack {
                // A segment the adapter's LRO merged comes without its segment
                // size: the driver divides, as Linux's mlx5 does for its LRO.
                let gso = match o.gso {
                    0 if o.segments > 1 => payload.div_ceil(o.segments as u64) as u16,
                    g => g,
                };
                step.delivered.push((o.bytes, gso));
            } else {
                step.protocol_passes += 1;
                step.copy_bytes += payload;
            }
        }
        (step, StepEnd { delivers: true, ..Default::default() })
    }

    /// The driver's figures, beside its adapter's in `r`: what it sent and
    /// received, and what the host spent a payload byte (`host_busy`, its
    /// processors' busy time).
    pub fn report(&self, r: &mut Report, host_busy: Duration) {
        if self.issued > 0 {
            r.count("sends_completed", self.completed);
        }
        // Where its adapter received frames for the host, even if none came up
        // (an offloaded XDP program dropped them all).
        if self.cfg.receive.to_host && r.get("rx_frames").is_some() {
            let secs = self.first.map_or(0.0, |first| self.last.since(first).as_secs_f64()).max(1e-12);
            r.count("rx_host_buffers", self.buffers);
            r.count("rx_delivered_segments", self.delivered_segments);
            r.count("rx_delivered_frames", self.delivered_frames);
            r.count("rx_payload_bytes", self.delivered_payload);
            r.count("rx_host_bad", self.host_bad);
            r.real("rx_goodput_mbps", self.delivered_payload as f64 * 8.0 / secs / 1e6);
            r.real("rx_frames_per_s", self.delivered_segments as f64 / secs);
            r.real("rx_frames_per_host_buffer", self.delivered_segments as f64 / self.buffers.max(1) as f64);
            if let Some(g) = &self.gro {
                r.count("gro_merged_segments", g.merged_segments);
            }
        }
        let of = |name: &str| r.get(name).unwrap_or(0.0);
        let payload = (of("tx_payload_bytes") + self.delivered_payload as f64 + of("dma_bytes")).max(1.0);
        let bus_bytes = of("host_bus_bytes");
        r.real("bus_bytes_per_payload_byte", bus_bytes / payload);
        r.real("host_cycles_per_byte", host_busy.as_secs_f64() * self.cfg.host.clock.hz() / payload);
    }
}

/// Bytes the host writes into its own memory.
fn write(mem: &mut Memory, addr: u64, bytes: &[u8]) {
    mem.write(addr, bytes).expect("host buffers are mapped");
}

#[cfg(test)]
#[path = "event_driver_tests.rs"]
mod tests;
