//! Conventional PCI / PCI-X transaction timing (PCI Local Bus Specification 2.1; docs/model.md, "Conventional PCI"): each
//! transaction pays arbitration and an address phase before its data phases; a
//! burst moves one bus width per clock; a master whose FIFO runs dry mid-burst
//! inserts wait states; memory-write-and-invalidate moves whole cache lines only,
//! so the remainder goes as a plain memory write; reads pay a round trip.
//!
//! This is the cost model; the timed, arbitrated bus component builds on it.

use crate::time::{Clock, Duration};

/// The master's latency timer (PCI 2.1, 3.5.4): once it expires, a master
/// whose grant is taken away for another must end its burst. 64 clocks is a
/// common setting by the BIOS (assumed; docs/model.md).
pub const LATENCY_TIMER_CLOCKS: u64 = 64;

/// PCI-X puts an attribute phase (byte count, requester, tag) after every
/// address phase (PCI-X Addendum to the PCI Local Bus Specification 1.0):
/// one clock PCI does not pay. A `pci-x` bus adds it to `overhead_clocks`.
pub const PCIX_ATTRIBUTE_CLOCKS: u64 = 1;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PciConfig {
    /// Bus width in bytes: 4 (32-bit) or 8 (64-bit).
    pub width: u64,
    pub clock: Clock,
    /// Cache line size for memory-write-and-invalidate (32 bytes on the Pentium II/III).
    pub cache_line: u64,
    /// Clocks every transaction pays before its first data phase (arbitration,
    /// address phase) and after its last (turnaround).
    pub overhead_clocks: u64,
    /// Clocks from a read's address phase to its first data (the round trip).
    pub read_latency_clocks: u64,
    /// Whether the master uses memory-write-and-invalidate for whole lines.
    pub mwi: bool,
}

impl PciConfig {
    pub fn check(&self) -> Result<(), String> {
        if self.width != 4 && self.width != 8 {
            return Err(format!("width: must be 4 or 8 bytes (32 or 64 bits), got {}", self.width));
        }
        if !self.cache_line.is_power_of_two() || self.cache_line < self.width {
            return Err(format!("cache_line: must be a power of two of at least the bus width, got {}", self.cache_line));
        }
        Ok(())
    }
    pub fn data_clocks(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.width)
    }
}

/// How the master's source fills while it bursts: it starts with `ready` bytes and
/// gains `bytes_per_clock` more each bus clock (e.g. a frame still arriving from
/// the wire). `None` rate: everything is already there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    pub ready: u64,
    pub bytes_per_clock: Option<f64>,
}

impl Source {
    pub fn all_ready() -> Self {
        Source { ready: u64::MAX, bytes_per_clock: None }
    }
    /// Clocks from the start of the burst until `bytes` are in the FIFO.
    fn clocks_until(&self, bytes: u64) -> u64 {
        match self.bytes_per_clock {
            _ if bytes <= self.ready => 0,
            Some(rate) if rate > 0.0 => ((bytes - self.ready) as f64 / rate).ceil() as u64,
            _ => u64::MAX,
        }
    }
}

/// Where the clocks of one or more transactions went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clocks {
    pub overhead: u64,
    pub data: u64,
    pub wait: u64,
    pub latency: u64,
    pub transactions: u64,
}

impl Clocks {
    pub fn total(&self) -> u64 {
        self.overhead + self.data + self.wait + self.latency
    }
    pub fn time(&self, cfg: &PciConfig) -> Duration {
        cfg.clock.cycles(self.total())
    }
    fn add(self, o: Clocks) -> Clocks {
        Clocks {
            overhead: self.overhead + o.overhead,
            data: self.data + o.data,
            wait: self.wait + o.wait,
            latency: self.latency + o.latency,
            transactions: self.transactions + o.transactions,
        }
    }
}

/// One write burst of `bytes` starting `offset` bytes into the master's source.
/// Data phase k needs the k-th bus word in the FIFO; when it is not there the
/// master inserts wait states until it is. `write`'s parts, each one burst: the
/// bus books them apart, so it times each alone.
pub fn burst(cfg: &PciConfig, offset: u64, bytes: u64, src: &Source) -> Clocks {
    let data = cfg.data_clocks(bytes);
    // The burst ends when its last word is both reached and available.
    let last_ready = src.clocks_until(offset + bytes);
    let finish = data.max(last_ready.saturating_sub(cfg.overhead_clocks));
    Clocks { overhead: cfg.overhead_clocks, data, wait: finish - data, latency: 0, transactions: 1 }
}

