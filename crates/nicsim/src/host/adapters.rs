//! The host's adapters as its drivers reach them: each adapter's device, and
//! for each of its queues (a port of the host: a pair of rings and an
//! interrupt vector) the descriptor rings in host memory that the queue's
//! driver shares with the device. An input goes to the device whole; what it
//! tells the host names the vector it raised, which is the port of that queue.

use crate::bus::HostBus;
use crate::device::rings::Rings;
use crate::device::{Device, DeviceCx, DeviceOut, Register};
use crate::engine::Ctx;
use crate::host::config::AdapterSlot;
use crate::time::Time;
use crate::wire::Frame;

pub struct Adapters {
    devices: Vec<Box<dyn Device>>,
    /// Per port: its queue's rings.
    rings: Vec<Rings>,
    /// Per port: its adapter, and which of the adapter's queues it is.
    of: Vec<(usize, u16)>,
    /// Per adapter (an adapter a wire port): the port of its first queue, how
    /// many it has, and the bus it sits on.
    first: Vec<(usize, usize, usize)>,
}

impl Adapters {
    /// `devices`, one an adapter, in the host's `slots` (a slot a queue, an
    /// adapter's queues one after another).
    pub fn new(devices: Vec<Box<dyn Device>>, slots: &[AdapterSlot]) -> Result<Self, String> {
        let first: Vec<usize> = (0..slots.len()).filter(|&p| slots[p].queue == 0).collect();
        if devices.len() != first.len() {
            return Err(format!("{} devices for {} adapters", devices.len(), first.len()));
        }
        let mut of = Vec::with_capacity(slots.len());
        for (a, (&p, d)) in first.iter().zip(&devices).enumerate() {
            let queues = slots[p].queues as usize;
            if d.queues() != queues {
                return Err(format!("adapter {a} has {} queues, and the host gives it {queues}", d.queues()));
            }
            of.extend((0..queues).map(|q| (a, q as u16)));
        }
        let first = first.iter().map(|&p| (p, slots[p].queues as usize, slots[p].bus)).collect();
        let rings = slots
            .iter()
            .map(|s| {
                let mut rings = Rings::new(s.nic.tx_ring);
                if let Some(n) = s.nic.tx_in_flight {
                    rings.tx.keep_at_most(n);
                }
                rings
            })
            .collect();
        Ok(Adapters { devices, rings, of, first })
    }

    /// The device of port `p`'s adapter.
    #[inline]
    pub fn device(&mut self, p: usize) -> &mut dyn Device {
        &mut *self.devices[self.of[p].0]
    }

    #[inline]
    pub fn device_ref(&self, p: usize) -> &dyn Device {
        &*self.devices[self.of[p].0]
    }

    /// Which of its adapter's queues port `p` is.
    #[inline]
    pub fn queue(&self, p: usize) -> usize {
        self.of[p].1 as usize
    }

    /// Port `p`'s rings in host memory.
    #[inline]
    pub fn rings(&mut self, p: usize) -> &mut Rings {
        &mut self.rings[p]
    }

    #[inline]
    pub fn rings_ref(&self, p: usize) -> &Rings {
        &self.rings[p]
    }

    /// The receive tail register of port `p`'s queue: `n` more buffers.
    pub fn rx_tail(&self, p: usize, n: u32) -> Register {
        Register::RxTail { queue: self.of[p].1, n }
    }

    /// The transmit tail register of port `p`'s queue.
    pub fn tx_tail(&self, p: usize) -> Register {
        Register::TxTail { queue: self.of[p].1 }
    }

    /// The next frame port `p`'s driver takes from its receive ring at `now`,
    /// and since when it could; a frame the host moves (`moved`) leaves the
    /// adapter's packet memory as the driver takes it.
    #[inline(always)]
    pub fn take(&mut self, p: usize, now: Time, moved: bool) -> Option<(Box<Frame>, Time)> {
        let (frame, visible) = self.rings[p].rx.take(now)?;
        if moved {
            let (a, q) = self.of[p];
            self.devices[a].moved_out(q as usize, &frame);
        }
        Some((frame, visible))
    }

    /// The adapter of port `p`.
    #[inline]
    pub fn adapter(&self, p: usize) -> usize {
        self.of[p].0
    }

