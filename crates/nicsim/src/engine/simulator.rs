//! The simulator: owns the components, the wiring between their ports and the
//! event queue, and runs events in (time, sequence) order.

use std::fmt;

use crate::engine::component::{Component, Ctx, Inline, Msg, Outgoing, PortId};
use crate::engine::queue::EventQueue;
use crate::engine::rng::{component_rng, SimRng};
use crate::observe::Report;
use crate::time::Time;

pub type ComponentId = usize;

/// The port on which a component receives its own timers.
pub const SELF_PORT: PortId = PortId::MAX;

/// One end of a wire between two components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub component: ComponentId,
    pub port: PortId,
}

/// A failure during a run, naming the component and the simulated time.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError {
    pub component: String,
    pub time: Time,
    pub message: String,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}: {}", self.component, self.time, self.message)
    }
}
impl std::error::Error for SimError {}

/// What a run did, independent of how long it took on the wall clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub end: Time,
    pub events: u64,
}

#[derive(Debug)]
pub(super) struct Delivery {
    component: u32,
    port: PortId,
    msg: Msg,
}

/// The far end of a wire, as a sender's port sees it.
#[derive(Clone, Copy, Debug)]
struct Peer {
    end: Endpoint,
    /// The event-queue lane of what arrives there (`EventQueue::push_in`).
    lane: u32,
    /// When the far end takes frames (`Component::inline`).
    inline: Inline,
}

impl Delivery {
    fn to(end: Endpoint, msg: Msg) -> Self {
        Delivery { component: end.component as u32, port: end.port, msg }
    }
}

/// How a component whose mode is `inline` takes `out`: now (inline) or when
/// it is due. A sink takes a frame now only if it is due by the run's end.
#[inline]
fn takes_now(inline: Inline, out: &Outgoing, horizon: Option<Time>, now: Time) -> Inline {
    let how = match inline {
        Inline::Last if horizon.is_none_or(|h| out.at > h) => Inline::No,
        how => how,
    };
    if matches!(out.msg, Msg::Frame(_)) && out.at >= now {
        how
    } else {
        Inline::No
    }
}

/// The error of a message `slot`'s component sent on a port that nothing was
/// wired to (kept out of the path every message takes).
#[cold]
#[inline(never)]
fn unconnected(slot: &Slot, now: Time, port: PortId) -> SimError {
    SimError { component: slot.name.clone(), time: now, message: format!("sent on port {port}, which is not connected") }
}

/// Why a component is stepped.
enum Step {
    Start,
    Handle(PortId, Msg),
    Input,
}

pub(super) struct Slot {
    name: String,
    pub(super) part: Box<dyn Component>,
    rng: SimRng,
    /// Per port, the far end.
    peers: Vec<Option<Peer>>,
    /// The lane of its own timers.
    timer_lane: u32,
    /// When it takes frames (`Component::inline`).
    inline: Inline,
}

pub struct Simulator {
    seed: u64,
    pub(super) slots: Vec<Slot>,
    pub(super) queue: EventQueue<Delivery>,
    outbox: Vec<Outgoing>,
    inline_box: Vec<Outgoing>,
    /// What a component sent in answer to a frame it took last (nothing).
    last_box: Vec<Outgoing>,
    /// The run's end, when it is known: sinks take frames due by then inline.
    horizon: Option<Time>,
    /// The latest time a sink took a frame inline.
    latest_inline: Time,
    pub(super) now: Time,
    pub(super) events: u64,
}

impl Simulator {
    pub fn new(seed: u64) -> Self {
        Simulator {
            seed,
            slots: Vec::new(),
            queue: EventQueue::default(),
            outbox: Vec::new(),
            inline_box: Vec::new(),
            last_box: Vec::new(),
            horizon: None,
            latest_inline: Time::ZERO,
            now: Time::ZERO,
            events: 0,
        }
    }

