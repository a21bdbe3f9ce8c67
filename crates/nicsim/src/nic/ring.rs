//! A bus-master adapter with descriptor rings as one device: its receive and
//! transmit sides, the tail writes that reach it, its write-back delay and the
//! completions of its sends, on timers of its own.

use std::cell::Cell;
use std::rc::Rc;

use crate::device::{Device, DeviceCx, Register};
use crate::engine::timers::{part_space, Earliest, Timers};
use crate::engine::{Msg, PortId};
use crate::nic::tx::Sent;
use crate::nic::{NicConfig, Rx, Tx};
use crate::observe::Report;
use crate::processor::Account;
use crate::time::{Duration, Time};
use crate::wire::ethernet::wire_time;
use crate::wire::Frame;

pub struct RingAdapter {
    pub rx: Rx,
    pub tx: Tx,
    /// Its own timers (`engine::timers::part_space` of its port).
    timers: Timers<RingDue>,
    /// The write-back delay timer in flight.
    flush_timer: Earliest,
    /// Its port on the wire (a multi-queue adapter's queues share one).
    wire: PortId,
    /// Each send done raises its interrupt.
    tx_interrupt: bool,
    link_rate_bps: u64,
}

/// What falls due at a ring adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RingDue {
    /// A frame it sent is done (its transmit completion).
    TxDone,
    /// Its receive write-back delay falls due.
    RxFlush,
}

impl RingAdapter {
    /// The ring adapter of port `port`.
    pub fn new(nic: &NicConfig, port: usize) -> Self {
        RingAdapter {
            rx: Rx::new(nic.clone()),
            tx: Tx::new(nic.clone()),
            timers: Timers::new(part_space(port)),
            flush_timer: Earliest::default(),
            wire: port as PortId,
            tx_interrupt: nic.tx_interrupt,
            link_rate_bps: nic.link_rate_bps,
        }
    }

    /// It sits on wire port `wire` (each queue of a multi-queue adapter on
    /// the adapter's).
    pub fn on_wire(mut self, wire: usize) -> Self {
        self.wire = wire as PortId;
        self
    }

    /// The MAC its frames leave by.
    pub fn mac(&self) -> Rc<Cell<Time>> {
        self.tx.mac()
    }

    /// Send through `mac`, the first queue's of the same adapter.
    pub fn share_mac(&mut self, mac: Rc<Cell<Time>>) {
        self.tx.share_mac(mac);
    }

    /// `n` more buffers posted (a receive tail write reached it).
    fn post(&mut self, n: u32, cx: &mut DeviceCx) {
        self.rx.post(n, cx.now(), cx.bus, (&mut cx.rings[0].rx, &mut cx.out.completions));
        self.received(cx);
    }

    /// After receive work: the buffers it has left, and its write-back delay
    /// armed if a group waits.
    #[inline(always)]
    fn received(&mut self, cx: &mut DeviceCx) {
        cx.out.buffers_left = Some(self.rx.buffers_left());
        if let Some(due) = self.rx.flush_due() {
            let now = cx.now();
            self.flush_timer.set(&mut self.timers, cx.ctx, due, now, RingDue::RxFlush);
        }
    }

    /// The transmit tail write reached it: each frame goes on the wire after
    /// the adapter processor's work on an intelligent one.
    fn transmit(&mut self, cx: &mut DeviceCx) {
        let now = cx.now();
        for Sent { start, frame, status } in self.tx.tail(now, cx.bus, &mut cx.rings[0].tx) {
            let at = self.rx.process_before(now, start);
            if self.tx_interrupt {
                // Done once it is on the wire and its status is written.
                let done = (at + wire_time(frame.len(), self.link_rate_bps)).max(status);
                self.timers.arm(cx.ctx, done, RingDue::TxDone);
            }
            cx.ctx.send_at(self.wire, at, Msg::frame(frame));
        }
        cx.out.took_sends = true;
    }
}

