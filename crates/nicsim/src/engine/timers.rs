//! A part's timers, armed with what falls due and taken back by handle. The
//! engine's timer message carries a `u64`; this keeps the typed payload in a slab
//! and sends the slot (its index, the slot's use count, and the part's `space`, so
//! the parts of one component keep apart). A cancelled timer's event still comes,
//! and `fire` answers `None` for it: events are counted as before, and no part
//! keeps a generation of its own.

use crate::engine::Ctx;
use crate::time::Time;

/// A timer armed by `Timers::arm`, to cancel it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerHandle {
    slot: u32,
    uses: u32,
}

pub struct Timers<T> {
    space: u8,
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

struct Slot<T> {
    /// How often the slot has been armed: an event or a handle of an earlier use is stale.
    uses: u32,
    what: Option<T>,
}

const SLOT_BITS: u32 = 24;
const USE_BITS: u32 = 32;

/// The space of the part that armed a timer, from the tag its event carries.
pub fn space_of(tag: u64) -> u8 {
    (tag >> (SLOT_BITS + USE_BITS)) as u8
}

/// The space of the timers of a component's part `n` (a host's adapter `n`):
/// the component's own timers are space 0.
pub fn part_space(n: usize) -> u8 {
    u8::try_from(n + 1).expect("at most 254 parts with timers of their own")
}

/// The part whose space `space` is (`part_space`), or `None` for the component's own.
pub fn part_of(space: u8) -> Option<usize> {
    (space as usize).checked_sub(1)
}

impl<T> Timers<T> {
    /// Timers whose events carry `space` (`space_of`).
    pub fn new(space: u8) -> Self {
        Timers { space, slots: Vec::new(), free: Vec::new() }
    }

    /// Be handed `what` by `fire` at `at` (at once if that has passed).
    #[inline]
    pub fn arm(&mut self, ctx: &mut Ctx, at: Time, what: T) -> TimerHandle {
        let handle = match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot as usize];
                s.uses = s.uses.wrapping_add(1);
                s.what = Some(what);
                TimerHandle { slot, uses: s.uses }
            }
            None => self.grow(what),
        };
        let tag = ((self.space as u64) << (SLOT_BITS + USE_BITS)) | ((handle.slot as u64) << USE_BITS) | handle.uses as u64;
        ctx.wake_at(at, tag);
        handle
    }

    #[cold]
    fn grow(&mut self, what: T) -> TimerHandle {
        assert!(self.slots.len() < 1 << SLOT_BITS, "more than 16 million timers in flight");
        self.slots.push(Slot { uses: 1, what: Some(what) });
        TimerHandle { slot: self.slots.len() as u32 - 1, uses: 1 }
    }

    /// Take the timer back: its event brings nothing. A timer that has fired,
    /// or was cancelled before, is left alone.
    #[inline]
    pub fn cancel(&mut self, handle: TimerHandle) {
        let s = &mut self.slots[handle.slot as usize];
        if s.uses == handle.uses && s.what.take().is_some() {
            self.free.push(handle.slot);
        }
    }

    /// What falls due with the event of `tag`, unless it was cancelled.
    #[inline]
    pub fn fire(&mut self, tag: u64) -> Option<T> {
        debug_assert_eq!(space_of(tag), self.space, "another part's timer");
        let slot = ((tag >> USE_BITS) & ((1 << SLOT_BITS) - 1)) as u32;
        let uses = tag as u32;
        let s = self.slots.get_mut(slot as usize)?;
        if s.uses != uses {
            return None;
        }
        let what = s.what.take()?;
        self.free.push(slot);
        Some(what)
    }

    /// Timers armed and neither fired nor cancelled.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// One timer a part keeps for the earliest time something falls due (a
/// write-back delay, a stack's next timer, a coalescing timeout): set again only
/// for an earlier time, or once the one in flight is behind `from`, the later
/// one taken back.
#[derive(Debug, Default)]
pub struct Earliest(Option<(Time, TimerHandle)>);