    pub fn add(&mut self, name: &str, part: Box<dyn Component>) -> ComponentId {
        let rng = component_rng(self.seed, name);
        let inline = part.inline();
        let timer_lane = self.queue.add_lane();
        self.slots.push(Slot { name: name.to_string(), part, rng, peers: Vec::new(), timer_lane, inline });
        self.slots.len() - 1
    }

    /// Wire `a` and `b` to each other. Each port takes one wire.
    pub fn connect(&mut self, a: Endpoint, b: Endpoint) -> Result<(), String> {
        for (end, far) in [(a, b), (b, a)] {
            // What arrives at `far` waits in a lane of its own.
            let lane = self.queue.add_lane();
            let inline = self.slots.get(far.component).ok_or("no such component")?.inline;
            let slot = self.slots.get_mut(end.component).ok_or("no such component")?;
            let index = end.port as usize;
            if slot.peers.len() <= index {
                slot.peers.resize(index + 1, None);
            }
            if slot.peers[index].is_some() {
                return Err(format!("{} port {} is already connected", slot.name, end.port));
            }
            slot.peers[index] = Some(Peer { end: far, lane, inline });
        }
        Ok(())
    }

    pub fn name(&self, id: ComponentId) -> &str {
        &self.slots[id].name
    }

    /// Run from time zero until no event is left or the next one is after `until`.
    pub fn run(&mut self, until: Option<Time>) -> Result<Stats, SimError> {
        let limit = until.unwrap_or(Time::MAX);
        self.horizon = Some(limit);
        self.start()?;
        while self.queue.peek_time().is_some_and(|t| t <= limit) {
            self.next_event()?;
        }
        // Without a limit the run lasts until its last frame, taken inline or not.
        self.finish(until.unwrap_or(self.now.max(self.latest_inline)))
    }

    /// Every component's start call, at time zero.
    pub(super) fn start(&mut self) -> Result<(), SimError> {
        for id in 0..self.slots.len() {
            self.step(id, Step::Start)?;
        }
        Ok(())
    }

    /// Run the earliest event (there must be one).
    pub(super) fn next_event(&mut self) -> Result<(), SimError> {
        let ev = self.queue.pop().expect("an event is waiting");
        self.now = ev.time();
        self.events += 1;
        self.step(ev.item.component as usize, Step::Handle(ev.item.port, ev.item.msg))
    }

    /// Let component `id` take its outside input, at `at` (not before now).
    pub(super) fn take_input(&mut self, id: ComponentId, at: Time) -> Result<(), SimError> {
        self.now = self.now.max(at);
        self.step(id, Step::Input)
    }

    /// End the run at `end`: every component's finish call.
    pub(super) fn finish(&mut self, end: Time) -> Result<Stats, SimError> {
        self.now = end;
        for slot in &mut self.slots {
            slot.part.finish(end).map_err(|message| SimError { component: slot.name.clone(), time: end, message })?;
        }
        Ok(Stats { end, events: self.events })
    }

    /// Hand one message (or the start call) to a component, then route what it sent.
    fn step(&mut self, id: ComponentId, input: Step) -> Result<(), SimError> {
        // Only an event may run on into the component's own next timer: at
        // start, every component must start first.
        let chain = matches!(input, Step::Handle(..));
        let mut input = input;
        loop {
            let slot = &mut self.slots[id];
            let mut ctx = Ctx::new(self.now, &mut self.outbox, &mut slot.rng);
            match input {
                Step::Start => slot.part.start(&mut ctx),
                Step::Handle(port, msg) => slot.part.handle(port, msg, &mut ctx),
                Step::Input => slot.part.take_input(&mut ctx),
            }
            if self.outbox.is_empty() {
                return Ok(());
            }
            // The last thing sent, a timer of its own, may be the run's next event.
            let limit = self.horizon.filter(|_| chain);
            let own = self.outbox.last().is_some_and(|o| o.port.is_none() && limit.is_some_and(|l| o.at <= l));
            let own = if own { self.outbox.pop() } else { None };
            let mut sent = std::mem::take(&mut self.outbox);
            let routed = self.route(id, &mut sent);
            self.outbox = sent;
            routed?;
            let Some(out) = own else { return Ok(()) };
            if self.queue.peek_time().is_some_and(|t| out.at >= t) {
                let lane = self.slots[id].timer_lane;
                self.queue.push_in(lane, out.at, Delivery::to(Endpoint { component: id, port: SELF_PORT }, out.msg));
                return Ok(());
            }
            // Before every queued event, so before all the rest it sent (queued
            // now, or taken inline and queued later): it runs now, the same event
            // in the same order, without the queue.
            self.now = out.at;
            self.events += 1;
            input = Step::Handle(SELF_PORT, out.msg);
        }
    }

