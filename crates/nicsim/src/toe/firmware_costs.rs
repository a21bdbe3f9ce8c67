//! The HP 2001 i960RN firmware's costs, solved from the report's profile
//! (docs/model.md, "HP 2001"): an offload engine's defaults.

/// The HP report's calibration points for the i960RN firmware (Ang, HPL-2001-8, pp. 1, 4 and 12).
pub const HP_FULL_PACKET_CYCLES: f64 = 17_000.0;
pub const HP_ACK_CYCLES: u64 = 10_000;
pub const HP_NAGLE_PACKET_CYCLES: f64 = 4_500_000.0;
pub const HP_NAGLE_PACKET_BYTES: f64 = 940.0;

/// The report's per-message profile: an 8 KB message costs the adapter this
/// many times more to send than to receive (p. 12).
pub const HP_SEND_OVER_RECEIVE: f64 = 1.66;

/// The firmware's costs in cycles, solved from the report's profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirmwareCycles {
    /// A data segment sent (P).
    pub packet: u64,
    /// A data segment received (R).
    pub rx_packet: u64,
    /// A host message: a send, a posted receive buffer (M).
    pub message: u64,
}

/// P and M from the two per-packet points: an 8 KB-message full packet costs
/// P + A/2 + M·1460/8192 (the receiver ACKs every second segment, p. 12),
/// a Nagle packet of 940 one-byte messages costs P + A + 940·M (each such
/// packet is ACKed alone). R from the per-message profile: receiving an 8 KB
/// message (n = 8192/1460 segments, one posted buffer, and one ACK when the
/// buffer goes up to the host, p. 12: "about one per six" packets) costs
/// n·R + A + M, which is 1/1.66 of sending it, n·17000.
pub fn hp_firmware_cycles() -> FirmwareCycles {
    let a = HP_ACK_CYCLES as f64;
    let share = 1460.0 / 8192.0;
    // P = 17000 − A/2 − share·M, put into the second equation.
    let m = (HP_NAGLE_PACKET_CYCLES - (HP_FULL_PACKET_CYCLES - a / 2.0) - a) / (HP_NAGLE_PACKET_BYTES - share);
    let p = HP_FULL_PACKET_CYCLES - a / 2.0 - share * m;
    let r = HP_FULL_PACKET_CYCLES / HP_SEND_OVER_RECEIVE - share * (m + a);
    FirmwareCycles { packet: p.round() as u64, rx_packet: r.round() as u64, message: m.round() as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_firmware_costs_reproduce_the_published_profile() {
        let FirmwareCycles { packet: p, rx_packet: r, message: m } = hp_firmware_cycles();
        let a = HP_ACK_CYCLES as f64;
        let n = 8192.0 / 1460.0;
        let full = p as f64 + a / 2.0 + m as f64 / n;
        let nagle = p as f64 + a + 940.0 * m as f64;
        let received = n * r as f64 + a + m as f64;
        assert!((full - 17_000.0).abs() < 2.0, "{full}");
        assert!((nagle - 4_500_000.0).abs() < 1_000.0, "{nagle}");
        assert!((n * full / received - 1.66).abs() < 0.001, "{}", n * full / received);
        assert!((11_000..11_300).contains(&p) && (4_700..4_800).contains(&m), "p {p} m {m}");
        assert!((7_550..7_700).contains(&r), "r {r}");
    }
}
