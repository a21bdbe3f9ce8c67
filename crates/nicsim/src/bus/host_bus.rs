//! The timed host bus between processors, memory and adapters. Conventional PCI
//! and PCI-X are one shared, half-duplex calendar whose transactions cost what
//! `bus::pci` says; PCIe is a calendar per direction whose transfers cost their
//! TLP and DLLP bytes (`bus::pcie`) at the link's rate, reads paying the latency
//! between request and completion. Every master (adapter DMA engines, the host
//! bridge writing registers for a processor) books the bus here, so contention is
//! real and occupancy is measured.

use crate::bus::calendar::Calendar;
use crate::bus::occupancy::{Booking, Occupancy};
use crate::bus::pci::{self, PciConfig, Source};
use crate::bus::pcie::{self, PcieConfig};
use crate::bus::purpose::{label, Purpose};
use crate::bus::rhythm::Rhythm;
use crate::mem::DmaCount;
use crate::observe::{Report, SharedTrace, TrackId};
use crate::time::{Duration, Time};

#[derive(Clone, Debug, PartialEq)]
pub enum BusConfig {
    Pci(PciConfig),
    Pcie { link: PcieConfig, read_latency: Duration },
}

/// How the bytes a master writes become available to it: all at once, or as a
/// frame arriving from the wire (its first byte at `first_byte`, then at the
/// line rate), which makes a PCI burst insert wait states when it catches up,
/// and a PCIe transfer end no earlier than its last TLP after the last byte.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fill {
    Ready,
    /// Its last bit (the FCS's, after any padding) arrives at `last_bit`.
    Arriving {
        first_byte: Time,
        rate_bps: u64,
        last_bit: Time,
    },
}

/// A PCIe transfer's time up, down, and up for a write's last TLP.
type Spans = (Duration, Duration, Duration);
/// Transfer sizes whose spans are kept at once (a power of two).
const SPAN_SLOTS: usize = 32;

pub struct HostBus {
    cfg: BusConfig,
    /// PCI: the bus. PCIe: device to host.
    up: Calendar,
    /// PCIe only: host to device.
    down: Calendar,
    occupancy: Occupancy,
    /// PCI: what an analyser would see of the receive rhythm.
    rhythm: Option<Rhythm>,
    trace: Option<(SharedTrace, TrackId, TrackId)>,
    /// PCIe: each direction's time for a write or read of a size, and a
    /// write's last TLP's time up, kept for the sizes last asked for (frames
    /// and descriptors recur): slots chosen by size, an entry's key beside it.
    spans: Box<[(u64, Spans); SPAN_SLOTS]>,
    /// The simulation's time, as its owner last told it (`settle`).
    present: Time,
    /// Frame bytes devices wrote to host memory, one count for the host's buses.
    pub dma: DmaCount,
}

/// Whole bytes a wire at `rate_bps` delivers in `d`: 64-bit arithmetic while
/// the product fits (any interval under a few milliseconds), as the hot path.
fn bytes_by(d: Duration, rate_bps: u64) -> u64 {
    const PS_BITS_PER_BYTE: u64 = 8 * 1_000_000_000_000;
    match d.ps().checked_mul(rate_bps) {
        Some(bits_ps) => bits_ps / PS_BITS_PER_BYTE,
        None => (d.ps() as u128 * rate_bps as u128 / PS_BITS_PER_BYTE as u128) as u64,
    }
}

/// The PCI clock count of a transaction, its wait states and time.
fn pci_span(cfg: &PciConfig, c: pci::Clocks) -> (Duration, u64) {
    (c.time(cfg), c.wait)
}

impl HostBus {
    /// `reach_back`: how far in the past a master may start a transaction (the
    /// longest frame time on an attached adapter's wire).
    pub fn new(cfg: BusConfig, reach_back: Duration) -> Self {
        let rhythm = match &cfg {
            BusConfig::Pci(p) => Some(Rhythm::new(p.clock.period(), p.overhead_clocks, reach_back)),
            BusConfig::Pcie { .. } => None,
        };
        let (up, down) = (Calendar::new(reach_back), Calendar::new(reach_back));
        HostBus {
            cfg,
            up,
            down,
            occupancy: Occupancy::default(),
            rhythm,
            trace: None,
            spans: Box::new([(u64::MAX, Spans::default()); SPAN_SLOTS]),
            present: Time::ZERO,
            dma: DmaCount::default(),
        }
    }

    /// The simulation has reached `now`: bookings that ended more than the
    /// reach-back before it can no longer be contended for. Only noted here;
    /// the calendars forget when they are next booked.
    #[inline]
    pub fn settle(&mut self, now: Time) {
        self.present = self.present.max(now);
    }