    /// Hand adapter `a` an input (`f`), on its bus of `buses`; returns what
    /// `f` does, and the port whose vector the device's `out` raises.
    #[inline(always)]
    pub fn tell<R>(
        &mut self,
        a: usize,
        ctx: &mut Ctx,
        buses: &mut [HostBus],
        out: &mut DeviceOut,
        f: impl FnOnce(&mut (dyn Device + 'static), &mut DeviceCx) -> R,
    ) -> (R, usize) {
        let (first, queues, bus) = self.first[a];
        let bus = &mut buses[bus];
        let device = &mut self.devices[a];
        let rings = &mut self.rings[first..first + queues];
        out.vector = 0;
        let r = f(&mut **device, &mut DeviceCx { ctx, bus, rings, out });
        (r, first + out.vector as usize)
    }

    /// Every device, each once.
    pub fn devices(&mut self) -> impl Iterator<Item = &mut Box<dyn Device>> {
        self.devices.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    use crate::nic::NicConfig;
    use crate::processor::Account;

    /// A device of `queues` queues that notes the frames the host moved out
    /// of it, and does nothing else.
    struct Quiet {
        queues: usize,
        moved_out: Moved,
    }

    /// The frames moved out of a device: from which queue, how long.
    type Moved = Arc<Mutex<Vec<(usize, usize)>>>;

    impl Device for Quiet {
        fn queues(&self) -> usize {
            self.queues
        }
        fn frame_in(&mut self, _frame: Box<Frame>, cx: &mut DeviceCx) {
            // Its last queue takes every frame.
            let q = cx.rings.len() - 1;
            cx.queue(q, |cx| cx.out.sends_done += 1);
        }
        fn timer(&mut self, _tag: u64, _cx: &mut DeviceCx) {}
        fn processors(&mut self) -> Vec<&mut Account> {
            Vec::new()
        }
        fn moved_out(&mut self, queue: usize, frame: &Frame) {
            self.moved_out.lock().expect("not poisoned").push((queue, frame.len()));
        }
    }

    fn slots(queues: &[u16]) -> Vec<AdapterSlot> {
        let mut slots = Vec::new();
        for (wire, &n) in queues.iter().enumerate() {
            slots.extend((0..n).map(|q| AdapterSlot {
                nic: NicConfig::gigabit(),
                wire,
                queue: q,
                queues: n,
                rss_key: crate::nic::rss::VERIFICATION_KEY,
                bus: 0,
                irq_cpu: 0,
                offload: None,
                programmable: None,
                device: None,
            }));
        }
        slots
    }

    fn quiet(queues: usize) -> (Box<dyn Device>, Moved) {
        let moved = Arc::new(Mutex::new(Vec::new()));
        (Box::new(Quiet { queues, moved_out: moved.clone() }), moved)
    }

    fn frame(len: usize) -> Box<Frame> {
        Box::new(Frame { bytes: vec![0; len], meta: Default::default() })
    }

    fn us(n: u64) -> Time {
        Time::ZERO + crate::time::Duration::from_us(n)
    }

    #[test]
    fn each_queue_is_a_port_and_the_vector_a_device_raises_names_it() {
        let (a, b) = (quiet(1).0, quiet(3).0);
        let mut adapters = Adapters::new(vec![a, b], &slots(&[1, 3])).expect("built");
        assert_eq!((0..4).map(|p| adapters.queue(p)).collect::<Vec<_>>(), vec![0, 0, 1, 2]);
        assert_eq!(adapters.rx_tail(3, 5), Register::RxTail { queue: 2, n: 5 });
        let pci = crate::bus::pci::PciConfig {
            width: 8,
            clock: crate::time::Clock::from_mhz(33),
            cache_line: 32,
            overhead_clocks: 6,
            read_latency_clocks: 10,
            mwi: true,
        };
        let mut buses = [HostBus::new(crate::bus::BusConfig::Pci(pci), crate::time::Duration::ZERO)];
        let (mut outbox, mut rng) = (Vec::new(), crate::engine::component_rng(1, "t"));
        let mut ctx = Ctx::new(Time::ZERO, &mut outbox, &mut rng);
        let mut out = DeviceOut::default();
        assert_eq!((0..4).map(|p| adapters.adapter(p)).collect::<Vec<_>>(), vec![0, 1, 1, 1]);
        // The adapter's last queue raises its vector: port 3's.
        let (_, raised) = adapters.tell(1, &mut ctx, &mut buses, &mut out, |d, cx| d.frame_in(frame(60), cx));
        assert_eq!(raised, 3);
        let (_, raised) = adapters.tell(0, &mut ctx, &mut buses, &mut out, |d, cx| d.frame_in(frame(60), cx));
        assert_eq!(raised, 0, "the single-queue adapter raises its one vector");
    }

    #[test]
    fn a_device_with_other_queues_than_its_slots_is_refused() {
        let Err(e) = Adapters::new(vec![quiet(2).0], &slots(&[3])) else { panic!("built") };
        assert_eq!(e, "adapter 0 has 2 queues, and the host gives it 3");
        let Err(e) = Adapters::new(vec![quiet(1).0, quiet(1).0], &slots(&[1])) else { panic!("built") };
        assert_eq!(e, "2 devices for 1 adapters");
    }

    #[test]
    fn the_driver_takes_frames_in_ring_order_once_visible() {
        let (d, _) = quiet(1);
        let mut adapters = Adapters::new(vec![d], &slots(&[1])).expect("built");
        adapters.rings(0).rx.complete(frame(100), us(5));
        adapters.rings(0).rx.complete(frame(200), us(7));
        assert!(adapters.take(0, us(4), false).is_none(), "nothing visible yet");
        let (f, visible) = adapters.take(0, us(8), false).expect("the first");
        assert_eq!((f.len(), visible), (100, us(5)));
        assert_eq!(adapters.take(0, us(8), false).expect("the second").0.len(), 200);
        assert!(adapters.take(0, us(9), false).is_none());
    }

    #[test]
    fn a_frame_the_host_moves_leaves_its_queues_packet_memory_as_the_driver_takes_it() {
        for moved in [false, true] {
            let (d, seen) = quiet(2);
            let mut adapters = Adapters::new(vec![d], &slots(&[2])).expect("built");
            adapters.rings(1).rx.complete(frame(300), us(1));
            adapters.take(1, us(1), moved).expect("visible");
            assert_eq!(*seen.lock().expect("not poisoned"), if moved { vec![(1, 300)] } else { vec![] });
        }
    }
}