impl Earliest {
    /// Something falls due at `due`, as seen from `from` (now, or the time
    /// the work that found it ran from): the timer wakes at `due`, or at `from`
    /// if that is later.
    pub fn set<T>(&mut self, timers: &mut Timers<T>, ctx: &mut Ctx, due: Time, from: Time, what: T) {
        if self.0.is_some_and(|(a, _)| a <= due && a >= from) {
            return;
        }
        if let Some((_, later)) = self.0.take() {
            timers.cancel(later);
        }
        self.0 = Some((due, timers.arm(ctx, due.max(from), what)));
    }

    /// Its timer fell due.
    pub fn fired(&mut self) {
        self.0 = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{component_rng, Msg};
    use crate::time::Duration;

    /// Run `arm` with a step's context; returns the timers it sent, each with
    /// when it falls due and its tag.
    fn armed(arm: impl FnOnce(&mut Ctx)) -> Vec<(Time, u64)> {
        let (mut rng, mut outbox) = (component_rng(1, "t"), Vec::new());
        arm(&mut Ctx::new(Time::ZERO, &mut outbox, &mut rng));
        outbox
            .iter()
            .map(|o| match o.msg {
                Msg::Timer(t) => (o.at, t),
                _ => panic!("not a timer"),
            })
            .collect()
    }

    #[test]
    fn a_timer_brings_what_it_was_armed_with_once() {
        let mut timers = Timers::new(part_space(2));
        let mut a = None;
        let sent = armed(|ctx| {
            a = Some(timers.arm(ctx, Time::ZERO + Duration::from_ns(5), "a"));
            timers.arm(ctx, Time::ZERO + Duration::from_ns(2), "b");
        });
        assert_eq!(sent.len(), 2);
        assert!(sent.iter().all(|&(_, t)| part_of(space_of(t)) == Some(2)), "the part's space");
        assert_eq!(part_of(0), None, "space 0 is the component's own");
        assert_eq!(timers.fire(sent[1].1), Some("b"));
        assert_eq!(timers.fire(sent[1].1), None, "a timer fires once");
        assert_eq!(timers.in_flight(), 1);
        timers.cancel(a.expect("armed"));
        assert_eq!(timers.fire(sent[0].1), None, "a cancelled timer brings nothing");
        assert_eq!(timers.in_flight(), 0);
    }

    #[test]
    fn a_stale_handle_or_event_does_not_touch_the_slot_reused() {
        let mut timers = Timers::new(0);
        let mut handles = None;
        let sent = armed(|ctx| {
            let old = timers.arm(ctx, Time::ZERO, 1);
            timers.cancel(old);
            let new = timers.arm(ctx, Time::ZERO, 2);
            timers.cancel(old);
            handles = Some(new);
        });
        assert_eq!(timers.fire(sent[0].1), None, "the first use's event is stale");
        assert_eq!(timers.fire(sent[1].1), Some(2), "a stale cancel left the reused slot armed");
        timers.cancel(handles.expect("armed"));
        assert_eq!(timers.in_flight(), 0);
    }

    #[test]
    fn the_earliest_is_set_again_only_for_an_earlier_time() {
        let mut timers = Timers::new(0);
        let mut earliest = Earliest::default();
        let us = |n| Time::ZERO + Duration::from_us(n);
        let sent = armed(|ctx| {
            earliest.set(&mut timers, ctx, us(10), us(0), "a");
            earliest.set(&mut timers, ctx, us(20), us(0), "later: kept as it is");
            earliest.set(&mut timers, ctx, us(5), us(0), "b");
        });
        assert_eq!(sent.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [us(10), us(5)]);
        assert_eq!(timers.fire(sent[0].1), None, "the later one was taken back");
        assert_eq!(timers.fire(sent[1].1), Some("b"));
        earliest.fired();
        let sent = armed(|ctx| earliest.set(&mut timers, ctx, us(3), us(8), "c"));
        assert_eq!(sent[0].0, us(8), "a time already behind wakes at once");
        let again = armed(|ctx| earliest.set(&mut timers, ctx, us(9), us(12), "d"));
        assert_eq!(again.len(), 1, "the one in flight is behind: set again");
        assert_eq!(timers.fire(sent[0].1), None);
    }
}
