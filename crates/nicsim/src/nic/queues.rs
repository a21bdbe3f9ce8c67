//! A ring adapter with several queues as one device: a receive and a transmit
//! ring a queue, each with an interrupt vector of its own; receive-side
//! scaling picks the queue of each frame from the wire (`rss::Steering`), and
//! every queue sends through the adapter's one MAC. Each queue's engines are a
//! `RingAdapter` of their own, on timers in the space of the host's port for
//! that queue.

use crate::device::{Device, DeviceCx, Register};
use crate::engine::timers::{part_of, space_of};
use crate::nic::rss::Steering;
use crate::nic::{NicConfig, RingAdapter};
use crate::observe::Report;
use crate::processor::Account;
use crate::time::{Duration, Time};
use crate::wire::Frame;

pub struct MultiQueue {
    queues: Vec<RingAdapter>,
    steering: Steering,
    /// The host's port of its first queue: queue `q`'s timers are port `first + q`'s.
    first: usize,
}

impl MultiQueue {
    /// The adapter on wire port `wire` whose queues are the host's ports from
    /// `first` on, each with `nic`'s rings and its share of the receive FIFO.
    pub fn new(nic: &NicConfig, steering: Steering, first: usize, wire: usize) -> Self {
        let n = steering.table.queues();
        let mut queues: Vec<RingAdapter> = (0..n).map(|q| RingAdapter::new(nic, first + q).on_wire(wire)).collect();
        let mac = queues[0].mac();
        for q in &mut queues[1..] {
            q.share_mac(mac.clone());
        }
        MultiQueue { queues, steering, first }
    }
}

impl Device for MultiQueue {
    fn queues(&self) -> usize {
        self.queues.len()
    }

