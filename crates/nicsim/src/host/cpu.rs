//! A host processor's work: the deferred items that wait for it, and the steps
//! it runs with what each changes when it ends. It runs them under the
//! preemptive policy (`processor::preemptive`): an interrupt suspends any step
//! but an interrupt step, which resumes after the handler (a suspended deferred
//! step before other deferred work, a process after it).

pub use crate::processor::Activity;
use crate::time::Time;
use crate::wire::Frame;

/// A step being planned: its activity, its cost and what it changes at its end.
#[derive(Debug)]
pub struct Plan {
    pub activity: Activity,
    pub cycles: u64,
    /// Time the processor stalls beyond its cycles (a register read, a copy).
    pub until: Option<Time>,
    /// Boxed: a plan moves from planner to step to processor, and each move
    /// of the effects themselves copied some 200 bytes.
    pub effects: Box<Effects>,
    pub holds_stack: bool,
    /// Ends a frame's protocol work, which may let another processor's next frame go.
    pub(super) releases_order: bool,
    /// Runs in deferred context (whatever its activity is counted as).
    pub(super) deferred: bool,
}

/// A step planned to follow the one its processor runs (the applications'
/// part of a frame's protocol work), with its turn in the send order.
pub(super) struct Then {
    pub plan: Plan,
    pub turn: Option<u64>,
}

impl Plan {
    pub fn new(activity: Activity, cycles: u64) -> Self {
        Plan { activity, cycles, until: None, effects: Effects::fresh(), holds_stack: false, releases_order: false, deferred: false }
    }
}

/// Deferred work queued on a processor (a DPC, a softirq).
#[derive(Debug)]
pub enum Item {
    /// Protocol work for a frame the handler took from an adapter, with its
    /// place in that adapter's order.
    Frame(usize, u64, Box<Frame>),
    /// Adapter `p`'s handler, queued by its interrupt as a deferred procedure
    /// call behind the deferred work already waiting (an NDIS miniport on NT).
    Handler(usize),
    /// A NAPI poll of an adapter's receive ring, with the budget it has left.
    Poll(usize, u32),
    /// An AF_XDP socket's application takes a frame the XDP program handed it.
    Socket(Box<Frame>),
    /// The applications' part of a protocol step on another processor, handed
    /// to the one they run on (`app_cpu`).
    App(Box<Plan>),
    /// Protocol work for a frame of adapter `p` that an XDP program on another
    /// processor handed to this one (a CPU map): out of its adapter's order.
    Handed(usize, Box<Frame>),
    /// The rest of a send call on dumb adapter `p`: frames handed down found
    /// a descriptor freed while the step ran, and the driver builds them.
    Send(usize),
    /// The sessions' timer fell due (the stack's, or a request's).
    SessionTimer,
    /// The next application in turn makes its next call (one is queued at a time).
    AppCall,
    /// The applications start (their first requests).
    Start,
    /// The application's work with the offload engine of adapter `p`.
    Offload(usize, OffloadStep),
    /// Host work the events of adapter `p` call for (a send, an event).
    EventRing(usize, crate::host::event_driver::DriverWork),
}

/// What the application does with an offload engine (`host::offload`).
#[derive(Debug)]
pub enum OffloadStep {
    Open,
    Send,
    /// A file session on socket `s` asks again after its think time.
    Ask(usize),
    /// Its part of a message the handler took from the adapter.
    Take(crate::device::Message),
}

/// What a step changes when it ends.
#[derive(Debug, Default)]
pub struct Effects {
    /// Frames to send, with the adapter each leaves by.
    pub transmit: Vec<(usize, Frame)>,
    /// Receive buffers to hand back to an adapter, one tail write each.
    pub refill: Vec<(usize, u32)>,
    /// The adapter whose interrupt the driver unmasks.
    pub enable_irq: Option<usize>,
    pub queue: Vec<Item>,
    /// Deferred work that goes ahead of everything queued: the next piece of a
    /// NAPI poll whose frames GRO holds until the poll ends.
    pub first: Option<Item>,
    pub leave_handler: bool,
    /// Messages to an adapter's offload engine.
    pub to_adapter: Vec<(usize, crate::device::Message)>,
    /// An event-ring driver's step for adapter `p` ended: its doorbell and deliveries.
    pub event_ring: Option<usize>,
    /// When each frame whose protocol work the step does arrived at its adapter.
    pub delivered: Vec<Time>,
    /// Deferred work for other processors, each with the one it goes to.
    pub remote: Vec<(usize, Item)>,
}

thread_local! {
    #[allow(clippy::vec_box, reason = "the boxes are what is kept: a step carries its effects boxed")]
    static SPARE_EFFECTS: std::cell::RefCell<Vec<Box<Effects>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Effects {
    /// Empty effects for a new step: a box given back by an ended step, with
    /// its lists' room, where there is one (a host makes and ends a step or
    /// two per frame, and allocating the box and growing its lists each time
    /// was a twentieth of a poll-mode flood).
    pub fn fresh() -> Box<Effects> {
        SPARE_EFFECTS.with_borrow_mut(|s| s.pop()).unwrap_or_default()
    }

    /// Keep `effects` (emptied, with its lists' room) for a later `fresh`.
    pub fn recycle(mut effects: Box<Effects>) {
        effects.transmit.clear();
        effects.refill.clear();
        effects.queue.clear();
        effects.to_adapter.clear();
        effects.delivered.clear();
        effects.remote.clear();
        effects.enable_irq = None;
        effects.first = None;
        effects.leave_handler = false;
        effects.event_ring = None;
        SPARE_EFFECTS.with_borrow_mut(|s| {
            if s.len() < 64 {
                s.push(effects);
            }
        });
    }
}

/// The step a processor is running: what it changes when it ends.
#[derive(Debug)]
pub struct Step {
    pub effects: Box<Effects>,
    /// Holds the stack lock (deferred protocol work on a serialized stack).
    pub holds_stack: bool,
    /// A frame's protocol work: its end may let another processor's next frame go.
    pub releases_order: bool,
    /// Runs in deferred context: suspended, it resumes before other deferred work.
    pub deferred: bool,
    /// Its place in the order the stack made frames to send, if it made some.
    pub send_turn: Option<u64>,
}

/// A host processor: the preemptive policy over the host's steps and items.
pub type Cpu = crate::processor::preemptive::Cpu<Step, Item>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_given_back_come_again_empty_with_their_room() {
        let mut e = Effects::fresh();
        e.queue.extend((0..40).map(Item::Handler));
        e.refill.push((0, 8));
        e.enable_irq = Some(1);
        e.leave_handler = true;
        let room = e.queue.capacity();
        Effects::recycle(e);
        let again = Effects::fresh();
        assert!(again.queue.is_empty() && again.refill.is_empty() && again.transmit.is_empty() && again.to_adapter.is_empty());
        assert_eq!((again.enable_irq, again.leave_handler, again.event_ring.is_none()), (None, false, true));
        assert_eq!(again.queue.capacity(), room, "the list's room is kept");
    }
}
