//! PCIe link accounting from the TLP and DLLP rules of the PCI Express Base Specification (docs/model.md, "PCIe"):
//! generations 1-2 encode 8b/10b, 3-5 128b/130b; a memory write or read request TLP
//! carries 24 bytes of overhead with 64-bit addressing, a completion with data 20;
//! writes split at the Max Payload Size, read requests at the Max Read Request Size,
//! completions at MPS or the Read Completion Boundary; 8-byte ACK and flow-control
//! DLLPs sent by the spec's latency timers (`dllp_interval`); SKP ordered sets at
//! the longest interval the spec allows (`skip`). docs/model.md gives each
//! overhead with its section of the PCI Express Base Specification.

/// A TLP's framing and data link layer bytes, the same in every generation:
/// STP (1), sequence number (2), LCRC (4) and END (1) under 8b/10b; a 4-byte STP
/// token (which holds the 12-bit sequence number) and LCRC (4) under 128b/130b.
pub const TLP_FRAMING: u64 = 8;
/// Overhead of a memory write or read request TLP with 64-bit addressing:
/// the framing and a 4-DW header.
pub const REQUEST_OVERHEAD: u64 = TLP_FRAMING + 16;
/// Overhead of a completion with data: the framing and a 3-DW header.
pub const COMPLETION_OVERHEAD: u64 = TLP_FRAMING + 12;
/// One ACK or flow-control update DLLP on the wire: 6 bytes, with SDP and END
/// (8b/10b) or a 2-byte SDP token (128b/130b).
pub const DLLP_BYTES: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionSplit {
    /// Completions as large as the Max Payload Size allows.
    Mps,
    /// Completions cut at every Read Completion Boundary.
    Rcb,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcieConfig {
    /// Generation 1 to 5.
    pub generation: u8,
    /// Lanes: 1, 2, 4, 8, 16 or 32.
    pub lanes: u8,
    pub mps: u64,
    pub mrrs: u64,
    pub rcb: u64,
    pub completion_split: CompletionSplit,
}

impl PcieConfig {
    /// Gen3 x8 with MPS 256, MRRS 512, RCB 64 and completions as large as MPS
    /// allows: the link of issue 3's table and of the modern scenarios.
    pub fn gen3x8() -> Self {
        PcieConfig { generation: 3, lanes: 8, mps: 256, mrrs: 512, rcb: 64, completion_split: CompletionSplit::Mps }
    }

    /// Check the values the spec allows; errors name the field.
    pub fn check(&self) -> Result<(), String> {
        let pow2 = |v: u64, lo: u64, hi: u64| v.is_power_of_two() && (lo..=hi).contains(&v);
        if !(1..=5).contains(&self.generation) {
            return Err(format!("generation: must be 1 to 5, got {}", self.generation));
        }
        if !pow2(self.lanes as u64, 1, 32) {
            return Err(format!("lanes: must be 1, 2, 4, 8, 16 or 32, got {}", self.lanes));
        }
        if !pow2(self.mps, 128, 4096) {
            return Err(format!("mps: must be a power of two from 128 to 4096, got {}", self.mps));
        }
        if !pow2(self.mrrs, 128, 4096) {
            return Err(format!("mrrs: must be a power of two from 128 to 4096, got {}", self.mrrs));
        }
        if self.rcb != 64 && self.rcb != 128 {
            return Err(format!("rcb: must be 64 or 128, got {}", self.rcb));
        }
        Ok(())
    }

    /// Transfers per second per lane and the encoding's efficiency (num/den).
    fn lane(&self) -> (u64, u64, u64) {
        match self.generation {
            1 => (2_500_000_000, 8, 10),
            2 => (5_000_000_000, 8, 10),
            3 => (8_000_000_000, 128, 130),
            4 => (16_000_000_000, 128, 130),
            _ => (32_000_000_000, 128, 130),
        }
    }

    /// Bytes per second one direction of the link carries after line encoding.
    pub fn bytes_per_second(&self) -> f64 {
        let (gt, num, den) = self.lane();
        gt as f64 * self.lanes as f64 * num as f64 / den as f64 / 8.0
    }

    /// The spec's Ack latency limit in symbol times, which its UpdateFC
    /// guideline shares: ((MPS + 28) x AckFactor / width) + InternalDelay,
    /// rounded down as the spec's tables are.
    pub fn ack_latency_symbols(&self) -> u64 {
        let factor = match (self.mps, self.lanes) {
            (..=256, ..=4) => 1.4,
            (..=256, 8) => 2.5,
            (..=256, _) => 3.0,
            (512, ..=8) => 1.0,
            (512, _) => 2.0,
            _ => 1.0,
        };
        let internal_delay = match self.generation {
            1 => 19.0,
            2 => 70.0,
            // 115 symbol times at 8 GT/s; later generations are assumed to take
            // the same time (docs/model.md).
            g => 115.0 * (1 << (g - 3)) as f64,
        };
        ((self.mps + TLP_OVERHEAD_SYMBOLS) as f64 * factor / self.lanes as f64 + internal_delay) as u64
    }

    /// SKP ordered sets as (bytes, every so many bytes of other traffic) per
    /// lane: 4 symbols (COM and three SKP) at most 1,538 symbol times apart
    /// under 8b/10b; one 16-symbol block at most 375 blocks apart under 128b/130b.
    pub fn skip(&self) -> (u64, u64) {
        if self.generation <= 2 {
            (4, 1538)
        } else {
            (16, 375 * 16)
        }
    }

    /// Seconds between the ACKs (and between the UpdateFCs of one credit type)
    /// a receiver sends while TLPs keep arriving: the latency limit, a symbol
    /// being 10 unit intervals under 8b/10b and 8 under 128b/130b.
    pub fn dllp_interval(&self) -> f64 {
        let (gt, num, _) = self.lane();
        let bits_per_symbol = if num == 8 { 10.0 } else { 8.0 };
        self.ack_latency_symbols() as f64 * bits_per_symbol / gt as f64
    }
}

/// The TLP overhead the spec's latency formulas take, in symbols.
const TLP_OVERHEAD_SYMBOLS: u64 = 28;

/// The TLPs one transfer puts on each direction of the link. "Up" is from the
/// device to the host, "down" from the host to the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub tlp_bytes_up: u64,
    pub tlp_bytes_down: u64,
    pub tlps_up: u64,
    pub tlps_down: u64,
}