    /// The run ends at `end`: bus time booked past it is not counted in its
    /// occupancy.
    pub fn ends_at(&mut self, end: Time) {
        self.occupancy.ends_at(end);
    }

    pub fn config(&self) -> &BusConfig {
        &self.cfg
    }

    pub fn trace_into(&mut self, trace: SharedTrace, host: &str) {
        let (up, down) = match self.cfg {
            BusConfig::Pci(_) => {
                let t = trace.borrow_mut().track(host, "PCI bus");
                (t, t)
            }
            BusConfig::Pcie { .. } => {
                let mut tr = trace.borrow_mut();
                (tr.track(host, "PCIe upstream (device to host)"), tr.track(host, "PCIe downstream (host to device)"))
            }
        };
        self.trace = Some((trace, up, down));
    }

    /// A PCIe write (or read) of `bytes`: its time on the requester's direction
    /// (up for a device) and on the completer's.
    fn pcie_spans(&mut self, link: &PcieConfig, read: bool, bytes: u64) -> (Duration, Duration) {
        let (up, down, _) = self.pcie_spans_with_last(link, read, bytes);
        (up, down)
    }

    /// As `pcie_spans`, with the time up of a write's last TLP.
    #[inline(always)]
    fn pcie_spans_with_last(&mut self, link: &PcieConfig, read: bool, bytes: u64) -> Spans {
        let key = bytes << 1 | u64::from(read);
        let slot = &mut self.spans[(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) as usize];
        if slot.0 != key {
            *slot = (key, Self::work_out_spans(link, read, bytes));
        }
        slot.1
    }

    fn work_out_spans(link: &PcieConfig, read: bool, bytes: u64) -> Spans {
        let bps = link.bytes_per_second();
        let up = |t: pcie::Traffic| secs(t.wire_up(link) / bps);
        let t = if read { pcie::dma_read(link, 0, bytes) } else { pcie::dma_write(link, 0, bytes) };
        let last =
            if read || bytes == 0 { Duration::ZERO } else { up(pcie::dma_write(link, 0, bytes - (bytes - 1) / link.mps * link.mps)) };
        (up(t), secs(t.wire_down(link) / bps), last)
    }

    /// Book one transaction, or the second half of one (`part`: the completions
    /// of a PCIe read, the DLLPs answering a write), which is not counted again.
    fn book(&mut self, up: bool, at: Time, purpose: Purpose, bytes: u64, len: impl Fn(Time) -> (Duration, u64)) -> (Time, Time) {
        self.book_part(up, at, purpose, bytes, false, len)
    }

    fn book_part(
        &mut self,
        up: bool,
        at: Time,
        purpose: Purpose,
        bytes: u64,
        part: bool,
        len: impl Fn(Time) -> (Duration, u64),
    ) -> (Time, Time) {
        let cal = if up { &mut self.up } else { &mut self.down };
        cal.settle(self.present);
        // The pieces a split transfer took, for the trace.
        let mut pieces = Vec::new();
        let (start, end, wait, busy) = match &self.cfg {
            // Over a maximum payload, PCIe data travels as several TLPs that
            // interleave with other traffic in each direction.
            BusConfig::Pcie { link, .. } if bytes > link.mps => {
                let (d, wait) = len(at);
                let tracing = self.trace.is_some();
                let piece = Duration(d.ps() * link.mps / bytes);
                let (start, end) = cal.reserve_pieces(at, d, piece, |s, e| {
                    if tracing {
                        pieces.push((s, e));
                    }
                });
                (start, end, wait, d)
            }
            _ => {
                let (start, end, wait) = cal.reserve_with(at, len);
                (start, end, wait, end.since(start))
            }
        };
        self.occupancy.count(Booking { up, purpose, start, end, busy, bytes, wait, part });
        if let Some(r) = self.rhythm.as_mut() {
            r.settle(self.present);
            r.booked((start, end), purpose, bytes, wait);
        }
        if let Some((trace, up_track, down_track)) = &self.trace {
            let track = if up { *up_track } else { *down_track };
            let mut t = trace.borrow_mut();
            if pieces.len() > 1 {
                // Each piece with its share of the transfer's bytes.
                for (s, e) in pieces {
                    let share = (bytes as u128 * e.since(s).ps() as u128 / busy.ps().max(1) as u128) as u64;
                    t.span(track, label(purpose), s, e, &[("bytes", share), ("wait_clocks", wait)]);
                }
            } else {
                t.span(track, label(purpose), start, end, &[("bytes", bytes), ("wait_clocks", wait)]);
            }
        }
        (start, end)
    }

