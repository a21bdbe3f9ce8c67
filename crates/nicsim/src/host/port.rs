//! One queue of a host's adapter (an adapter's only one, for most) with the
//! driver that serves it: its interrupt vector, the bus its adapter sits on,
//! and the driver's own state (the buffers waiting to be handed back, an
//! offload engine's sockets). Its rings and its adapter's device are the
//! host's `Adapters`.

use std::collections::VecDeque;

use crate::host::event_driver::EventDriver;
use crate::host::gone_up::GoneUp;
use crate::host::offload::Offload;
use crate::nic::{Irq, NicConfig, Transfer};
use crate::wire::Frame;

pub struct Port {
    /// Its interrupt vector's moderation and masking.
    pub irq: Irq,
    /// Index of the bus the adapter is on.
    pub bus: usize,
    /// The host's driver for it, the one its interface asks for.
    pub driver: Driver,
}

/// The driver the host runs for an adapter, by the adapter's `Interface`:
/// what the driver keeps of its own.
pub enum Driver {
    /// Descriptor rings, tail registers and an interrupt.
    Rings(Box<RingDriver>),
    /// Socket-level messages to an offload engine that runs the host's TCP,
    /// and the applications that use its sockets.
    Messages(Box<Offload>),
    /// Steps over an event ring on a polling processor.
    Events(Box<EventDriver>),
}

/// A ring driver's state for its adapter.
pub struct RingDriver {
    /// Frames the driver holds for want of a free transmit descriptor.
    pub waiting: VecDeque<Frame>,
    /// Frames of running steps a dumb adapter's driver has built ahead of
    /// their send, each sure of a free descriptor (`host::send_queue`).
    pub built_ahead: u32,
    /// Receive buffers the driver has taken and not yet handed back.
    pub refill_pending: u32,
    /// An intelligent adapter (its processor does the per-frame media work).
    pub smart: bool,
    /// The adapter cuts sends into segments (TSO).
    pub tso: bool,
    /// Who moves its frames to and from host memory.
    pub transfer: Transfer,
    /// Frames the driver has taken from the ring, and those that went up the
    /// stack: one adapter's frames go up in ring order, whichever processor
    /// holds them (one DPC per adapter in NDIS; one poll per queue in NAPI),
    /// but for the segments GRO takes up with an earlier one of their flow.
    pub taken: u64,
    pub delivered: GoneUp,
}

impl Port {
    pub fn new(nic: &NicConfig, bus: usize, driver: Driver) -> Self {
        Port { irq: Irq::new(nic.moderation), bus, driver }
    }

    /// The ring driver of a port that has one.
    pub fn ring(&mut self) -> &mut RingDriver {
        match &mut self.driver {
            Driver::Rings(r) => r,
            _ => unreachable!("only a ring driver's port comes here"),
        }
    }

    pub fn ring_ref(&self) -> Option<&RingDriver> {
        match &self.driver {
            Driver::Rings(r) => Some(r),
            _ => None,
        }
    }

    pub fn offload(&self) -> Option<&Offload> {
        match &self.driver {
            Driver::Messages(o) => Some(o),
            _ => None,
        }
    }

    pub fn offload_mut(&mut self) -> Option<&mut Offload> {
        match &mut self.driver {
            Driver::Messages(o) => Some(o),
            _ => None,
        }
    }

    /// Its driver works from an event ring.
    pub fn events(&self) -> bool {
        matches!(self.driver, Driver::Events(_))
    }

    /// For an adapter that carries the host's stack (all but an offload
    /// engine, which runs a stack of its own, and an event-ring adapter that
    /// runs the host's `send` workload), whether it cuts the stack's large
    /// sends into segments and sums TCP checksums.
    pub fn stack_segments(&self) -> Option<bool> {
        match &self.driver {
            Driver::Rings(r) => Some(r.tso),
            Driver::Messages(_) => None,
            Driver::Events(d) => d.stack_frames().then_some(true),
        }
    }

    /// An intelligent bus master: its processor does the media work per frame.
    pub fn smart(&self) -> bool {
        self.ring_ref().is_some_and(|r| r.smart)
    }

    /// Whether the host moves this adapter's frames (it is no bus master).
    pub fn moved_by_host(&self) -> bool {
        self.ring_ref().is_some_and(|r| r.transfer != Transfer::BusMaster)
    }
}

impl RingDriver {
    /// The ring driver's state for an adapter `nic` describes.
    pub fn new(nic: &NicConfig) -> Self {
        RingDriver {
            waiting: VecDeque::new(),
            built_ahead: 0,
            refill_pending: 0,
            smart: nic.processor.is_some(),
            tso: nic.tso,
            transfer: nic.transfer,
            taken: 0,
            delivered: GoneUp::default(),
        }
    }

    /// The driver is done with `n` more receive buffers; returns how many to
    /// hand back now (whole batches), keeping the rest.
    pub fn recycle(&mut self, n: u32, batch: u32) -> u32 {
        self.refill_pending += n;
        let give = self.refill_pending / batch * batch;
        self.refill_pending -= give;
        give
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_go_back_in_whole_batches() {
        let mut r = RingDriver::new(&NicConfig::gigabit());
        assert_eq!(r.recycle(5, 18), 0);
        assert_eq!(r.recycle(12, 18), 0, "17 held");
        assert_eq!(r.recycle(1, 18), 18, "a whole batch");
        assert_eq!(r.recycle(40, 18), 36, "two batches, four held");
        assert_eq!(r.refill_pending, 4);
        assert_eq!(r.recycle(3, 1), 7, "a batch of one gives back all it holds");
    }
}
