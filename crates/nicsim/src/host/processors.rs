//! The host's processors as its scheduler sees them: each one's steps and
//! deferred work, the deferred work any of them may take, the stack lock, the
//! step that must follow the one each runs, and each one's run queue. What a
//! step does is the machine's (`steps.rs`); which processor may take work
//! next is decided here.

use std::collections::VecDeque;

use crate::host::config::Deferred;
use crate::host::cpu::Then;
use crate::host::cpu::{Cpu, Item};
use crate::time::{Clock, Time};

/// A process of a processor's run queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Process {
    Poller,
    Sender,
    Background,
}

/// A processor's run queue: which processes it holds. It is fixed by the
/// configuration (the poller's processor, the sender's, the background's).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RunQueue {
    pub poller: bool,
    pub sender: bool,
    pub background: usize,
}

impl RunQueue {
    pub fn len(self) -> usize {
        usize::from(self.poller) + usize::from(self.sender) + self.background
    }

    /// The process in place `i` (below `len`).
    pub fn at(self, i: usize) -> Process {
        match (self.poller, self.sender, i) {
            (true, _, 0) => Process::Poller,
            (true, true, 1) | (false, true, 0) => Process::Sender,
            _ => Process::Background,
        }
    }

    /// Round robin from place `next` (a processor's `next_thread`): each place
    /// once, in the order the processes get their turn.
    pub fn turns(self, next: usize) -> impl Iterator<Item = (usize, Process)> {
        let len = self.len();
        (0..len).map(move |j| (next + j) % len).map(move |i| (i, self.at(i)))
    }
}

pub(super) struct Processors {
    pub cpus: Vec<Cpu>,
    /// Deferred work any processor may take (`driver.deferred = "any"`).
    pub shared: VecDeque<Item>,
    /// A step holds the stack lock (a serialized stack's protocol work).
    pub stack_held: bool,
    /// Per processor, the step that must follow the one it runs.
    pub then: Vec<Option<Then>>,
    /// Per processor, when its poll loop, finding nothing booked, went to sleep.
    pub poll_asleep_since: Vec<Option<Time>>,
    /// Per processor: woken for work handed to it, and not awake yet; and
    /// the cycles of the wake-up its next step pays.
    pub waking: Vec<bool>,
    pub owed: Vec<u64>,
    /// Idle processors woken so.
    pub wakeups: u64,
    run_queues: Vec<RunQueue>,
    deferred: Deferred,
}

impl Processors {
    /// Processors at `clock`, one for each run queue, with received frames'
    /// deferred work going where `deferred` says.
    pub fn new(clock: Clock, run_queues: Vec<RunQueue>, deferred: Deferred) -> Self {
        let n = run_queues.len();
        Processors {
            cpus: (0..n).map(|_| Cpu::new(clock, crate::processor::HOST)).collect(),
            shared: VecDeque::new(),
            stack_held: false,
            then: (0..n).map(|_| None).collect(),
            poll_asleep_since: vec![None; n],
            waking: vec![false; n],
            owed: vec![0; n],
            wakeups: 0,
            run_queues,
            deferred,
        }
    }

    pub fn run_queue(&self, k: usize) -> RunQueue {
        self.run_queues[k]
    }

    /// Processor `k` has no deferred work, none shared, and no process to run.
    #[inline]
    pub fn nothing_queued(&self, k: usize) -> bool {
        self.cpus[k].queue.is_empty() && self.then[k].is_none() && self.shared.is_empty() && self.run_queues[k].len() == 0
    }

    /// Whether a processor other than `k` may start work now that `k` let go of
    /// the stack lock, the order of frames or some shared work: only deferred
    /// work (its own or shared) or a process can be waiting for those. An idle
    /// processor is never inside a handler, with an interrupt pending or with a
    /// step suspended: it runs those as soon as it is free.
    pub fn others_may_take(&self, k: usize) -> bool {
        let may = (0..self.cpus.len()).any(|j| j != k && !self.nothing_queued(j));
        debug_assert!(
            may || self.cpus.iter().enumerate().all(|(j, c)| j == k || !c.idle() || c.at_rest()),
            "an idle processor with work it has not started"
        );
        may
    }

    /// The host-wide deferred queue, or processor `k`'s own.
    pub fn deferred_queue(&mut self, k: usize, shared: bool) -> &mut VecDeque<Item> {
        if shared {
            &mut self.shared
        } else {
            &mut self.cpus[k].queue
        }
    }

