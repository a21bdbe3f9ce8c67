//! A modelled host as one component: its processors, its buses, its adapters,
//! and the driver, stack and applications that run on the processors. The parts
//! share the bus calendars and the processors, contended resources whose timing
//! is booked directly; so a host is one component, and its port `i` is its
//! `i`-th adapter's wire. Within the host a port is one queue of an adapter
//! (an adapter with several queues has a port of the host for each, all on
//! its wire; its device steers each frame to one of them).
//! Internal events are timers whose tag says what falls due (`Tag`; what each
//! does is in `timers.rs`). Its parts: the processors and what they
//! may take next (`Processors`), the applications (`Apps`), the ports and
//! buses, the timers, and what it counts for its results (`Tally`).

use crate::bus::HostBus;
use crate::device::{Device, DeviceCx, DeviceOut, Interface, Register};
use crate::engine::timers::Timers;
use crate::engine::{Component, Ctx, Msg, PortId};
use crate::host::adapters::Adapters;
use crate::host::apps::Apps;
use crate::host::config::HostConfig;
use crate::host::cpu::{Effects, Item};
use crate::host::event_driver::{EventDriver, SendCalls};
use crate::host::offload::Offload;
use crate::host::port::{Driver, Port, RingDriver};
use crate::host::processors::{Processors, RunQueue};
use crate::host::send_order::SendOrder;
use crate::host::sessions::Sessions;
pub(super) use crate::host::tag::{IrqAlarm, Tag, HOST_TIMERS};
use crate::host::tally::Tally;
use crate::host::trace_tracks::trace_parts;
use crate::host::transfer::Wires;
use crate::mem::DmaCount;
use crate::nic::Transfer;
use crate::observe::{Report, SharedTrace, TrackId};
use crate::stack::Stack;
use crate::time::{Duration, Time};
use crate::wire::Frame;

pub struct Machine {
    pub(super) cfg: HostConfig,
    pub(super) buses: Vec<HostBus>,
    pub(super) ports: Vec<Port>,
    /// The adapters' devices, and the rings of each port in host memory.
    pub(super) adapters: Adapters,
    /// The ports whose adapter the driver works through its rings (every one
    /// but the offload engines and event-ring adapters).
    pub(super) ring_ports: Vec<usize>,
    /// With a poll loop: per processor, the rings its loop polls (a queue of a
    /// multi-queue adapter on its own processor, the rest on `poll_cpu`); per
    /// port, the processor whose loop polls it.
    pub(super) poll_rings: Vec<Vec<usize>>,
    pub(super) poller_of: Vec<usize>,
    /// Some adapter has several queues.
    pub(super) multi_queue: bool,
    pub(super) procs: Processors,
    pub(super) apps: Apps,
    /// The host's timers (`Tag`), each taken back by its handle.
    pub(super) timers: Timers<Tag>,
    pub(super) trace: Option<SharedTrace>,
    /// The data frames of a TTCP transfer, when the host runs one.
    pub(super) wires: Option<Wires>,
    wire_tracks: Vec<TrackId>,
    pub(super) send_order: SendOrder,
    /// Frames a step put in each adapter's ring, and what a device told the
    /// host (kept to save an allocation a step and a frame).
    pub(super) tx_filled: Vec<u32>,
    device_out: DeviceOut,
    /// When the run ended (set by `finish`), for the results' text.
    ended: Time,
    pub(super) tally: Tally,
}