    /// The memory that device writes go to is held for `d` from about `at` (the
    /// driver freeing and allocating buffers): device-to-host transfers wait.
    pub fn stall(&mut self, at: Time, d: Duration) {
        self.book(true, at, Purpose::MemoryStall, 0, |_| (d, 0));
    }

    /// A device writes `bytes` to host memory, starting no earlier than `at`.
    /// Returns when the last of it is on the bus (writes are posted).
    pub fn write(&mut self, at: Time, bytes: u64, fill: Fill, purpose: Purpose) -> Time {
        self.write_parts(at, bytes, fill, purpose, 0)
    }

    /// As `write`, with `extra_clocks` of target wait states on a PCI bus (a
    /// descriptor write-back that the bridge makes wait).
    pub fn write_parts(&mut self, at: Time, bytes: u64, fill: Fill, purpose: Purpose, extra_clocks: u64) -> Time {
        match self.cfg {
            BusConfig::Pci(c) => {
                // The rate in bytes a bus clock is the same at every start tried.
                let per_clock = match fill {
                    Fill::Ready => 0.0,
                    Fill::Arriving { rate_bps, .. } => rate_bps as f64 / 8.0 / c.clock.hz(),
                };
                let source = |start: Time| match fill {
                    Fill::Ready => Source::all_ready(),
                    Fill::Arriving { first_byte, rate_bps, .. } => {
                        // Bytes in by `start` (none if it starts before the first).
                        Source { ready: bytes_by(start.since(first_byte), rate_bps), bytes_per_clock: Some(per_clock) }
                    }
                };
                // Whole lines by memory-write-and-invalidate, then the remainder.
                let lines = if c.mwi { bytes / c.cache_line * c.cache_line } else { 0 };
                let mut end = at;
                if lines > 0 {
                    // Whole lines only: `pci::write`'s first burst.
                    end = self.book(true, at, purpose, lines, |s| pci_span(&c, pci::burst(&c, 0, lines, &source(s)))).1;
                }
                if bytes > lines {
                    let rest = bytes - lines;
                    let part = if lines > 0 && purpose == Purpose::RxData { Purpose::RxRemainder } else { purpose };
                    end = self
                        .book(true, end, part, rest, |s| {
                            let src = source(s);
                            // The remainder's bytes come after the lines already written.
                            let shifted = Source { ready: src.ready.saturating_sub(lines), ..src };
                            // Under a line (or no MWI): `pci::write`'s plain write.
                            let (d, w) = pci_span(&c, pci::burst(&c, 0, rest, &shifted));
                            (d + c.clock.cycles(extra_clocks), w + extra_clocks)
                        })
                        .1;
                }
                end
            }
            BusConfig::Pcie { link, .. } => {
                let (up, down, last_tlp) = self.pcie_spans_with_last(&link, false, bytes);
                let mut at = at;
                if let Fill::Arriving { last_bit, .. } = fill {
                    // The last TLP leaves once its bytes are in: the transfer
                    // ends no earlier than that TLP after the frame's last bit.
                    at = at.max(Time((last_bit + last_tlp).ps().saturating_sub(up.ps())));
                }
                let end = self.book(true, at, purpose, bytes, |_| (up, 0)).1;
                self.book_part(false, at, purpose, 0, true, |_| (down, 0));
                end
            }
        }
    }

    /// A device reads `bytes` of host memory from `at` on; returns when the data is in.
    pub fn read(&mut self, at: Time, bytes: u64, purpose: Purpose) -> Time {
        self.read_pipelined(at, bytes, purpose).1
    }

    /// As `read`, also returning when the engine may issue its next request: on
    /// PCI the bus is held until the data is in; PCIe requests are split
    /// transactions, so several may be outstanding.
    pub fn read_pipelined(&mut self, at: Time, bytes: u64, purpose: Purpose) -> (Time, Time) {
        match self.cfg {
            BusConfig::Pci(c) => {
                let end = self.read_in_bursts(&c, at, bytes, purpose);
                (end, end)
            }
            BusConfig::Pcie { link, read_latency } => {
                let (up, down) = self.pcie_spans(&link, true, bytes);
                let asked = self.book(true, at, purpose, 0, |_| (up, 0)).1;
                (asked, self.book_part(false, asked + read_latency, purpose, bytes, true, |_| (down, 0)).1)
            }
        }
    }

