//! IEEE 802.3 framing arithmetic. Frames in the model hold every byte from the
//! destination address to the end of the payload (padding included) but not the
//! 4-byte FCS, which is what a capture shows and what crosses the bus.

use crate::time::Duration;

/// Preamble and start-of-frame delimiter.
pub const PREAMBLE: usize = 8;
/// Minimum inter-frame gap.
pub const IFG: usize = 12;
/// Frame check sequence.
pub const FCS: usize = 4;
/// Destination, source and EtherType.
pub const HEADER: usize = 14;
/// 802.1Q tag.
pub const VLAN_TAG: usize = 4;
/// Smallest frame, FCS included.
pub const MIN_FRAME: usize = 64;
/// Per-frame bytes that carry no payload: preamble, header, FCS and gap (38).
pub const OVERHEAD: usize = PREAMBLE + HEADER + FCS + IFG;

/// Bytes a frame of `len` stored bytes (no FCS) occupies on the wire: padded to the
/// minimum, plus FCS, preamble and the gap after it.
pub fn wire_bytes(len: usize) -> usize {
    (len + FCS).max(MIN_FRAME) + PREAMBLE + IFG
}

/// How long a frame of `len` stored bytes holds a wire of `rate_bps`, gap included
/// (zero on a wire of no rate).
pub fn wire_time(len: usize, rate_bps: u64) -> Duration {
    if rate_bps == 0 {
        return Duration::ZERO;
    }
    Duration::for_bits(wire_bytes(len) as u64 * 8, rate_bps)
}

/// Bytes from the first preamble bit to the last FCS bit: what must arrive before
/// the receiver has the whole frame.
pub fn bytes_until_received(len: usize) -> usize {
    wire_bytes(len) - IFG
}

/// Ethernet payload bytes (everything after the 14-byte header) of a stored frame.
pub fn payload_bytes(len: usize) -> usize {
    len.saturating_sub(HEADER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn true_sizes_of_the_table_rows() {
        // The theoretical maximum table (Wadge, Malta 2001): "true size" counts preamble and gap; payload is true - 38.
        for (true_size, payload) in [(792, 754), (1048, 1010), (1536, 1498), (9096, 9058)] {
            let stored = true_size - PREAMBLE - IFG - FCS;
            assert_eq!(wire_bytes(stored), true_size);
            assert_eq!(true_size - OVERHEAD, payload);
        }
        assert_eq!(wire_bytes(10), 84);
        assert_eq!(wire_bytes(60), 84);
    }
}