impl Device for RingAdapter {
    #[inline]
    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx) {
        self.rx.arrive(frame, cx.now(), cx.bus, (&mut cx.rings[0].rx, &mut cx.out.completions));
        self.received(cx);
    }

    #[inline]
    fn timer(&mut self, tag: u64, cx: &mut DeviceCx) {
        let Some(due) = self.timers.fire(tag) else { return };
        let now = cx.now();
        match due {
            RingDue::RxFlush => {
                self.flush_timer.fired();
                self.rx.flush(now, cx.bus, (&mut cx.rings[0].rx, &mut cx.out.completions));
                self.received(cx);
            }
            RingDue::TxDone => cx.out.sends_done += 1,
        }
    }

    fn processors(&mut self) -> Vec<&mut Account> {
        self.rx.processor.iter_mut().map(|p| &mut p.timeline.account).collect()
    }

    fn register_write(&mut self, reg: Register, cx: &mut DeviceCx) {
        match reg {
            Register::RxTail { n, .. } => self.post(n, cx),
            Register::TxTail { .. } => self.transmit(cx),
            // An event-ring adapter's doorbells: a ring adapter has none.
            Register::SendPosted { .. } | Register::BuffersPosted(_) => {}
        }
    }

    fn moved_out(&mut self, _queue: usize, frame: &Frame) {
        self.rx.moved_out(frame);
    }

    fn report(&self, r: &mut Report, end: Time, _host_busy: Duration) {
        self.rx.report(r, end);
        self.tx.report(r);
    }

    fn report_processor(&self, r: &mut Report, end: Time) {
        self.rx.report_processor(r, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::pci::PciConfig;
    use crate::bus::{BusConfig, HostBus};
    use crate::device::bench::Bench;
    use crate::time::{Clock, Duration};

    /// The IBM study's bus and adapter (as `nic::rx_tests` has them).
    fn ibm() -> (Bench, NicConfig) {
        let pci =
            PciConfig { width: 8, clock: Clock::from_mhz(33), cache_line: 32, overhead_clocks: 6, read_latency_clocks: 10, mwi: true };
        let nic = NicConfig { rx_dma_threshold: 400, status_wait_clocks: 9, ..NicConfig::gigabit() };
        (Bench::new(HostBus::new(BusConfig::Pci(pci), Duration::from_us(20))), nic)
    }

    fn frame(len: usize) -> Frame {
        Frame { bytes: vec![0; len], meta: Default::default() }
    }

    fn us(n: u64) -> Time {
        Time::ZERO + Duration::from_us(n)
    }

    #[test]
    fn a_frame_from_the_wire_is_a_completion_in_host_memory() {
        let (mut b, nic) = ibm();
        let mut dev = RingAdapter::new(&nic, 0);
        b.at(Time::ZERO, &mut dev, |d, cx| d.register_write(Register::RxTail { queue: 0, n: 8 }, cx));
        b.at(us(100), &mut dev, |d, cx| d.frame_in(Box::new(frame(1514)), cx));
        let (_, said) = b.said.last().expect("said");
        assert_eq!(said.completions.len(), 1);
        let (visible, n) = said.completions[0];
        assert_eq!(n, 1);
        // Its data, remainder and status cross the bus after its last bit.
        assert!(visible > us(100) && visible < us(110), "visible at {visible}");
        assert_eq!(said.buffers_left, Some(7));
        assert!(b.rings[0].rx.take(Time(visible.ps() - 1)).is_none(), "not visible before its write-back");
        let (taken, at) = b.rings[0].rx.take(visible).expect("the driver takes it from its ring");
        assert_eq!((taken.len(), at), (1514, visible));
        b.run(&mut dev);
        assert!(b.sent.is_empty(), "receiving sends nothing");
    }

    #[test]
    fn a_frame_waits_for_the_tail_write_that_gives_it_a_buffer() {
        let (mut b, nic) = ibm();
        let mut dev = RingAdapter::new(&nic, 0);
        b.at(us(10), &mut dev, |d, cx| d.frame_in(Box::new(frame(1514)), cx));
        assert!(b.completions().is_empty(), "no buffer, no completion");
        b.run(&mut dev);
        assert!(b.completions().is_empty(), "no buffer yet");
        b.at(us(50), &mut dev, |d, cx| d.register_write(Register::RxTail { queue: 0, n: 4 }, cx));
        b.run(&mut dev);
        let seen = b.completions();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].0 > us(50), "written after the tail write reached it: {:?}", seen);
        assert_eq!(b.said.last().expect("said").1.buffers_left, Some(3));
    }

    #[test]
    fn a_transmit_tail_write_sends_the_ring_and_each_send_done_is_reported() {
        let (mut b, nic) = ibm();
        let nic = NicConfig { tx_interrupt: true, ..nic };
        let mut dev = RingAdapter::new(&nic, 3);
        b.rings[0].tx.fill(frame(1514));
        b.rings[0].tx.fill(frame(60));
        b.at(us(2), &mut dev, |d, cx| d.register_write(Register::TxTail { queue: 0 }, cx));
        b.run(&mut dev);
        assert!(b.said.iter().any(|(at, o)| *at == us(2) && o.took_sends));
        let sent = b.sent.clone();
        assert_eq!(sent.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>(), vec![(3, 1514), (3, 60)], "both, in order, out of its port");
        assert!(sent[0].0 > us(2) && sent[1].0 >= sent[0].0 + wire_time(1514, nic.link_rate_bps));
        let done: Vec<Time> = b.said.iter().filter(|(_, o)| o.sends_done > 0).map(|(at, _)| *at).collect();
        let ends: Vec<Time> = sent.iter().map(|(at, _, len)| *at + wire_time(*len, nic.link_rate_bps)).collect();
        assert_eq!(done, ends, "each send is done when its last bit has left");
    }
}
