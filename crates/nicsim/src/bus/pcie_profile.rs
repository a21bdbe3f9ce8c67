//! What a PCIe link gives one DMA engine, from the TLP accounting of
//! `bus::pcie`: the bandwidth of back-to-back writes, of reads and of a mix of
//! both, and the unloaded latency of one read, for any transfer size and host
//! offset. `nicsim pcie` prints it.

use crate::bus::pcie::{dma_read, dma_write, PcieConfig, REQUEST_OVERHEAD};
use crate::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    pub size: u64,
    /// Payload Gb/s of back-to-back device writes to host memory.
    pub write_gbps: f64,
    /// Payload Gb/s of back-to-back device reads of host memory.
    pub read_gbps: f64,
    /// Payload Gb/s when a share `read_share` of the transfers are reads.
    pub mix_gbps: f64,
    /// From the first request TLP leaving the device to the last completion
    /// byte in, with the link otherwise idle.
    pub read_latency_ns: f64,
}

/// The profile of transfers of `size` bytes starting `offset` bytes past an
/// aligned boundary; `latency`: the host's time from a read request to its
/// first completion.
pub fn profile(cfg: &PcieConfig, size: u64, offset: u64, read_share: f64, latency: Duration) -> Profile {
    let (w, r) = (dma_write(cfg, offset, size), dma_read(cfg, offset, size));
    let bps = cfg.bytes_per_second();
    let gbps = |up: f64, down: f64| size as f64 * 8.0 * bps / up.max(down) * 1e-9;
    let mix = |a: f64, b: f64| (1.0 - read_share) * a + read_share * b;
    let read_latency_ns = (REQUEST_OVERHEAD as f64 / bps + r.wire_down(cfg) / bps) * 1e9 + latency.ps() as f64 / 1e3;
    Profile {
        size,
        write_gbps: gbps(w.wire_up(cfg), w.wire_down(cfg)),
        read_gbps: gbps(r.wire_up(cfg), r.wire_down(cfg)),
        mix_gbps: gbps(mix(w.wire_up(cfg), r.wire_up(cfg)), mix(w.wire_down(cfg), r.wire_down(cfg))),
        read_latency_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::pcie::bandwidth;

    #[test]
    fn writes_and_reads_agree_with_the_link_accounting() {
        let c = PcieConfig::gen3x8();
        let p = profile(&c, 1024, 0, 0.0, Duration::from_ns(500));
        assert!((p.write_gbps - bandwidth(&c, dma_write(&c, 0, 1024), 1024) * 1e-9).abs() < 1e-9);
        assert!((p.read_gbps - bandwidth(&c, dma_read(&c, 0, 1024), 1024) * 1e-9).abs() < 1e-9);
        assert_eq!(p.mix_gbps, p.write_gbps, "no reads in the mix");
    }

    #[test]
    fn a_mix_uses_both_directions_and_beats_either_alone() {
        let c = PcieConfig::gen3x8();
        let p = profile(&c, 1024, 0, 0.5, Duration::ZERO);
        assert!(p.mix_gbps > p.write_gbps && p.mix_gbps > p.read_gbps, "{p:?}");
    }

    #[test]
    fn an_offset_that_crosses_a_boundary_costs_a_tlp_and_reads_take_longer_when_larger() {
        let c = PcieConfig::gen3x8();
        let aligned = profile(&c, 256, 0, 0.0, Duration::from_ns(500));
        let crossing = profile(&c, 256, 8, 0.0, Duration::from_ns(500));
        assert!(crossing.write_gbps < aligned.write_gbps);
        let small = profile(&c, 64, 0, 0.0, Duration::from_ns(500));
        assert!(aligned.read_latency_ns > small.read_latency_ns && small.read_latency_ns > 500.0);
    }
}
