//! A host's timers: what falls due (`Tag`), armed in the host's `Timers` and
//! taken back by handle.

use crate::engine::timers::{TimerHandle, Timers};
use crate::engine::Ctx;
use crate::nic::Alarm;
use crate::time::Time;

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    /// An adapter's interrupt timer.
    Irq(usize),
    /// A receive tail write reaches an adapter, posting this many buffers.
    RxPost(usize, u32),
    /// A transmit tail write reaches an adapter.
    TxTail(usize),
    /// A frame an adapter sent is done (its transmit completion).
    TxDone(usize),
    /// An adapter's receive write-back delay falls due.
    RxFlush(usize),
    /// A processor's current step ends.
    StepEnd(usize),
    /// The TCP sessions' timer.
    Sessions,
    /// The poller or sender pinned to a processor may run again.
    Thread(usize),
    /// A received frame is in an offload engine's memory.
    OffloadArrive(usize),
    /// An offload engine's run ends.
    OffloadRunEnd(usize),
    /// An offload engine's stack timer.
    OffloadTimer(usize),
    /// The application on an offload engine makes its first send.
    OffloadSend(usize),
    /// A file session on an offload engine's socket asks again.
    OffloadAsk(usize, usize),
}

/// The host's timers' space (`engine::timers::space_of`); a programmable
/// adapter's own timers carry 1 + its port.
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