    /// A long PCI read goes in pieces of `LATENCY_TIMER_CLOCKS` of data: a piece
    /// that follows the last at once continues its burst (data phases only);
    /// one that finds the bus taken (another master's transaction already
    /// booked there) was disconnected by the latency timer and starts again,
    /// paying arbitration, address and the round trip anew.
    fn read_in_bursts(&mut self, c: &PciConfig, at: Time, bytes: u64, purpose: Purpose) -> Time {
        let piece = c.width * pci::LATENCY_TIMER_CLOCKS;
        let first = bytes.min(piece);
        // Each piece carries its own bytes (the transaction is counted once).
        let mut end = self.book(true, at, purpose, first, |_| pci_span(c, pci::read(c, first))).1;
        let mut left = bytes - first;
        while left > 0 {
            let n = left.min(piece);
            let after = end;
            let data = pci::Clocks { data: c.data_clocks(n), transactions: 0, ..Default::default() };
            let full = pci::read(c, n);
            end = self.book_part(true, after, purpose, n, true, |s| pci_span(c, if s == after { data } else { full })).1;
            left -= n;
        }
        end
    }

    /// A processor moves `bytes` between host memory and an adapter's packet
    /// memory itself, 4 bytes an instruction (IN/OUT to an I/O port, or MOV to a
    /// memory window): each word is a bus transaction of its own, so the
    /// processor stalls until the last is done, at the time this gives.
    /// `from_adapter`: reads (never posted), else writes. `combined`: memory
    /// writes, which the host bridge posts and combines into one burst (PCI
    /// 2.1 allows it for memory, never for I/O).
    pub fn processor_moves(&mut self, at: Time, bytes: u64, from_adapter: bool, combined: bool, purpose: Purpose) -> Time {
        let words = bytes.div_ceil(4).max(1);
        if combined && !from_adapter {
            return self.write(at, bytes, Fill::Ready, purpose);
        }
        match self.cfg {
            BusConfig::Pci(c) => {
                let word = if from_adapter { pci::read(&c, 4) } else { pci::write(&c, 4, &Source::all_ready()).1 };
                let (d, _) = pci_span(&c, word);
                self.book(true, at, purpose, bytes, |_| (Duration(d.ps() * words), 0)).1
            }
            BusConfig::Pcie { link, read_latency } => {
                let bps = link.bytes_per_second();
                let d = if from_adapter {
                    let t = pcie::dma_read(&link, 0, 4);
                    secs(t.wire_up(&link) / bps) + read_latency + secs(t.wire_down(&link) / bps)
                } else {
                    secs(pcie::dma_write(&link, 0, 4).wire_up(&link) / bps)
                };
                self.book(!from_adapter, at, purpose, bytes, |_| (Duration(d.ps() * words), 0)).1
            }
        }
    }

    /// A system DMA controller moves `bytes` at `rate_bps`, holding the bus
    /// (and the processor off it) until done, at the time this gives.
    pub fn controller_moves(&mut self, at: Time, bytes: u64, rate_bps: u64, purpose: Purpose) -> Time {
        let up = matches!(self.cfg, BusConfig::Pci(_)) || purpose == Purpose::RxData;
        self.book(up, at, purpose, bytes, |_| (Duration::for_bits(bytes * 8, rate_bps), 0)).1
    }

    /// A processor writes a 4-byte adapter register (a tail doorbell, an interrupt
    /// mask). Posted: the processor goes on; returns when the write reaches the adapter.
    pub fn register_write(&mut self, at: Time) -> Time {
        match self.cfg {
            BusConfig::Pci(c) => self.book(true, at, Purpose::Register, 4, |_| pci_span(&c, pci::write(&c, 4, &Source::all_ready()).1)).1,
            BusConfig::Pcie { link, .. } => {
                // Host to device: the write travels down, its ACK up.
                let (write, ack) = self.pcie_spans(&link, false, 4);
                let end = self.book(false, at, Purpose::Register, 4, |_| (write, 0)).1;
                self.book_part(true, at, Purpose::Register, 0, true, |_| (ack, 0));
                end
            }
        }
    }

    /// A processor reads a 4-byte adapter register (the interrupt cause); it
    /// stalls until the value returns, at the time this gives.
    pub fn register_read(&mut self, at: Time) -> Time {
        match self.cfg {
            BusConfig::Pci(c) => self.book(true, at, Purpose::Register, 4, |_| pci_span(&c, pci::read(&c, 4))).1,
            BusConfig::Pcie { link, read_latency } => {
                let (request, completion) = self.pcie_spans(&link, true, 4);
                let asked = self.book(false, at, Purpose::Register, 0, |_| (request, 0)).1;
                self.book_part(true, asked + read_latency, Purpose::Register, 4, true, |_| (completion, 0)).1
            }
        }
    }

    /// Occupancy: overall and by purpose, with transaction counts.
    pub fn report(&self, r: &mut Report, end: Time) {
        self.occupancy.report(r, end, matches!(self.cfg, BusConfig::Pci(_)));
        if let Some(g) = &self.rhythm {
            g.report(r, "rx_data");
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_ps((s * 1e12).ceil() as u64)
}