impl Machine {
    /// The host `cfg` describes, with `devices`, one for each of its adapters
    /// in wire-port order (an adapter's queues are its slots in `cfg`): it
    /// runs for each queue the driver its device's interface asks for.
    pub fn new(cfg: HostConfig, devices: Vec<Box<dyn Device>>, name: &str, trace: Option<SharedTrace>) -> Result<Self, String> {
        let mut adapters = Adapters::new(devices, &cfg.adapters)?;
        // The bus keeps its bookings for as long as the slowest adapter takes to
        // receive a jumbo frame, or as far back as a device books.
        let slowest = cfg.adapters.iter().map(|a| a.nic.link_rate_bps).min().unwrap_or(1);
        let reach_back = adapters.devices().map(|d| d.books_back()).fold(Duration::for_bits(10_000 * 8, slowest), Duration::max);
        let mut buses: Vec<HostBus> = (0..cfg.buses).map(|_| HostBus::new(cfg.bus.clone(), reach_back)).collect();
        // One last-level cache: every bus's DMA moves through DDIO's share of it.
        let dma = DmaCount::default();
        for b in &mut buses {
            b.dma = dma.clone();
        }
        let mut ports = Vec::with_capacity(cfg.adapters.len());
        for (i, a) in cfg.adapters.iter().enumerate() {
            let device = adapters.device(i);
            let driver = match device.interface() {
                Interface::Rings => Driver::Rings(Box::new(RingDriver::new(&a.nic))),
                Interface::Events => {
                    let Some(smart) = &a.programmable else {
                        return Err(format!("adapter {i} works from an event ring, and the host has no settings for its driver"));
                    };
                    // A frame sender calls the driver of the adapter it leaves by.
                    let sender = cfg.blast.iter().chain(&cfg.send).find(|b| b.port == i);
                    let sends = sender.map(|b| SendCalls { per_call: b.burst, outstanding: b.outstanding });
                    Driver::Events(Box::new(EventDriver::new(smart, sends)))
                }
                Interface::Messages => {
                    let Some(o) = &a.offload else {
                        return Err(format!("adapter {i} speaks in messages, and the host has no sockets for it"));
                    };
                    let driver = Offload::new(o.engine.clone(), &o.roles);
                    if let Some(port) = driver.watched() {
                        device.watch(port);
                    }
                    Driver::Messages(Box::new(driver))
                }
            };
            ports.push(Port::new(&a.nic, a.bus, driver));
        }
        let ring_ports: Vec<usize> = (0..ports.len()).filter(|p| ports[*p].ring_ref().is_some()).collect();
        let poller_of: Vec<usize> = cfg
            .adapters
            .iter()
            .map(|a| if a.queues > 1 && !cfg.driver.busy_poll { a.irq_cpu } else { cfg.driver.poll_cpu as usize })
            .collect();
        let mut poll_rings = vec![Vec::new(); cfg.cpus as usize];
        for &p in &ring_ports {
            poll_rings[poller_of[p]].push(p);
        }
        let mut procs = Processors::new(cfg.clock, run_queues(&cfg, &poll_rings, &ring_ports), cfg.driver.deferred);
        let wire_tracks =
            trace.as_ref().map_or(Vec::new(), |t| trace_parts(t, name, &mut buses, &mut procs.cpus, (&mut adapters, &cfg.adapters)));
        let sessions = match &cfg.sessions {
            list if list.is_empty() => None,
            list => {
                // The stack sends by an adapter's first queue.
                let segments = ports.iter().zip(&cfg.adapters).map(|(p, a)| if a.queue > 0 { None } else { p.stack_segments() });
                let mut s = Sessions::new(&cfg.stack, cfg.seed, list.clone(), segments.collect(), &cfg.routes)?;
                s.one_call_a_step();
                Some(s)
            }
        };
        // The TTCP connection's frames, on an offload engine or the host's stack.
        let on_engine = ports.iter().find_map(|p| p.offload()).and_then(|o| o.ttcp_port());
        let wires = on_engine.or(sessions.as_ref().and_then(|s| s.ttcp()).map(|(.., port)| port));
        let wires = wires.map(|port| Wires { port: Some(port), ..Wires::default() });
        let apps = Apps::new(sessions, cfg.sink, cfg.blast.clone(), cfg.send.clone())?;
        Ok(Machine {
            apps,
            buses,
            ports,
            adapters,
            ring_ports,
            poll_rings,
            poller_of,
            multi_queue: cfg.adapters.iter().any(|a| a.queues > 1),
            procs,
            timers: Timers::new(HOST_TIMERS),
            trace,
            wires,
            wire_tracks,
            send_order: SendOrder::default(),
            tx_filled: Vec::new(),
            device_out: DeviceOut::default(),
            ended: Time::ZERO,
            tally: Tally::default(),
            cfg,
        })
    }

    /// The queue a frame for adapter `p` leaves by when processor `k` sends it:
    /// the queue of `p`'s adapter whose vector is on `k`, as Linux's XPS maps
    /// each processor to a transmit queue, else `p`.
    pub(super) fn transmit_queue(&self, p: usize, k: usize) -> usize {
        let first = p - self.adapters.queue(p);
        let queues = self.cfg.adapters[first].queues as usize;
        (first..first + queues).find(|&q| self.cfg.adapters[q].irq_cpu == k).unwrap_or(p)
    }

    /// The adapter the stack answers a frame of adapter `p` by: its first queue.
    #[inline]
    pub(super) fn stack_port(&self, p: usize) -> usize {
        p - self.adapters.queue(p)
    }