    /// Queue what component `id` sent, or hand it over at once: a frame for a
    /// component that takes its frames inline (a link, whose every output lies
    /// ahead; a sink, before the run's end) is handled at its send time: one
    /// event a hop fewer.
    fn route(&mut self, id: ComponentId, sent: &mut Vec<Outgoing>) -> Result<(), SimError> {
        for out in sent.drain(..) {
            let peer = self.target(id, &out)?;
            match takes_now(peer.inline, &out, self.horizon, self.now) {
                Inline::No => self.queue.push_in(peer.lane, out.at, Delivery::to(peer.end, out.msg)),
                Inline::Last => Self::absorb(&mut self.slots, &mut self.last_box, &mut self.latest_inline, peer.end, out)?,
                Inline::Ahead => self.pass_on(peer.end, out)?,
            }
        }
        Ok(())
    }

    /// Hand a frame to a component that takes frames ahead (a link), at its
    /// send time, and deliver what it sends: to a sink at once, else queued.
    fn pass_on(&mut self, to: Endpoint, out: Outgoing) -> Result<(), SimError> {
        let Simulator { slots, queue, inline_box, last_box, latest_inline, horizon, now, .. } = self;
        let slot = &mut slots[to.component];
        slot.part.handle(to.port, out.msg, &mut Ctx::new(out.at, inline_box, &mut slot.rng));
        let mut result = Ok(());
        for o in inline_box.drain(..) {
            let peer = match Self::target_in(slots, to.component, &o) {
                Ok(p) => p,
                Err(port) => {
                    result = Err(unconnected(&slots[to.component], *now, port));
                    break;
                }
            };
            if takes_now(peer.inline, &o, *horizon, *now) == Inline::Last {
                result = Self::absorb(slots, last_box, latest_inline, peer.end, o);
                if result.is_err() {
                    break;
                }
            } else {
                queue.push_in(peer.lane, o.at, Delivery::to(peer.end, o.msg));
            }
        }
        result
    }

    /// Hand a frame to a component that takes frames last (a sink), at its
    /// send time.
    fn absorb(slots: &mut [Slot], last_box: &mut Vec<Outgoing>, latest: &mut Time, to: Endpoint, out: Outgoing) -> Result<(), SimError> {
        *latest = (*latest).max(out.at);
        let slot = &mut slots[to.component];
        slot.part.handle(to.port, out.msg, &mut Ctx::new(out.at, last_box, &mut slot.rng));
        if last_box.is_empty() {
            return Ok(());
        }
        last_box.clear();
        Err(SimError { component: slot.name.clone(), time: out.at, message: "sent a message in answer to a frame it took last".into() })
    }

    /// Where a message `id` sent goes: its own timer port, or the far end of the wire.
    #[inline]
    fn target(&self, id: ComponentId, out: &Outgoing) -> Result<Peer, SimError> {
        Self::target_in(&self.slots, id, out).map_err(|port| self.unconnected(id, port))
    }

    /// `target` over the slots alone; the error is the unconnected port.
    #[inline]
    fn target_in(slots: &[Slot], id: ComponentId, out: &Outgoing) -> Result<Peer, PortId> {
        match out.port {
            None => Ok(Peer { end: Endpoint { component: id, port: SELF_PORT }, lane: slots[id].timer_lane, inline: Inline::No }),
            Some(port) => match slots[id].peers.get(port as usize) {
                Some(Some(peer)) => Ok(*peer),
                _ => Err(port),
            },
        }
    }