/// A bus master writes `bytes` to memory: whole cache lines by memory-write-and-
/// invalidate (when enabled), the remainder by a plain memory write.
#[inline(always)]
pub fn write(cfg: &PciConfig, bytes: u64, src: &Source) -> (Clocks, Clocks) {
    if bytes == 0 {
        return (Clocks::default(), Clocks::default());
    }
    let lines = if cfg.mwi { bytes / cfg.cache_line * cfg.cache_line } else { 0 };
    let main = if lines > 0 { burst(cfg, 0, lines, src) } else { Clocks::default() };
    let rest = if bytes > lines {
        // The remainder starts after the first burst; its bytes are older by then.
        let elapsed = main.total();
        let shifted = Source { ready: src.ready.saturating_add((src.bytes_per_clock.unwrap_or(0.0) * elapsed as f64) as u64), ..*src };
        burst(cfg, lines, bytes - lines, &shifted)
    } else {
        Clocks::default()
    };
    (main, rest)
}

/// A bus master reads `bytes` from memory: overhead, the round trip, then data.
pub fn read(cfg: &PciConfig, bytes: u64) -> Clocks {
    Clocks { overhead: cfg.overhead_clocks, data: cfg.data_clocks(bytes), wait: 0, latency: cfg.read_latency_clocks, transactions: 1 }
}

/// Sum clocks of several transactions.
pub fn total(parts: &[Clocks]) -> Clocks {
    parts.iter().fold(Clocks::default(), |a, b| a.add(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pci64_33() -> PciConfig {
        PciConfig { width: 8, clock: Clock::from_mhz(33), cache_line: 32, overhead_clocks: 6, read_latency_clocks: 10, mwi: true }
    }

    #[test]
    fn a_ready_frame_goes_as_whole_lines_then_a_plain_write() {
        let c = pci64_33();
        let (mwi, rest) = write(&c, 1518, &Source::all_ready());
        assert_eq!(mwi.data, 188, "1504 bytes of whole 32-byte lines, 8 bytes a clock");
        assert_eq!(mwi.wait, 0);
        assert_eq!(rest.data, 2, "the last 14 bytes");
        assert_eq!(rest.total(), 8, "overhead + 2 data clocks");
        assert_eq!(mwi.time(&c), Duration::from_ns(30 * (188 + 6)));
    }

    #[test]
    fn a_master_that_runs_dry_inserts_wait_states() {
        let c = pci64_33();
        // A frame arriving at 1 Gb/s fills the FIFO at 3.75 bytes per 30 ns clock,
        // slower than the bus drains it: the burst waits for the wire.
        let src = Source { ready: 256, bytes_per_clock: Some(3.75) };
        let (mwi, _) = write(&c, 1518, &src);
        let until_last = ((1504.0 - 256.0) / 3.75f64).ceil() as u64;
        assert_eq!(mwi.data + mwi.wait + mwi.overhead, until_last);
        assert!(mwi.wait > 100);
    }

    #[test]
    fn without_mwi_the_whole_frame_is_one_plain_write() {
        let c = PciConfig { mwi: false, ..pci64_33() };
        let (mwi, rest) = write(&c, 1518, &Source::all_ready());
        assert_eq!(mwi, Clocks::default());
        assert_eq!(rest.data, 190);
    }

    #[test]
    fn per_frame_bus_time_is_the_sum_of_its_parts() {
        let c = pci64_33();
        let src = Source { ready: 256, bytes_per_clock: Some(3.75) };
        let (mwi, rest) = write(&c, 1518, &src);
        let status = write(&c, 16, &Source::all_ready()).1;
        let all = total(&[mwi, rest, status]);
        assert_eq!(all.total(), mwi.data + mwi.wait + rest.data + status.data + 3 * c.overhead_clocks + rest.wait);
        assert_eq!(all.transactions, 3);
        assert_eq!(all.time(&c), c.clock.cycles(all.total()));
    }

    #[test]
    fn reads_pay_the_round_trip() {
        let c = pci64_33();
        assert_eq!(read(&c, 64).total(), 6 + 10 + 8);
    }

    #[test]
    fn bad_widths_are_named() {
        assert!(PciConfig { width: 2, ..pci64_33() }.check().unwrap_err().starts_with("width"));
        assert!(PciConfig { cache_line: 24, ..pci64_33() }.check().unwrap_err().starts_with("cache_line"));
    }
}
