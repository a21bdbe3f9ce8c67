//! The simulator: owns the components, the wiring between their ports and the
//! event queue, and runs events in (time, sequence) order.

use std::fmt;

use crate::engine::component::{Component, Ctx, Inline, Msg, Outgoing, PortId};
use crate::engine::queue::EventQueue;
use crate::engine::rng::{component_rng, SimRng};
use crate::observe::Report;
use crate::time::Time;
use crate::wire::spare::Magazine;

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

/// What routing a step's messages gives: the error boxed, so that the result
/// every event returns is one word, in a register, not a `SimError` in memory.
type Routed = Result<(), Box<SimError>>;

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

/// Events between two looks of a run's watcher: a few milliseconds of work,
/// so a look (a clock read) costs nothing measurable.
pub const WATCH_EVERY: u64 = 1 << 14;

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
    /// Spare frames its components take and give (`wire::spare`).
    spares: Magazine,
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
            spares: Magazine::default(),
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

    /// The simulated time of the event run last.
    pub fn now(&self) -> Time {
        self.now
    }

    pub fn name(&self, id: ComponentId) -> &str {
        &self.slots[id].name
    }

    /// Run from time zero until no event is left or the next one is after `until`.
    pub fn run(&mut self, until: Option<Time>) -> Result<Stats, SimError> {
        Ok(self.run_watched(until, &mut |_, _| false)?.expect("never stopped"))
    }

    /// As `run`, with `watch` told the simulated time and the events so far
    /// every `WATCH_EVERY` events; if it answers true the run stops there,
    /// unfinished (`None`). Watching changes nothing else.
    pub fn run_watched(&mut self, until: Option<Time>, watch: &mut dyn FnMut(Time, u64) -> bool) -> Result<Option<Stats>, SimError> {
        let limit = until.unwrap_or(Time::MAX);
        self.horizon = Some(limit);
        self.start()?;
        let mut look = self.events + WATCH_EVERY;
        while self.queue.peek_time().is_some_and(|t| t <= limit) {
            self.next_event()?;
            if self.events >= look {
                look = self.events + WATCH_EVERY;
                if watch(self.now, self.events) {
                    return Ok(None);
                }
            }
        }
        // Without a limit the run lasts until its last frame, taken inline or not.
        self.finish(until.unwrap_or(self.now.max(self.latest_inline))).map(Some)
    }

    /// Every component's start call, at time zero.
    pub(super) fn start(&mut self) -> Result<(), SimError> {
        for id in 0..self.slots.len() {
            self.step(id, Step::Start).map_err(|e| *e)?;
        }
        Ok(())
    }

    /// Run the earliest event (there must be one).
    pub(super) fn next_event(&mut self) -> Result<(), SimError> {
        let ev = self.queue.pop().expect("an event is waiting");
        self.now = ev.time();
        self.events += 1;
        self.step(ev.item.component as usize, Step::Handle(ev.item.port, ev.item.msg)).map_err(|e| *e)
    }

    /// Let component `id` take its outside input, at `at` (not before now).
    pub(super) fn take_input(&mut self, id: ComponentId, at: Time) -> Result<(), SimError> {
        self.now = self.now.max(at);
        self.step(id, Step::Input).map_err(|e| *e)
    }

    /// End the run at `end`: every component's finish call.
    /// Every component's finish call at `end`: the run's totals (a run stopped
    /// early still has them).
    pub fn finish(&mut self, end: Time) -> Result<Stats, SimError> {
        self.now = end;
        for slot in &mut self.slots {
            slot.part.finish(end).map_err(|message| SimError { component: slot.name.clone(), time: end, message })?;
        }
        Ok(Stats { end, events: self.events })
    }

    /// Hand one message (or the start call) to a component, then route what it sent.
    fn step(&mut self, id: ComponentId, input: Step) -> Routed {
        // Only an event may run on into the component's own next timer: at
        // start, every component must start first.
        let chain = matches!(input, Step::Handle(..));
        let mut input = input;
        loop {
            let slot = &mut self.slots[id];
            let end = self.horizon.unwrap_or(Time::MAX);
            let mut ctx = Ctx::new(self.now, &mut self.outbox, &mut slot.rng).ending_at(end).with_spares(&mut self.spares);
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
    fn route(&mut self, id: ComponentId, sent: &mut Vec<Outgoing>) -> Routed {
        // Taken from the end, in the order sent: a drain's drop is a call of
        // its own, on every event.
        sent.reverse();
        while let Some(out) = sent.pop() {
            let peer = self.target(id, &out).inspect_err(|_| sent.clear())?;
            match takes_now(peer.inline, &out, self.horizon, self.now) {
                Inline::No => self.queue.push_in(peer.lane, out.at, Delivery::to(peer.end, out.msg)),
                Inline::Last => {
                    let at = out.at;
                    if Self::absorb(&mut self.slots, (&mut self.last_box, &mut self.spares), &mut self.latest_inline, peer.end, out) {
                        sent.clear();
                        return Err(Box::new(Self::answered_last(&self.slots, peer.end, at)));
                    }
                }
                Inline::Ahead => self.pass_on(peer.end, out).inspect_err(|_| sent.clear())?,
            }
        }
        Ok(())
    }

    /// Hand a frame to a component that takes frames ahead (a link), at its
    /// send time, and deliver what it sends: to a sink at once, else queued.
    fn pass_on(&mut self, to: Endpoint, out: Outgoing) -> Routed {
        let Simulator { slots, queue, inline_box, last_box, latest_inline, horizon, now, spares, .. } = self;
        let slot = &mut slots[to.component];
        slot.part.handle(to.port, out.msg, &mut Ctx::new(out.at, inline_box, &mut slot.rng).with_spares(spares));
        let mut result = Ok(());
        inline_box.reverse();
        while let Some(o) = inline_box.pop() {
            let peer = match Self::target_in(slots, to.component, &o) {
                Ok(p) => p,
                Err(port) => {
                    result = Err(Box::new(unconnected(&slots[to.component], *now, port)));
                    inline_box.clear();
                    break;
                }
            };
            if takes_now(peer.inline, &o, *horizon, *now) == Inline::Last {
                let at = o.at;
                if Self::absorb(slots, (last_box, spares), latest_inline, peer.end, o) {
                    result = Err(Box::new(Self::answered_last(slots, peer.end, at)));
                    inline_box.clear();
                    break;
                }
            } else {
                queue.push_in(peer.lane, o.at, Delivery::to(peer.end, o.msg));
            }
        }
        result
    }

    /// Hand a frame to a component that takes frames last (a sink), at its
    /// send time. Returns whether it broke the rule by sending something; the
    /// error is made apart (`answered_last`), so that the path every frame takes
    /// returns a flag in a register rather than an error through memory.
    fn absorb(
        slots: &mut [Slot],
        (last_box, spares): (&mut Vec<Outgoing>, &mut Magazine),
        latest: &mut Time,
        to: Endpoint,
        out: Outgoing,
    ) -> bool {
        *latest = (*latest).max(out.at);
        let slot = &mut slots[to.component];
        slot.part.handle(to.port, out.msg, &mut Ctx::new(out.at, last_box, &mut slot.rng).with_spares(spares));
        if last_box.is_empty() {
            return false;
        }
        last_box.clear();
        true
    }

    /// The error of a component that sent a message in answer to a frame it took last.
    #[cold]
    fn answered_last(slots: &[Slot], to: Endpoint, at: Time) -> SimError {
        SimError {
            component: slots[to.component].name.clone(),
            time: at,
            message: "sent a message in answer to a frame it took last".into(),
        }
    }

    /// Where a message `id` sent goes: its own timer port, or the far end of the wire.
    #[inline]
    fn target(&self, id: ComponentId, out: &Outgoing) -> Result<Peer, Box<SimError>> {
        Self::target_in(&self.slots, id, out).map_err(|port| Box::new(self.unconnected(id, port)))
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
#[path = "simulator_tests.rs"]
mod tests;