    /// Hand port `p`'s adapter an input (`f`), then do what it tells the
    /// host for the queue whose vector it raised; returns what `f` does.
    #[inline]
    pub(super) fn tell_device<R>(&mut self, p: usize, ctx: &mut Ctx, f: impl FnOnce(&mut (dyn Device + 'static), &mut DeviceCx) -> R) -> R {
        self.tell_adapter(self.adapters.adapter(p), ctx, f)
    }

    /// Hand adapter `a` an input, as `tell_device`.
    #[inline(always)]
    fn tell_adapter<R>(&mut self, a: usize, ctx: &mut Ctx, f: impl FnOnce(&mut (dyn Device + 'static), &mut DeviceCx) -> R) -> R {
        let mark = ctx.sent().len();
        let (r, raised) = self.adapters.tell(a, ctx, &mut self.buses, &mut self.device_out, f);
        if ctx.sent().len() > mark {
            self.frames_sent(mark, ctx);
        }
        self.device_said(raised, ctx);
        r
    }

    /// The next frame port `p`'s ring driver takes at `now`, with its place in
    /// the queue's order and when it became visible.
    #[inline(always)]
    pub(super) fn take(&mut self, p: usize, now: Time) -> Option<(u64, Box<Frame>, Time)> {
        let Driver::Rings(ring) = &mut self.ports[p].driver else { unreachable!("only a ring driver takes from rings") };
        let (frame, visible) = self.adapters.take(p, now, ring.transfer != Transfer::BusMaster)?;
        ring.taken += 1;
        Some((ring.taken - 1, frame, visible))
    }

    /// The driver writes register `reg` of adapter `p` at `now`: the write
    /// reaches the adapter once the bus has posted it.
    pub(super) fn write_register(&mut self, p: usize, reg: Register, now: Time, ctx: &mut Ctx) {
        let at = self.buses[self.ports[p].bus].register_write(now);
        self.timers.arm(ctx, at, Tag::Register(p, reg));
    }

    /// Tally the frames a device sent since `mark` (a TTCP transfer's on the
    /// wire, each frame's time from its making to the wire).
    fn frames_sent(&mut self, mark: usize, ctx: &mut Ctx) {
        let measuring = self.measuring(ctx.now());
        for o in &ctx.sent()[mark..] {
            if let (Some(_), Msg::Frame(frame)) = (o.port, &o.msg) {
                if let Some(w) = &mut self.wires {
                    w.sent(&frame.bytes, o.at);
                }
                if measuring {
                    self.tally.latency.sent(frame.meta.created, o.at);
                    // Only a frame that came in by an adapter has an arrival.
                    if frame.meta.arrived > Time::ZERO {
                        self.tally.latency.forwarded(frame.meta.arrived, o.at);
                    }
                }
            }
        }
    }

    /// What adapter `p` told the host: completions raise its interrupt (or
    /// wake the poll loop), sends taken let the driver queue more, work left
    /// for the driver goes to the polling processor.
    #[inline(always)]
    fn device_said(&mut self, p: usize, ctx: &mut Ctx) {
        let now = ctx.now();
        if !self.device_out.completions.is_empty() {
            let k = self.poller_of[p];
            let polling = self.polling() && self.procs.poll_asleep_since[k].is_some();
            let left = self.device_out.buffers_left;
            for &(at, n) in &self.device_out.completions {
                if polling {
                    self.timers.arm(ctx, at.max(now), Tag::Thread(k));
                }
                let port = &mut self.ports[p];
                let mut alarm = IrqAlarm { timers: &mut self.timers, ctx, port: p };
                port.irq.completed(at, n, &mut alarm);
                if let Some(left) = left {
                    port.irq.buffers_left(at, left, &mut alarm);
                }
            }
            self.device_out.completions.clear();
        }
        let out = &mut self.device_out;
        out.buffers_left = None;
        if out.sends_done > 0 || out.took_sends || out.driver_work {
            self.device_said_more(p, ctx);
        }
    }

    /// The rest of what a device says, out of the frame path: sends done or
    /// taken, work for the driver.
    #[inline(never)]
    fn device_said_more(&mut self, p: usize, ctx: &mut Ctx) {
        let out = &mut self.device_out;
        let (done, took_sends, driver_work) =
            (std::mem::take(&mut out.sends_done), std::mem::take(&mut out.took_sends), std::mem::take(&mut out.driver_work));
        // A polling driver finds the sends done on its passes.
        if done > 0 && !self.polling() {
            self.ports[p].irq.completed(ctx.now(), done, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
        }
        if took_sends {
            self.wake_sender_for(p, ctx);
            self.sends_in_adapter(p, ctx);
        }
        if driver_work {
            self.event_ring_work(p, ctx);
        }
    }

    /// Adapter `p` raised its interrupt: the processor it is bound to takes it.
    pub(super) fn interrupt(&mut self, p: usize, ctx: &mut Ctx) {
        let k = self.cfg.adapters[p].irq_cpu;
        self.procs.cpus[k].irq_pending.push_back(p);
        if !self.procs.cpus[k].idle() && self.procs.cpus[k].preemptible() {
            if let Some(end) = self.procs.cpus[k].preempt(ctx.now()) {
                self.timers.cancel(end);
            }
            self.tally.preemptions += 1;
        }
        self.dispatch(k, ctx);
    }

    /// Apply what a finished step changes, then find the processor more work.
    pub(super) fn end_step(&mut self, k: usize, ctx: &mut Ctx) {
        let Some(step) = self.procs.cpus[k].end() else { return };
        let now = ctx.now();
        let mut effects = step.effects;
        let (enable_irq, leave_handler, event_ring) = (effects.enable_irq, effects.leave_handler, effects.event_ring.take());
        if leave_handler {
            self.procs.cpus[k].in_handler = None;
            if let Some(since) = self.procs.cpus[k].handler_since.take() {
                self.tally.handler.leave(since, now);
            }
        }
        if let Some(p) = event_ring {
            self.event_ring_step_end(p, now, ctx);
        }
        if !effects.delivered.is_empty() && self.measuring(now) {
            for arrived in effects.delivered.drain(..) {
                self.tally.latency.delivered(arrived, now);
            }
        }
        // Only steps for an offload engine have messages for it; an empty
        // list's drain is still a call.
        if !effects.to_adapter.is_empty() {
            for (p, w) in effects.to_adapter.drain(..) {
                self.hand_to_engine(p, w, ctx);
            }
        }
        for (p, n) in effects.refill.drain(..) {
            self.write_register(p, self.adapters.rx_tail(p, n), now, ctx);
        }
        self.send_order.in_turn(step.send_turn, &mut effects.transmit);
        let unbuilt = self.send_frames(&mut effects.transmit, now, ctx);
        if let Some(p) = enable_irq {
            let at = self.buses[self.ports[p].bus].register_write(now);
            self.ports[p].irq.enable(at, &mut IrqAlarm { timers: &mut self.timers, ctx, port: p });
        }
        let released = self.procs.queue_deferred(k, &mut effects.queue);
        let handed = if effects.remote.is_empty() { Vec::new() } else { self.hand_over(k, &mut effects.remote, now, ctx) };
        if let Some(item) = effects.first.take() {
            self.procs.cpus[k].queue.push_front(item);
        }
        if let Some(p) = unbuilt {
            self.procs.cpus[k].queue.push_front(Item::Send(p));
        }
        Effects::recycle(effects);
        // A step that must follow keeps the stack lock.
        if self.procs.then[k].is_none() {
            self.procs.stack_held &= !step.holds_stack;
        }
        // Work that others may take goes first to those waiting for it, so
        // this processor stays free for the interrupts bound to it.
        if (step.holds_stack || step.releases_order || released) && self.procs.others_may_take(k) {
            for other in (k + 1..self.procs.cpus.len()).chain(0..k) {
                self.dispatch(other, ctx);
            }
        }
        for other in handed {
            self.dispatch(other, ctx);
        }
        self.dispatch(k, ctx);
    }

    /// Deferred work a step on processor `k` made for others, each to its
    /// processor's queue. An idle processor is woken first: it runs after
    /// `wakeup_latency`, and its next step pays the wake-up's cycles. Returns
    /// the processors awake and free to take their work now.
    fn hand_over(&mut self, k: usize, items: &mut Vec<(usize, Item)>, now: Time, ctx: &mut Ctx) -> Vec<usize> {
        let mut free = Vec::new();
        for (c, item) in items.drain(..) {
            let asleep = c != k && !self.procs.waking[c] && self.procs.cpus[c].idle() && self.procs.nothing_queued(c);
            self.procs.cpus[c].queue.push_back(item);
            if asleep {
                self.procs.wakeups += 1;
                self.procs.owed[c] += self.cfg.costs.wakeup;
                let at = now + self.cfg.costs.wakeup_latency;
                self.procs.waking[c] = true;
                self.timers.arm(ctx, at, Tag::Wake(c));
            } else if c != k && !self.procs.waking[c] && !free.contains(&c) {
                free.push(c);
            }
        }
        free
    }

    pub(super) fn arm_sessions(&mut self, ctx: &mut Ctx) {
        self.arm_sessions_from(ctx.now(), ctx);
    }

    /// Arm the sessions' next timer as work that ran from `at` left it.
    pub(super) fn arm_sessions_from(&mut self, at: Time, ctx: &mut Ctx) {
        let Some(t) = self.apps.sessions.as_mut().and_then(|s| s.next_timer(at)) else { return };
        self.apps.sessions_timer.set(&mut self.timers, ctx, t, at, Tag::Sessions);
    }
}

impl Component for Machine {
    fn kind(&self) -> &'static str {
        "host"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.ends_at(ctx.end());
        self.offload_start();
        self.event_ring_start(ctx);
        for p in self.ring_ports.clone() {
            let nic = &self.cfg.adapters[p].nic;
            let masked = self.cfg.driver.starts_masked(nic.moderation);
            let ring = nic.rx_ring;
            let port = &mut self.ports[p];
            if masked {
                if let Some(t) = port.irq.disable() {
                    self.timers.cancel(t);
                }
            }
            let tail = self.adapters.rx_tail(p, ring - 1);
            self.tell_device(p, ctx, |d, cx| d.register_write(tail, cx));
        }
        if self.apps.sessions.is_some() {
            self.procs.cpus[self.cfg.app_cpu.unwrap_or(0)].queue.push_back(Item::Start);
        }
        for k in 0..self.procs.cpus.len() {
            self.dispatch(k, ctx);
        }
    }

    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        let now = ctx.now();
        for b in &mut self.buses {
            b.settle(now);
        }
        match msg {
            Msg::Frame(frame) => {
                let p = port as usize;
                if let (Some(t), Some(track)) = (&self.trace, self.wire_tracks.get(p)) {
                    t.borrow_mut().instant(*track, "frame in", now);
                }
                // The MAC's address filter: another station's frame (one a
                // switch floods before it has learned where that station is)
                // goes no further than the adapter's MAC.
                if !addressed_to(&frame.bytes, &self.cfg.mac) {
                    self.tally.not_for_us += 1;
                    ctx.give_frame(frame);
                    return;
                }
                if let Some(w) = &mut self.wires {
                    w.received(&frame.bytes, now);
                }
                // Wire port p's adapter, which steers it to one of its queues.
                self.tell_adapter(p, ctx, |d, cx| d.frame_in(frame, cx));
            }
            Msg::Timer(tag) => self.timer(tag, ctx),
        }
    }

    fn finish(&mut self, end: Time) -> Result<(), String> {
        self.ended = end;
        for k in 0..self.procs.cpus.len() {
            self.wake_poller(k, end);
        }
        for c in &mut self.procs.cpus {
            c.account.close_trace();
        }
        for d in self.adapters.devices() {
            for a in d.processors() {
                a.close_trace();
            }
        }
        Ok(())
    }

    fn report(&self, end: Time) -> Report {
        self.figures(end)
    }
    fn text(&self) -> Vec<(&'static str, String)> {
        let mut text = match self.ports.iter().find_map(|p| p.offload()?.ttcp.as_ref()) {
            Some(t) => vec![("ttcp_xxh128", t.app.stream.xxh128_hex())],
            None => self.apps.sessions.as_ref().map(|s| s.text()).unwrap_or_default(),
        };
        let engines =
            (0..self.ports.len()).filter(|&p| self.ports[p].offload().is_some()).filter_map(|p| self.adapters.device_ref(p).stack());
        text.extend(Stack::stall_text(self.apps.sessions.iter().map(|s| s.stack()).chain(engines), self.ended));
        text
    }
}

/// Each processor's run queue: the poller on its processor when the driver
/// polls, the sender on its own (if it sends through a ring: `rings`), the
/// background processes on theirs.
fn run_queues(cfg: &HostConfig, poll_rings: &[Vec<usize>], rings: &[usize]) -> Vec<RunQueue> {
    (0..cfg.cpus as usize)
        .map(|k| RunQueue {
            poller: cfg.driver.polls() && (k == cfg.driver.poll_cpu as usize || !poll_rings[k].is_empty()),
            // A sender through an event ring makes its calls on completions instead.
            sender: cfg.blast.as_ref().is_some_and(|b| b.cpu as usize == k && rings.contains(&b.port)),
            background: cfg.background.as_ref().filter(|b| b.cpu as usize == k).map_or(0, |b| b.processes as usize),
        })
        .collect()
}

/// Whether a frame is for the station `mac`: its own, broadcast or multicast.
fn addressed_to(frame: &[u8], mac: &[u8; 6]) -> bool {
    frame.get(..6).is_some_and(|dst| dst[0] & 1 == 1 || dst == mac)
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
