//! A host's timers: each one's tag says what falls due (packed as
//! `engine::tag` packs every component's).

use crate::engine::tag::{pack, unpack};
use crate::engine::Ctx;
use crate::time::Time;

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    /// An adapter's interrupt timer, with its generation.
    Irq(usize, u64),
    /// A receive tail write reaches an adapter, posting this many buffers.
    RxPost(usize, u32),
    /// A transmit tail write reaches an adapter.
    TxTail(usize),
    /// A frame an adapter sent is done (its transmit completion).
    TxDone(usize),
    /// An adapter's receive write-back delay falls due.
    RxFlush(usize),
    /// A processor's current step ends, if the generation is still current.
    StepEnd(usize, u64),
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

impl Tag {
    fn encode(self) -> u64 {
        let (kind, index, value) = match self {
            Tag::Irq(p, g) => (1, p, g),
            Tag::RxPost(p, n) => (2, p, n as u64),
            Tag::TxTail(p) => (3, p, 0),
            Tag::RxFlush(p) => (4, p, 0),
            Tag::StepEnd(c, g) => (5, c, g),
            Tag::Sessions => (6, 0, 0),
            Tag::Thread(c) => (7, c, 0),
            Tag::OffloadArrive(p) => (8, p, 0),
            Tag::OffloadRunEnd(p) => (9, p, 0),
            Tag::OffloadTimer(p) => (10, p, 0),
            Tag::OffloadSend(p) => (11, p, 0),
            Tag::OffloadAsk(p, s) => (12, p, s as u64),
            Tag::TxDone(p) => (13, p, 0),
        };
        pack(kind, index, value)
    }
    pub fn decode(tag: u64) -> Option<Tag> {
        let (kind, i, v) = unpack(tag);
        Some(match kind {
            1 => Tag::Irq(i, v),
            2 => Tag::RxPost(i, v as u32),
            3 => Tag::TxTail(i),
            4 => Tag::RxFlush(i),
            5 => Tag::StepEnd(i, v),
            6 => Tag::Sessions,
            7 => Tag::Thread(i),
            8 => Tag::OffloadArrive(i),
            9 => Tag::OffloadRunEnd(i),
            10 => Tag::OffloadTimer(i),
            11 => Tag::OffloadSend(i),
            12 => Tag::OffloadAsk(i, v as usize),
            13 => Tag::TxDone(i),
            _ => return None,
        })
    }
}

pub(super) fn wake(ctx: &mut Ctx, at: Time, tag: Tag) {
    debug_assert!(at >= ctx.now(), "a host timer set in the past");
    ctx.wake_at(at, tag.encode());
}