impl Traffic {
    /// Average bytes on the wire per transfer when transfers run back to back:
    /// TLPs, the DLLPs answering the other side's TLPs, and SKIP ordered sets,
    /// the last two spread evenly (so fractional). While TLPs arrive, the
    /// receiver sends an ACK once per `dllp_interval`, and for requests (credited
    /// TLPs) an UpdateFC as often; completions use no credits, since requesters
    /// advertise infinite completion credit.
    fn wire(cfg: &PcieConfig, tlp_bytes: u64, received_bytes: u64, received_credited: bool) -> f64 {
        let per_interval = if received_credited { 2.0 } else { 1.0 };
        let dllps = received_bytes as f64 / cfg.bytes_per_second() / cfg.dllp_interval() * per_interval;
        let (skip, every) = cfg.skip();
        (tlp_bytes as f64 + DLLP_BYTES as f64 * dllps) * (every + skip) as f64 / every as f64
    }
    /// The requester's direction: its requests, and the ACKs for completions.
    pub fn wire_up(&self, cfg: &PcieConfig) -> f64 {
        Self::wire(cfg, self.tlp_bytes_up, self.tlp_bytes_down, false)
    }
    /// The completer's direction: completions, and the ACKs and UpdateFCs for requests.
    pub fn wire_down(&self, cfg: &PcieConfig) -> f64 {
        Self::wire(cfg, self.tlp_bytes_down, self.tlp_bytes_up, true)
    }
}

/// Split `len` bytes starting at `addr` into pieces that do not cross a multiple of
/// `unit` (how writes split at MPS and completions at RCB/MPS).
fn pieces(addr: u64, len: u64, unit: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let first = (unit - addr % unit).min(len);
    1 + (len - first).div_ceil(unit)
}

/// The device writes `len` bytes to host memory at `addr` (e.g. a received frame).
pub fn dma_write(cfg: &PcieConfig, addr: u64, len: u64) -> Traffic {
    let tlps = pieces(addr, len, cfg.mps);
    Traffic { tlp_bytes_up: len + REQUEST_OVERHEAD * tlps, tlp_bytes_down: 0, tlps_up: tlps, tlps_down: 0 }
}

/// The device reads `len` bytes of host memory at `addr` (e.g. a frame to send).
pub fn dma_read(cfg: &PcieConfig, addr: u64, len: u64) -> Traffic {
    let requests = pieces(addr, len, cfg.mrrs);
    let unit = match cfg.completion_split {
        CompletionSplit::Mps => cfg.mps,
        CompletionSplit::Rcb => cfg.rcb,
    };
    // Each read request is answered separately, its completions cut at `unit`.
    let mut completions = 0;
    let mut at = addr;
    let mut left = len;
    while left > 0 {
        let n = (cfg.mrrs - at % cfg.mrrs).min(left);
        completions += pieces(at, n, unit);
        at += n;
        left -= n;
    }
    Traffic {
        tlp_bytes_up: REQUEST_OVERHEAD * requests,
        tlp_bytes_down: len + COMPLETION_OVERHEAD * completions,
        tlps_up: requests,
        tlps_down: completions,
    }
}