    /// Queue the deferred work a step on processor `k` made. Received frames
    /// go to the host-wide queue when any processor may take them, once `k`
    /// has left the handler run that took them; returns whether some did.
    pub fn queue_deferred(&mut self, k: usize, queue: &mut Vec<Item>) -> bool {
        let cpu = &mut self.cpus[k];
        if self.deferred == Deferred::Interrupted {
            if queue.is_empty() {
                // Most steps queue nothing: moving no items is still three calls.
                return false;
            }
            // In bulk: moved item by item, each passes through the stack and
            // stalls on its own stores. The emptied list keeps its room.
            let mut moved = VecDeque::from(std::mem::take(queue));
            cpu.queue.append(&mut moved);
            *queue = Vec::from(moved);
            return false;
        }
        for item in queue.drain(..) {
            match item {
                Item::Frame(..) => cpu.held.push_back(item),
                other => cpu.queue.push_back(other),
            }
        }
        if cpu.in_handler.is_some() || cpu.held.is_empty() {
            return false;
        }
        self.shared.append(&mut cpu.held);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Frame, FrameMeta};

    fn frame(order: u64) -> Item {
        Item::Frame(0, order, Box::new(Frame { bytes: vec![0; 60], meta: FrameMeta::default() }))
    }

    fn two(deferred: Deferred) -> Processors {
        Processors::new(Clock::from_hz(1_000_000_000), vec![RunQueue::default(); 2], deferred)
    }

    fn kinds(q: &VecDeque<Item>) -> Vec<&'static str> {
        q.iter().map(|i| if matches!(i, Item::Frame(..)) { "frame" } else { "other" }).collect()
    }

    #[test]
    fn the_run_queue_holds_the_poller_then_the_sender_then_the_background() {
        let q = RunQueue { poller: true, sender: true, background: 2 };
        assert_eq!(q.len(), 4);
        let order: Vec<Process> = q.turns(0).map(|(_, p)| p).collect();
        assert_eq!(order, [Process::Poller, Process::Sender, Process::Background, Process::Background]);
        let q = RunQueue { poller: false, sender: true, background: 1 };
        assert_eq!((q.at(0), q.at(1)), (Process::Sender, Process::Background));
        assert_eq!(RunQueue { poller: false, sender: false, background: 0 }.turns(3).count(), 0, "an empty queue has no turns");
    }

    #[test]
    fn turns_go_round_from_the_place_after_the_last_one_run() {
        let q = RunQueue { poller: true, sender: false, background: 2 };
        let places: Vec<usize> = q.turns(2).map(|(i, _)| i).collect();
        assert_eq!(places, [2, 0, 1], "each place once, starting at the next");
        let places: Vec<usize> = q.turns(7).map(|(i, _)| i).collect();
        assert_eq!(places, [1, 2, 0], "a count past the end wraps");
    }

    #[test]
    fn deferred_work_stays_on_the_interrupted_processor_in_its_order() {
        let mut p = two(Deferred::Interrupted);
        let mut made = vec![frame(0), Item::SessionTimer, frame(1)];
        assert!(!p.queue_deferred(1, &mut made), "nothing for the others");
        assert!(made.is_empty());
        assert_eq!(kinds(&p.cpus[1].queue), ["frame", "other", "frame"]);
        assert!(p.shared.is_empty() && p.cpus[0].queue.is_empty());
        assert!(p.others_may_take(0), "processor 1 has work queued");
        assert!(!p.others_may_take(1), "processor 0 has none");
    }

    #[test]
    fn frames_go_to_every_processor_once_the_handler_run_that_took_them_ends() {
        let mut p = two(Deferred::Any);
        p.cpus[0].in_handler = Some(0);
        assert!(!p.queue_deferred(0, &mut vec![frame(0), Item::AppCall]), "held while the handler runs");
        assert_eq!((p.cpus[0].held.len(), kinds(&p.cpus[0].queue)), (1, vec!["other"]), "other work stays on its processor");
        p.cpus[0].in_handler = None;
        assert!(p.queue_deferred(0, &mut vec![frame(1)]), "the run ended: both frames are shared");
        assert_eq!(kinds(&p.shared), ["frame", "frame"]);
        assert!(p.cpus[0].held.is_empty());
        assert!(!p.nothing_queued(1), "processor 1 may take the shared frames");
        assert!(p.others_may_take(0));
    }

    #[test]
    fn a_processor_with_a_process_always_has_something_queued() {
        let p = Processors::new(
            Clock::from_hz(1_000_000_000),
            vec![RunQueue::default(), RunQueue { poller: true, ..RunQueue::default() }],
            Deferred::Interrupted,
        );
        assert!(p.nothing_queued(0));
        assert!(!p.nothing_queued(1), "the poller is always there to run");
        assert_eq!(p.run_queue(1).at(0), Process::Poller);
    }
}
