//! What a component is and the context it acts through. A component never holds
//! another: it sends messages out of its numbered ports, and the simulator delivers
//! them to whatever was wired to that port at assembly.

use std::os::fd::BorrowedFd;

use crate::engine::rng::SimRng;
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::spare::{self, Magazine};
use crate::wire::{Frame, FrameMeta};

/// A component's port number. Ports are wired in pairs at assembly.
pub type PortId = u16;

/// The one port of a station on one wire: a source, a sink, a tap, an ideal host.
pub const WIRE: PortId = 0;

/// The typed messages components exchange.
#[derive(Debug)]
pub enum Msg {
    /// A whole frame, delivered when its last bit has arrived. Boxed so that an
    /// event stays small: the event heap moves events, not frame bytes.
    Frame(Box<Frame>),
    /// A wake-up the component scheduled for itself, with its own tag.
    Timer(u64),
}

impl Msg {
    pub fn frame(frame: Frame) -> Msg {
        Msg::Frame(Box::new(frame))
    }
}

/// A message on its way out of a component, before the simulator routes it.
#[derive(Debug)]
pub struct Outgoing {
    pub at: Time,
    /// `None` for a wake-up addressed to the sender itself.
    pub port: Option<PortId>,
    pub msg: Msg,
}

/// A component's view of the simulation while it handles one message.
pub struct Ctx<'a> {
    now: Time,
    /// When the run ends (`Time::MAX` when it runs until nothing is left).
    end: Time,
    outbox: &'a mut Vec<Outgoing>,
    rng: &'a mut SimRng,
    /// The run's spare frames; without them, the thread's are used.
    spares: Option<&'a mut Magazine>,
}

impl<'a> Ctx<'a> {
    pub fn new(now: Time, outbox: &'a mut Vec<Outgoing>, rng: &'a mut SimRng) -> Self {
        Ctx { now, end: Time::MAX, outbox, rng, spares: None }
    }
    /// The same, in a run that ends at `end`.
    pub fn ending_at(self, end: Time) -> Self {
        Ctx { end, ..self }
    }
    /// The same, taking and giving spare frames through `spares`.
    pub fn with_spares(self, spares: &'a mut Magazine) -> Self {
        Ctx { spares: Some(spares), ..self }
    }
    /// A frame with `meta` whose bytes `fill` writes (with the component's
    /// random numbers at hand), in a spare buffer where there is one
    /// (`wire::spare`).
    #[inline(always)]
    pub fn take_frame(&mut self, meta: FrameMeta, fill: impl FnOnce(&mut Vec<u8>, &mut SimRng)) -> Box<Frame> {
        let rng = &mut *self.rng;
        match &mut self.spares {
            Some(m) => m.take(meta, |b| fill(b, rng)),
            None => spare::take(meta, |b| fill(b, rng)),
        }
    }
    /// Keep a frame taken whole for a later `take_frame`.
    #[inline]
    pub fn give_frame(&mut self, frame: Box<Frame>) {
        match &mut self.spares {
            Some(m) => m.give(frame),
            None => spare::give(frame),
        }
    }
    pub fn now(&self) -> Time {
        self.now
    }
    /// When the run ends (`Time::MAX` when it runs until nothing is left).
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn rng(&mut self) -> &mut SimRng {
        self.rng
    }
    /// Send `msg` out of `port`, to arrive after `delay`.
    pub fn send_after(&mut self, port: PortId, delay: Duration, msg: Msg) {
        self.outbox.push(Outgoing { at: self.now + delay, port: Some(port), msg });
    }
    /// Send `msg` out of `port`, to arrive at `at` (not before now).
    pub fn send_at(&mut self, port: PortId, at: Time, msg: Msg) {
        debug_assert!(at >= self.now, "message scheduled in the past");
        self.outbox.push(Outgoing { at: at.max(self.now), port: Some(port), msg });
    }
    /// Be handed `Msg::Timer(tag)` at `at` (at once if that has passed).
    pub fn wake_at(&mut self, at: Time, tag: u64) {
        self.outbox.push(Outgoing { at: at.max(self.now), port: None, msg: Msg::Timer(tag) });
    }
    /// Be handed `Msg::Timer(tag)` after `delay`.
    pub fn wake_after(&mut self, delay: Duration, tag: u64) {
        self.outbox.push(Outgoing { at: self.now + delay, port: None, msg: Msg::Timer(tag) });
    }
    /// Messages sent so far in this step, oldest first; wrappers inspect these.
    pub fn sent(&self) -> &[Outgoing] {
        self.outbox
    }
    /// Take back the messages sent since `mark` (a wrapper that changes them
    /// puts back what it keeps with `resend`).
    pub fn take_sent(&mut self, mark: usize) -> Vec<Outgoing> {
        self.outbox.split_off(mark)
    }
    pub fn resend(&mut self, out: Outgoing) {
        debug_assert!(out.at >= self.now, "message scheduled in the past");
        self.outbox.push(out);
    }
}

/// When a component may take a frame sent to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inline {
    /// When it is due, as an event.
    No,
    /// When it is sent: its handling of a frame depends on nothing but the
    /// frames before it from the same sender, and it sends only ahead of the
    /// frame's time (a link).
    Ahead,
    /// When it is sent, if it is due by the run's end: it sends nothing in
    /// answer and its state is read only when the run is over (a sink).
    Last,
}

/// A simulated part: a state machine driven only by the messages handed to it.
pub trait Component {
    /// A short word for the kind of part ("link", "switch", ...), used in results.
    fn kind(&self) -> &'static str;
    /// Called once at time zero, before any message.
    fn start(&mut self, _ctx: &mut Ctx) {}
    /// Handle one message that arrived on `port` (or a timer, on `SELF_PORT`).
    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx);
    /// Whether this component may take a frame when it is sent rather than
    /// when it is due (it takes it with the time it is due either way).
    fn inline(&self) -> Inline {
        Inline::No
    }
    /// Called once when the run ends, with the final time; may fail (e.g. on I/O).
    fn finish(&mut self, _end: Time) -> Result<(), String> {
        Ok(())
    }
    /// Counters and measurements at the end of the run.
    fn report(&self, end: Time) -> Report;
    /// Facts that are words, not numbers (a device name, a stream's digest).
    fn text(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// A file descriptor that brings input from outside the simulation (a TAP
    /// device). A run with one is paced to the wall clock and waits on it.
    fn input_fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }
    /// Take the outside input that is ready now (called when `input_fd` is readable).
    fn take_input(&mut self, _ctx: &mut Ctx) {}
}
