//! One adapter of a host with the driver state that belongs to it: its rings,
//! its interrupt, the bus it sits on, the buffers waiting to be handed back.

use crate::bus::HostBus;
use crate::host::offload::Offload;
use crate::nic::smart::Programmable;
use crate::nic::{Irq, NicConfig, Rx, Tx};
use crate::processor::Account;
use crate::time::Time;
use crate::wire::Frame;

pub struct Port {
    pub rx: Rx,
    pub tx: Tx,
    pub irq: Irq,
    /// Index of the bus the adapter is on.
    pub bus: usize,
    /// Receive buffers the driver has taken and not yet handed back.
    pub refill_pending: u32,
    /// The write-back delay timer in flight.
    pub flush_armed: Option<Time>,
    /// An intelligent adapter (its processor does the per-frame media work).
    pub smart: bool,
    /// The adapter cuts sends into segments (TSO).
    pub tso: bool,
    /// Frames the driver has taken from the ring, and frames the protocol has
    /// taken up: one adapter's frames go up the stack in ring order, whichever
    /// processor holds them (one DPC per adapter in NDIS; one poll per queue in NAPI).
    pub taken: u64,
    pub delivered: u64,
    /// A TCP offload engine: the adapter's own stack carries the host's TCP,
    /// and its ring is not used.
    pub offload: Option<Box<Offload>>,
    /// A programmable adapter: its firmware works through host memory, rings
    /// and an event ring; its descriptor ring here is not used.
    pub programmable: Option<Box<Programmable>>,
}

impl Port {
    pub fn new(nic: &NicConfig, bus: usize) -> Self {
        Port {
            rx: Rx::new(nic.clone()),
            tx: Tx::new(nic.clone()),
            irq: Irq::new(nic.moderation),
            bus,
            refill_pending: 0,
            flush_armed: None,
            smart: nic.processor.is_some(),
            tso: nic.tso,
            taken: 0,
            delivered: 0,
            offload: None,
            programmable: None,
        }
    }

    /// The transmit tail write reached the adapter: the frames and when each
    /// goes on the wire, after the adapter processor's work on an intelligent one.
    pub fn transmit(&mut self, now: Time, bus: &mut HostBus) -> Vec<(Time, Frame)> {
        let mut out = self.tx.tail(now, bus);
        for (at, _) in &mut out {
            *at = self.rx.process_before(now, *at);
        }
        out
    }

    /// A frame taken from the ring, with its place in the adapter's order.
    pub fn take(&mut self, now: Time) -> Option<(u64, Frame)> {
        let frame = self.rx.take(now)?;
        self.taken += 1;
        Some((self.taken - 1, frame))
    }

    /// The adapter's processors, whatever its kind: an intelligent bus
    /// master's, an offload engine's, a programmable adapter's.
    pub fn processors(&mut self) -> Vec<&mut Account> {
        let mut out: Vec<&mut Account> = self.rx.processor.iter_mut().map(|p| &mut p.account).collect();
        if let Some(o) = &mut self.offload {
            out.push(&mut o.engine.processor.account);
        }
        if let Some(p) = &mut self.programmable {
            out.extend(p.hw.cpus.iter_mut().map(|c| &mut c.account));
        }
        out
    }

    /// Draw the last span of each of its processors.
    pub fn close_trace(&mut self) {
        for a in self.processors() {
            a.close_trace();
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