    /// The error of a message sent on a port that nothing was wired to (kept out
    /// of the path every message takes).
    fn unconnected(&self, id: ComponentId, port: PortId) -> SimError {
        unconnected(&self.slots[id], self.now, port)
    }

    /// Each component's name, kind and report at the end of the run.
    pub fn reports(&self) -> Vec<(String, &'static str, Report)> {
        self.slots.iter().map(|s| (s.name.clone(), s.part.kind(), s.part.report(self.now))).collect()
    }

    /// Each component's word facts, by name (only those that have some).
    pub fn texts(&self) -> Vec<(String, Vec<(&'static str, String)>)> {
        self.slots.iter().map(|s| (s.name.clone(), s.part.text())).filter(|(_, t)| !t.is_empty()).collect()
    }

    /// Whether some component takes input from outside (so a run must be paced).
    pub fn has_outside_input(&self) -> bool {
        self.slots.iter().any(|s| s.part.input_fd().is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    /// Sends a timer to itself `n` times, 10 ps apart, and records when they came.
    struct Ticker {
        left: u32,
        seen: Vec<Time>,
    }
    impl Component for Ticker {
        fn kind(&self) -> &'static str {
            "ticker"
        }
        fn start(&mut self, ctx: &mut Ctx) {
            ctx.wake_after(Duration(10), 0);
        }
        fn handle(&mut self, _port: PortId, _msg: Msg, ctx: &mut Ctx) {
            self.seen.push(ctx.now());
            self.left -= 1;
            if self.left > 0 {
                ctx.wake_after(Duration(10), 0);
            }
            ctx.send_after(0, Duration(5), Msg::Timer(0));
        }
        fn report(&self, _end: Time) -> Report {
            let mut r = Report::default();
            r.count("ticks", self.seen.len() as u64);
            r
        }
    }

    struct Counter(u64);
    impl Component for Counter {
        fn kind(&self) -> &'static str {
            "counter"
        }
        fn handle(&mut self, _port: PortId, _msg: Msg, _ctx: &mut Ctx) {
            self.0 += 1;
        }
        fn report(&self, _end: Time) -> Report {
            let mut r = Report::default();
            r.count("got", self.0);
            r
        }
    }

    /// A ticker that fires `ticks` times, wired to a counter.
    fn ticker_into_counter(ticks: u32) -> Simulator {
        let mut sim = Simulator::new(1);
        let a = sim.add("a", Box::new(Ticker { left: ticks, seen: vec![] }));
        let b = sim.add("b", Box::new(Counter(0)));
        sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: b, port: 0 }).unwrap();
        sim
    }

    #[test]
    fn runs_timers_and_routes_through_wiring() {
        let mut sim = ticker_into_counter(3);
        let stats = sim.run(None).unwrap();
        assert_eq!(stats.end, Time(35));
        assert_eq!(stats.events, 6);
        assert_eq!(sim.reports()[1].2.get("got"), Some(3.0));
    }

    /// Sends `n` frames of 1514 bytes on port 0 at start; records when frames arrive.
    struct Bursts {
        n: u32,
        seen: std::rc::Rc<std::cell::RefCell<Vec<Time>>>,
        /// How it takes frames; one taking them last answers the first one
        /// when `answer`.
        inline: Inline,
        answer: bool,
    }
    impl Component for Bursts {
        fn kind(&self) -> &'static str {
            "bursts"
        }
        fn start(&mut self, ctx: &mut Ctx) {
            for _ in 0..self.n {
                ctx.send_at(0, Time(1_000), Msg::frame(crate::wire::Frame { bytes: vec![0; 1514], meta: Default::default() }));
            }
        }
        fn inline(&self) -> Inline {
            self.inline
        }
        fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
            if let Msg::Frame(_) = msg {
                self.seen.borrow_mut().push(ctx.now());
                if std::mem::take(&mut self.answer) {
                    ctx.wake_after(Duration(1), 0);
                }
            }
        }
        fn report(&self, _end: Time) -> Report {
            Report::default()
        }
    }

    /// Three frames from a `Bursts` over a gigabit link into `sink`.
    fn bursts_over_a_link(sink: Bursts) -> Simulator {
        use crate::link::{EthernetLink, LinkConfig};
        let mut sim = Simulator::new(1);
        let a = sim.add("a", Box::new(Bursts { n: 3, seen: Default::default(), inline: Inline::No, answer: false }));
        let cfg = LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::from_ns(500), tx_queue: 10 };
        let l = sim.add("l", Box::new(EthernetLink::new(cfg)));
        let b = sim.add("b", Box::new(sink));
        sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: l, port: 0 }).unwrap();
        sim.connect(Endpoint { component: l, port: 1 }, Endpoint { component: b, port: 0 }).unwrap();
        sim
    }

    /// Sent at 1 ns; each holds the wire 12.304 us; the last bit comes 12.208 us
    /// after its start, plus 500 ns.
    const ARRIVALS: [Time; 3] = [Time(12_709_000), Time(25_013_000), Time(37_317_000)];

    #[test]
    fn a_link_takes_frames_inline_at_their_send_time() {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut sim = bursts_over_a_link(Bursts { n: 0, seen: seen.clone(), inline: Inline::No, answer: false });
        let stats = sim.run(None).unwrap();
        assert_eq!(stats.events, 3, "the three arrivals: the link took the frames without events");
        assert_eq!(*seen.borrow(), ARRIVALS);
        assert_eq!(stats.end, ARRIVALS[2]);
    }

    #[test]
    fn a_sink_takes_frames_inline_when_they_are_due_by_the_end() {
        for (limit, taken) in [(None, 3), (Some(ARRIVALS[1]), 2), (Some(Time(ARRIVALS[0].0 - 1)), 0)] {
            let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
            let mut sim = bursts_over_a_link(Bursts { n: 0, seen: seen.clone(), inline: Inline::Last, answer: false });
            let stats = sim.run(limit).unwrap();
            assert_eq!(stats.events, 0, "neither the link nor the sink took an event");
            assert_eq!(*seen.borrow(), ARRIVALS[..taken], "limit {limit:?}");
            // Without a limit the run still lasts until the last arrival.
            assert_eq!(stats.end, limit.unwrap_or(ARRIVALS[2]));
        }
    }

    #[test]
    fn a_component_taking_frames_last_may_not_answer_them() {
        let sink = Bursts { n: 0, seen: Default::default(), inline: Inline::Last, answer: true };
        let err = bursts_over_a_link(sink).run(None).unwrap_err();
        assert_eq!((err.component.as_str(), err.time), ("b", ARRIVALS[0]));
        assert!(err.message.contains("in answer to a frame"), "{}", err.message);
    }

    type Log = std::rc::Rc<std::cell::RefCell<Vec<(&'static str, u64)>>>;

    /// Wakes every `period` ps, `n` times, and logs each wake-up with its name;
    /// with `echo`, each wake-up also sends a message out of port 0 that
    /// arrives half a period later.
    struct Clock {
        name: &'static str,
        period: u64,
        n: u32,
        log: Log,
        echo: bool,
    }

    /// Logs what arrives.
    struct Logger(&'static str, Log);
    impl Component for Logger {
        fn kind(&self) -> &'static str {
            "logger"
        }
        fn handle(&mut self, _port: PortId, _msg: Msg, ctx: &mut Ctx) {
            self.1.borrow_mut().push((self.0, ctx.now().0));
        }
        fn report(&self, _end: Time) -> Report {
            Report::default()
        }
    }
    impl Component for Clock {
        fn kind(&self) -> &'static str {
            "clock"
        }
        fn start(&mut self, ctx: &mut Ctx) {
            ctx.wake_after(Duration(self.period), 0);
        }
        fn handle(&mut self, _port: PortId, _msg: Msg, ctx: &mut Ctx) {
            self.log.borrow_mut().push((self.name, ctx.now().0));
            if self.echo {
                ctx.send_after(0, Duration(self.period / 2), Msg::Timer(0));
            }
            self.n -= 1;
            if self.n > 0 {
                ctx.wake_after(Duration(self.period), 0);
            }
        }
        fn report(&self, _end: Time) -> Report {
            Report::default()
        }
    }

    #[test]
    fn a_timer_due_before_anything_else_runs_at_once_in_queue_order() {
        for (limit, last) in [(None, 90), (Some(Time(75)), 70)] {
            let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
            let mut sim = Simulator::new(1);
            sim.add("a", Box::new(Clock { name: "a", period: 10, n: 9, log: log.clone(), echo: false }));
            sim.add("b", Box::new(Clock { name: "b", period: 15, n: 4, log: log.clone(), echo: false }));
            let stats = sim.run(limit).unwrap();
            // At 30 and 60 b's wake-up was queued first; after 60 a runs alone,
            // each wake-up the next event.
            let mut want = vec![("a", 10), ("b", 15), ("a", 20), ("b", 30), ("a", 30), ("a", 40), ("b", 45), ("a", 50)];
            want.extend([("b", 60), ("a", 60), ("a", 70), ("a", 80), ("a", 90)].into_iter().filter(|w| w.1 <= last));
            assert_eq!(*log.borrow(), want, "limit {limit:?}");
            assert_eq!(stats.events, want.len() as u64, "each wake-up counts as an event");
            assert_eq!(stats.end, limit.unwrap_or(Time(90)));
        }
    }

    #[test]
    fn a_timer_waits_for_what_its_component_sent_before_it() {
        let log = Log::default();
        let mut sim = Simulator::new(1);
        let a = sim.add("a", Box::new(Clock { name: "a", period: 10, n: 3, log: log.clone(), echo: true }));
        let e = sim.add("echo", Box::new(Logger("echo", log.clone())));
        sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: e, port: 0 }).unwrap();
        assert_eq!(sim.run(None).unwrap().events, 6);
        assert_eq!(*log.borrow(), [("a", 10), ("echo", 15), ("a", 20), ("echo", 25), ("a", 30), ("echo", 35)]);
    }

    #[test]
    fn stops_at_the_limit() {
        let mut sim = ticker_into_counter(100);
        let stats = sim.run(Some(Time(50))).unwrap();
        assert_eq!(stats.end, Time(50));
        assert_eq!(sim.reports()[0].2.get("ticks"), Some(5.0));
    }

    #[test]
    fn unwired_port_is_an_error_naming_the_component() {
        let mut sim = Simulator::new(1);
        sim.add("lonely", Box::new(Ticker { left: 1, seen: vec![] }));
        let err = sim.run(None).unwrap_err();
        assert_eq!(err.component, "lonely");
        assert_eq!(err.time, Time(10));
    }

    #[test]
    fn a_link_whose_far_end_is_unwired_is_an_error_naming_the_link() {
        use crate::link::{EthernetLink, LinkConfig};
        let mut sim = Simulator::new(1);
        let a = sim.add("a", Box::new(Bursts { n: 1, seen: Default::default(), inline: Inline::No, answer: false }));
        let cfg = LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::ZERO, tx_queue: 10 };
        let l = sim.add("dangling", Box::new(EthernetLink::new(cfg)));
        sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: l, port: 0 }).unwrap();
        let err = sim.run(None).unwrap_err();
        assert_eq!(err.component, "dangling");
        assert!(err.message.contains("port 1"), "{}", err.message);
    }

    #[test]
    fn a_port_takes_one_wire() {
        let mut sim = Simulator::new(1);
        let a = sim.add("a", Box::new(Counter(0)));
        let b = sim.add("b", Box::new(Counter(0)));
        let c = sim.add("c", Box::new(Counter(0)));
        sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: b, port: 0 }).unwrap();
        assert!(sim.connect(Endpoint { component: c, port: 0 }, Endpoint { component: a, port: 0 }).is_err());
    }
}
