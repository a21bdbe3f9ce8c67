//! A host's timers: what falls due (`Tag`), armed in the host's `Timers` and
//! taken back by handle.

use crate::device::Register;
use crate::engine::timers::{TimerHandle, Timers};
use crate::engine::Ctx;
use crate::nic::Alarm;
use crate::time::Time;

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    /// An adapter's interrupt timer.
    Irq(usize),
    /// A processor's current step ends.
    StepEnd(usize),
    /// The TCP sessions' timer.
    Sessions,
    /// The poller or sender pinned to a processor may run again.
    Thread(usize),
    /// An idle processor that work was handed to is awake.
    Wake(usize),
    /// A register write of the driver reaches adapter `p`.
    Register(usize, Register),
    /// The TTCP sender on offload engine `p` makes its first send.
    OffloadSend(usize),
    /// A file session on offload engine `p`'s socket `s` asks again.
    OffloadAsk(usize, usize),
    /// The GRO timeout of event-ring adapter `p`'s driver.
    EventRingGro(usize),
}

/// The host's timers' space (`engine::timers::space_of`); each adapter's own
/// timers are its port's `engine::timers::part_space`.
pub(super) const HOST_TIMERS: u8 = 0;

/// Adapter `port`'s interrupt timers, set and taken back among the host's.
pub(super) struct IrqAlarm<'a, 'c> {
    pub timers: &'a mut Timers<Tag>,
    pub ctx: &'a mut Ctx<'c>,
    pub port: usize,
}

impl Alarm for IrqAlarm<'_, '_> {
    fn set(&mut self, at: Time) -> TimerHandle {
        self.timers.arm(self.ctx, at, Tag::Irq(self.port))
    }
    fn cancel(&mut self, timer: TimerHandle) {
        self.timers.cancel(timer)
    }
}