    #[inline]
    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx) {
        let q = self.steering.queue(&frame.bytes);
        cx.queue(q, |cx| self.queues[q].frame_in(frame, cx));
    }

    #[inline]
    fn timer(&mut self, tag: u64, cx: &mut DeviceCx) {
        let q = part_of(space_of(tag)).expect("a queue's timer") - self.first;
        cx.queue(q, |cx| self.queues[q].timer(tag, cx));
    }

    fn processors(&mut self) -> Vec<&mut Account> {
        self.queues.iter_mut().flat_map(|q| q.processors()).collect()
    }

    fn register_write(&mut self, reg: Register, cx: &mut DeviceCx) {
        let q = match reg {
            Register::RxTail { queue, .. } | Register::TxTail { queue } => queue as usize,
            Register::SendPosted { .. } | Register::BuffersPosted(_) => return,
        };
        cx.queue(q, |cx| self.queues[q].register_write(reg, cx));
    }

    fn moved_out(&mut self, queue: usize, frame: &Frame) {
        self.queues[queue].moved_out(0, frame);
    }

    /// Its queues' figures summed.
    fn report(&self, r: &mut Report, end: Time, host_busy: Duration) {
        let queues: Vec<Report> = (0..self.queues.len())
            .map(|q| {
                let mut one = Report::default();
                self.report_queue(q, &mut one, end, host_busy);
                one
            })
            .collect();
        for (name, v) in Report::summed(&queues).entries() {
            r.count(name, v.as_f64() as u64);
        }
    }

    fn report_queue(&self, queue: usize, r: &mut Report, end: Time, host_busy: Duration) {
        self.queues[queue].report(r, end, host_busy);
    }

    fn report_queue_processor(&self, queue: usize, r: &mut Report, end: Time) {
        self.queues[queue].report_processor(r, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::pci::PciConfig;
    use crate::bus::{BusConfig, HostBus};
    use crate::device::bench::Bench;
    use crate::nic::rss::VERIFICATION_KEY;
    use crate::time::Clock;
    use crate::wire::endpoint::{ipv4_headers, Addr};
    use crate::wire::ethernet::wire_time;
    use crate::wire::{build, L4};

    fn bench(queues: usize) -> Bench {
        let pci =
            PciConfig { width: 8, clock: Clock::from_mhz(66), cache_line: 64, overhead_clocks: 6, read_latency_clocks: 10, mwi: true };
        Bench::new(HostBus::new(BusConfig::Pci(pci), Duration::from_us(20))).queues(queues)
    }

    fn adapter(queues: u16) -> MultiQueue {
        MultiQueue::new(&NicConfig::gigabit(), Steering::spread(queues, VERIFICATION_KEY), 5, 2)
    }

    fn udp(src_port: u16) -> Box<Frame> {
        udp_of(src_port, 18)
    }

    fn udp_of(src_port: u16, payload: usize) -> Box<Frame> {
        let (a, b) = (
            Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: src_port },
            Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 9 },
        );
        let bytes = build(&ipv4_headers(a, b, 0, L4::Udp { src_port, dst_port: 9 }), &vec![0; payload]).expect("builds");
        Box::new(Frame { bytes, meta: Default::default() })
    }

    fn us(n: u64) -> Time {
        Time::ZERO + Duration::from_us(n)
    }

    #[test]
    fn each_frame_lands_in_the_ring_of_the_queue_its_hash_names_and_raises_that_vector() {
        let (mut b, mut dev) = (bench(4), adapter(4));
        for q in 0..4 {
            b.at(Time::ZERO, &mut dev, |d, cx| d.register_write(Register::RxTail { queue: q, n: 64 }, cx));
        }
        let steering = Steering::spread(4, VERIFICATION_KEY);
        let mut landed = [0usize; 4];
        for (i, port) in (10_000..10_064).enumerate() {
            b.at(us(2 + 2 * i as u64), &mut dev, |d, cx| d.frame_in(udp(port), cx));
            b.run(&mut dev);
            let q = steering.queue(&udp(port).bytes);
            let raised: Vec<u16> = b.said.iter().filter(|(_, o)| !o.completions.is_empty()).map(|(_, o)| o.vector).collect();
            assert_eq!(raised.last(), Some(&(q as u16)), "flow {port}: its queue's vector");
            b.said.clear();
            landed[q] += 1;
        }
        let rings: Vec<usize> = (0..4).map(|q| std::iter::from_fn(|| b.rings[q].rx.take(us(1_000))).count()).collect();
        assert_eq!(rings, landed.to_vec(), "each frame in its queue's ring");
        assert!(landed.iter().all(|&n| n > 0), "64 flows reach every queue: {landed:?}");
    }

    #[test]
    fn a_tail_write_posts_buffers_to_its_own_queue_alone() {
        let (mut b, mut dev) = (bench(2), adapter(2));
        let steering = Steering::spread(2, VERIFICATION_KEY);
        let port_of = |q: usize| (10_000..).find(|&p| steering.queue(&udp(p).bytes) == q).expect("a flow of each queue");
        b.at(Time::ZERO, &mut dev, |d, cx| d.register_write(Register::RxTail { queue: 1, n: 8 }, cx));
        b.at(us(5), &mut dev, |d, cx| d.frame_in(udp(port_of(0)), cx));
        b.at(us(10), &mut dev, |d, cx| d.frame_in(udp(port_of(1)), cx));
        b.run(&mut dev);
        assert!(b.rings[0].rx.next_visible().is_none(), "queue 0 has no buffer");
        assert!(b.rings[1].rx.take(us(100)).is_some(), "queue 1 had buffers");
        let (_, said) = b.said.iter().find(|(at, _)| *at == us(10)).expect("the second frame");
        assert_eq!((said.vector, said.buffers_left), (1, Some(7)));
    }

    #[test]
    fn the_adapters_figures_are_its_queues_summed() {
        let (mut b, mut dev) = (bench(2), adapter(2));
        let steering = Steering::spread(2, VERIFICATION_KEY);
        let port_of = |q: usize| (10_000..).find(|&p| steering.queue(&udp(p).bytes) == q).expect("a flow of each queue");
        for q in 0..2 {
            b.at(Time::ZERO, &mut dev, |d, cx| d.register_write(Register::RxTail { queue: q, n: 8 }, cx));
        }
        // One frame to queue 0, two to queue 1.
        for (i, q) in [0, 1, 1].into_iter().enumerate() {
            b.at(us(5 + 5 * i as u64), &mut dev, |d, cx| d.frame_in(udp(port_of(q)), cx));
        }
        b.run(&mut dev);
        let frames = |r: &Report| r.get("rx_frames").expect("rx_frames");
        let mut queues = [Report::default(), Report::default()];
        for (q, r) in queues.iter_mut().enumerate() {
            dev.report_queue(q, r, us(100), Duration::ZERO);
        }
        let mut whole = Report::default();
        dev.report(&mut whole, us(100), Duration::ZERO);
        assert_eq!((frames(&queues[0]), frames(&queues[1]), frames(&whole)), (1.0, 2.0, 3.0));
    }

    #[test]
    fn every_queue_sends_through_the_adapters_one_mac() {
        let (mut b, mut dev) = (bench(2), adapter(2));
        for q in 0..2 {
            b.rings[q].tx.fill(*udp_of(1_000 + q as u16, 1472));
        }
        for q in 0..2 {
            b.at(us(1), &mut dev, |d, cx| d.register_write(Register::TxTail { queue: q }, cx));
        }
        b.run(&mut dev);
        let sent = b.sent.clone();
        assert_eq!(sent.len(), 2);
        assert!(sent.iter().all(|s| s.1 == 2), "both by the adapter's wire port");
        let link = NicConfig::gigabit().link_rate_bps;
        // Its data crosses the bus in under a third of the first frame's time on the wire.
        assert!(sent[1].0 >= sent[0].0 + wire_time(sent[0].2, link), "the second waits for the first on the one MAC: {sent:?}");
    }
}