/// Sustained bandwidth (payload bits per second) of back-to-back transfers of one
/// size, limited by the busier direction of the link.
pub fn bandwidth(cfg: &PcieConfig, t: Traffic, len: u64) -> f64 {
    let busiest = t.wire_up(cfg).max(t.wire_down(cfg));
    len as f64 * 8.0 * cfg.bytes_per_second() / busiest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen3x8() -> PcieConfig {
        PcieConfig::gen3x8()
    }
    /// Gen3's SKP ordered sets: a 16-symbol block per 375 blocks.
    const SKIP: f64 = 6016.0 / 6000.0;

    #[test]
    fn framing_is_eight_bytes_a_tlp_and_skp_follows_the_encoding() {
        // 8b/10b: STP 1, sequence 2, LCRC 4, END 1; 128b/130b: STP token 4 (with
        // the sequence number), LCRC 4. Headers: 4 DW for 64-bit requests, 3 DW for completions.
        assert_eq!((TLP_FRAMING, REQUEST_OVERHEAD, COMPLETION_OVERHEAD), (8, 24, 20));
        let mut c = gen3x8();
        assert_eq!(c.skip(), (16, 6000), "one 16-symbol block at most 375 blocks apart");
        c.generation = 2;
        assert_eq!(c.skip(), (4, 1538), "COM and three SKP at most 1,538 symbol times apart");
        // The same write costs a Gen2 link 4 bytes of SKP per 1,538, a Gen3 link 16 per 6,000.
        let t = dma_write(&c, 0, 256);
        let dllps = t.wire_down(&c);
        assert!(dllps > 0.0);
        assert!((t.wire_up(&c) - 280.0 * 1542.0 / 1538.0).abs() < 1e-9);
    }

    #[test]
    fn raw_rates_follow_the_encodings() {
        let mut c = gen3x8();
        assert!((c.bytes_per_second() * 8.0 / 1e9 - 63.015).abs() < 0.001, "Gen3 x8 is 63.0 Gb/s after 128b/130b");
        c.generation = 1;
        c.lanes = 1;
        assert_eq!(c.bytes_per_second() * 8.0, 2.0e9, "Gen1 x1 is 2 Gb/s after 8b/10b");
    }

    #[test]
    fn writes_split_at_mps_and_pay_24_bytes_each() {
        let c = gen3x8();
        let t = dma_write(&c, 0, 1024);
        assert_eq!((t.tlps_up, t.tlp_bytes_up), (4, 1024 + 4 * 24));
        assert!((t.wire_up(&c) - 1120.0 * SKIP).abs() < 1e-9);
        // The host acknowledges and returns credit once per 203 ns while the
        // 1120 bytes (142.2 ns at 7.877 GB/s) arrive: 1.40 DLLPs of 8 bytes.
        let dllps = 1120.0 / 7.876_923e9 / 203e-9 * 2.0;
        assert!((t.wire_down(&c) - 8.0 * dllps * SKIP).abs() < 1e-3, "{}", t.wire_down(&c));
        // A write that starts 64 bytes before an MPS boundary needs one more TLP.
        assert_eq!(dma_write(&c, 192, 256).tlps_up, 2);
    }

    #[test]
    fn reads_pay_requests_up_and_completions_down() {
        let mut c = gen3x8();
        let t = dma_read(&c, 0, 1024);
        assert_eq!((t.tlps_up, t.tlps_down), (2, 4), "two 512-byte requests, 256-byte completions");
        assert_eq!(t.tlp_bytes_up, 48);
        assert_eq!(t.tlp_bytes_down, 1024 + 4 * 20);
        // Plus an ACK and an UpdateFC-NP per 203 ns of the 48 request bytes;
        // upstream, ACKs alone for the 1104 completion bytes (no completion credits).
        let per_byte = 8.0 / 7.876_923e9 / 203e-9;
        assert!((t.wire_down(&c) - (1104.0 + 48.0 * 2.0 * per_byte) * SKIP).abs() < 1e-3);
        assert!((t.wire_up(&c) - (48.0 + 1104.0 * per_byte) * SKIP).abs() < 1e-3);
        c.completion_split = CompletionSplit::Rcb;
        assert_eq!(dma_read(&c, 0, 1024).tlps_down, 16, "cut at every 64-byte boundary");
    }

    #[test]
    fn write_bandwidth_grows_up_to_mps_then_levels_off_below_the_link() {
        let c = gen3x8();
        let link = c.bytes_per_second() * 8.0;
        let mut last = 0.0;
        for size in [64, 128, 256, 512, 1024, 2048, 4096] {
            let w = bandwidth(&c, dma_write(&c, 0, size), size);
            assert!(w >= last * 0.999_999 && w < link, "{size}: {w}");
            if size >= 256 {
                assert!((w / link - 256.0 / 280.0 / SKIP).abs() < 1e-9, "from MPS on every TLP is full: {size}");
            }
            last = w;
        }
        let w64 = bandwidth(&c, dma_write(&c, 0, 64), 64);
        assert!((w64 / link - 64.0 / 88.0 / SKIP).abs() < 1e-9, "64 of every 88 bytes are payload");
    }

    #[test]
    fn read_bandwidth_is_bound_by_completions_and_levels_off_from_mrrs() {
        let c = gen3x8();
        let link = c.bytes_per_second() * 8.0;
        // Downstream per request of n bytes: n + 20 per completion, plus the ACK and
        // UpdateFC answering the 24-byte request TLP (8 bytes each per 203 ns).
        let answer = 2.0 * 8.0 * 24.0 / 7.876_923e9 / 203e-9;
        let expect = |n: f64, completions: f64, requests: f64| n / ((n + 20.0 * completions + answer * requests) * SKIP);
        let r64 = bandwidth(&c, dma_read(&c, 0, 64), 64);
        assert!((r64 / link - expect(64.0, 1.0, 1.0)).abs() < 1e-6);
        let r4k = bandwidth(&c, dma_read(&c, 0, 4096), 4096);
        assert!((r4k / link - expect(4096.0, 16.0, 8.0)).abs() < 1e-6, "8 requests of 512, 16 completions of 256");
        let mut last = 0.0;
        for size in [64, 128, 256, 512, 1024, 2048, 4096] {
            let r = bandwidth(&c, dma_read(&c, 0, size), size);
            assert!(r >= last * 0.999_999 && r < link, "{size}: {r}");
            last = r;
        }
        assert!(r4k > bandwidth(&c, dma_write(&c, 0, 4096), 4096), "a completion costs 20 bytes, a write 24");
    }

    #[test]
    fn ack_latency_follows_the_spec_table_at_2_5_gt_s() {
        // PCI Express Base Specification, Ack transmission latency limits at
        // 2.5 GT/s in symbol times: rows MPS 128 to 4096, columns x1 to x32.
        let table: [(u64, [u64; 7]); 6] = [
            (128, [237, 128, 73, 67, 58, 48, 33]),
            (256, [416, 217, 118, 107, 90, 72, 45]),
            (512, [559, 289, 154, 86, 109, 86, 52]),
            (1024, [1071, 545, 282, 150, 106, 84, 51]),
            (2048, [2095, 1057, 538, 278, 192, 148, 83]),
            (4096, [4143, 2081, 1050, 534, 362, 276, 147]),
        ];
        for (mps, row) in table {
            for (lanes, want) in [1u8, 2, 4, 8, 12, 16, 32].into_iter().zip(row) {
                let c = PcieConfig { generation: 1, lanes, mps, ..gen3x8() };
                assert_eq!(c.ack_latency_symbols(), want, "MPS {mps} x{lanes}");
            }
        }
        let c = PcieConfig { generation: 1, lanes: 1, mps: 128, ..gen3x8() };
        assert!((c.dllp_interval() - 948e-9).abs() < 1e-15, "237 symbols of 4 ns");
        assert_eq!(gen3x8().ack_latency_symbols(), 203, "284 x 2.5 / 8 + 115 at 8 GT/s");
    }

    #[test]
    fn narrow_links_acknowledge_more_often_per_tlp() {
        // Gen1 x1, MPS 128: a full write TLP (152 bytes) takes 608 ns against an
        // interval of 948 ns, so the host answers 0.64 TLPs with an ACK and an
        // UpdateFC; on Gen3 x8 with MPS 256 it is 0.175 of a 280-byte TLP.
        let narrow = PcieConfig { generation: 1, lanes: 1, mps: 128, ..gen3x8() };
        let t = dma_write(&narrow, 0, 128);
        assert!((t.wire_down(&narrow) / (1542.0 / 1538.0) - 16.0 * 608.0 / 948.0).abs() < 1e-6);
        let wide = gen3x8();
        let per_tlp = dma_write(&wide, 0, 256).wire_down(&wide) / SKIP / 16.0;
        assert!((per_tlp - 280.0 / 7.876_923e9 / 203e-9).abs() < 1e-4, "{per_tlp}");
    }

    #[test]
    fn impossible_configurations_are_named() {
        let mut c = gen3x8();
        c.mps = 300;
        assert!(c.check().unwrap_err().starts_with("mps"));
        c = gen3x8();
        c.generation = 6;
        assert!(c.check().unwrap_err().starts_with("generation"));
        assert!(gen3x8().check().is_ok());
    }
}
