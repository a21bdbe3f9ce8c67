//! One adapter of a host with the driver that serves it: its rings, its
//! interrupt, the bus it sits on, and the driver's own state (the buffers
//! waiting to be handed back, an offload engine's sockets).

use std::collections::VecDeque;

use crate::device::rings::Rings;
use crate::device::Device;
use crate::host::event_driver::EventDriver;
use crate::host::gone_up::GoneUp;
use crate::host::offload::Offload;
use crate::nic::{Irq, NicConfig, Transfer};
use crate::time::Time;
use crate::wire::Frame;

pub struct Port {
    pub irq: Irq,
    /// Index of the bus the adapter is on.
    pub bus: usize,
    /// Its descriptor rings in host memory (a ring adapter's; empty for the others).
    pub rings: Rings,
    /// The adapter, whatever its kind: the host hands it frames from the wire,
    /// its timers and its driver's register writes.
    pub device: Box<dyn Device>,
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
    pub fn new(nic: &NicConfig, bus: usize, device: Box<dyn Device>, driver: Driver) -> Self {
        let mut rings = Rings::new(nic.tx_ring);
        if let Some(n) = nic.tx_in_flight {
            rings.tx.keep_at_most(n);
        }
        Port { irq: Irq::new(nic.moderation), bus, rings, device, driver }
    }

    /// The ring driver of a port that has one.
    pub fn ring(&mut self) -> &mut RingDriver {
        match &mut self.driver {
            Driver::Rings(r) => r,
            _ => unreachable!("only a ring driver's port comes here"),
        }
    }

    /// The next frame its driver takes from the receive ring at `now`, with
    /// its place in the adapter's order and when it became visible; a frame
    /// the host moves leaves the adapter's packet memory as it takes it.
    #[inline]
    pub fn take(&mut self, now: Time) -> Option<(u64, Box<Frame>, Time)> {
        let (frame, visible) = self.rings.rx.take(now)?;
        let Port { device, driver: Driver::Rings(ring), .. } = self else { unreachable!("only a ring driver takes from rings") };
        if ring.transfer != Transfer::BusMaster {
            device.moved_out(&frame);
        }
        ring.taken += 1;
        Some((ring.taken - 1, frame, visible))
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

    /// An event-ring port's driver, and the host memory its adapter's model holds.
    pub fn event_driver(&mut self) -> (&mut EventDriver, &mut crate::mem::Memory) {
        let Port { device, driver: Driver::Events(d), .. } = self else { unreachable!("only an event-ring port comes here") };
        (d, device.host_memory().expect("an event-ring adapter holds the host memory it reaches"))
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

    /// Draw the last span of each of its processors.
    pub fn close_trace(&mut self) {
        for a in self.device.processors() {
            a.close_trace();
        }
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
    use std::sync::{Arc, Mutex};

    use crate::device::DeviceCx;
    use crate::processor::Account;

    /// A device that notes the frames the host moved out of it, and does nothing else.
    struct Quiet {
        moved_out: Arc<Mutex<Vec<usize>>>,
    }

    impl Device for Quiet {
        fn frame_in(&mut self, _frame: Box<Frame>, _cx: &mut DeviceCx) {}
        fn timer(&mut self, _tag: u64, _cx: &mut DeviceCx) {}
        fn processors(&mut self) -> Vec<&mut Account> {
            Vec::new()
        }
        fn moved_out(&mut self, frame: &Frame) {
            self.moved_out.lock().expect("not poisoned").push(frame.len());
        }
    }

    /// A ring port with a `Quiet` device; what the host moved out of it.
    fn port(nic: NicConfig) -> (Port, Arc<Mutex<Vec<usize>>>) {
        let moved = Arc::new(Mutex::new(Vec::new()));
        let driver = Driver::Rings(Box::new(RingDriver::new(&nic)));
        (Port::new(&nic, 0, Box::new(Quiet { moved_out: moved.clone() }), driver), moved)
    }

    fn frame(len: usize) -> Box<Frame> {
        Box::new(Frame { bytes: vec![0; len], meta: Default::default() })
    }

    fn us(n: u64) -> Time {
        Time::ZERO + crate::time::Duration::from_us(n)
    }

    #[test]
    fn the_driver_takes_frames_in_ring_order_once_visible_and_numbers_them() {
        let (mut p, _) = port(NicConfig::gigabit());
        p.rings.rx.complete(frame(100), us(5));
        p.rings.rx.complete(frame(200), us(7));
        assert!(p.take(us(4)).is_none(), "nothing visible yet");
        let (order, f, visible) = p.take(us(8)).expect("the first");
        assert_eq!((order, f.len(), visible), (0, 100, us(5)));
        let (order, f, _) = p.take(us(8)).expect("the second");
        assert_eq!((order, f.len()), (1, 200));
        assert!(p.take(us(9)).is_none());
    }

    #[test]
    fn a_frame_the_host_moves_leaves_adapter_memory_as_the_driver_takes_it() {
        for (transfer, moved) in [(Transfer::BusMaster, vec![]), (Transfer::Pio, vec![300]), (Transfer::SharedMemory, vec![300])] {
            let (mut p, seen) = port(NicConfig { transfer, ..NicConfig::gigabit() });
            p.rings.rx.complete(frame(300), us(1));
            p.take(us(1)).expect("visible");
            assert_eq!(*seen.lock().expect("not poisoned"), moved, "{transfer:?}");
        }
    }

    #[test]
    fn buffers_go_back_in_whole_batches() {
        let (mut p, _) = port(NicConfig::gigabit());
        let r = p.ring();
        assert_eq!(r.recycle(5, 18), 0);
        assert_eq!(r.recycle(12, 18), 0, "17 held");
        assert_eq!(r.recycle(1, 18), 18, "a whole batch");
        assert_eq!(r.recycle(40, 18), 36, "two batches, four held");
        assert_eq!(r.refill_pending, 4);
        assert_eq!(r.recycle(3, 1), 7, "a batch of one gives back all it holds");
    }
}
