//! Where things live in bus address space: host memory regions the driver and
//! applications use, and adapter memory regions the firmware uses (above
//! `ADAPTER_BASE`, where the bridge claims them).

use crate::nic::smart::hw::ADAPTER_BASE;

/// Send descriptors: a 16-byte descriptor then the header template.
pub const SEND_RING: u64 = 0x1000_0000;
pub const SEND_SLOT: u64 = 128;
pub const SEND_SLOTS: u64 = 64;
/// 16-byte completion events the adapter writes and the host polls: sends'
/// first, then receive buffers' (`rx_event`).
pub const EVENT_RING: u64 = 0x2000_0000;
pub const EVENT_SLOTS: u64 = 4096;
pub const RX_EVENTS: u64 = EVENT_RING + EVENT_SLOTS * 16;
/// Host buffers of what the host hands the adapter: a chunk of frames, a frame of its stack.
pub const APP: u64 = 1 << 36;
/// Receive buffers of 64 KB, each in a 128 KB slot (an LRO segment may pass 64 KB
/// by its Ethernet header).
pub const RX_BUFFERS: u64 = 1 << 40;
pub const RX_BUFFER: u64 = 65_536;
pub const RX_SLOT: u64 = 2 * RX_BUFFER;

/// Adapter memory: fetched descriptors, formed headers, transmit staging.
pub const A_DESC: u64 = ADAPTER_BASE;
pub const A_HEADERS: u64 = ADAPTER_BASE + 16 * 1024;
pub const A_HEADER_SLOTS: u64 = 128;
pub const A_STAGING: u64 = ADAPTER_BASE + 64 * 1024;
/// Two halves, so one fills while the other is sent from.
pub const STAGING_HALF: u64 = 64 * 1024;
/// Adapter memory below this is the firmware's own; receive space starts here.
pub const A_RESERVED: u64 = 192 * 1024;

/// A send descriptor's flag for a large send of the host's stack: segment the
/// buffer's data behind the template (its length in bits 0..8) at the segment
/// size in bits 8..24.
pub const SEGMENT: u32 = 1 << 31;
/// A send descriptor's flag for a chunk: the buffer holds several frames, each
/// behind its length (`nic::firmware::chunk`), for one DMA (packet
/// fragmentation); their count in the low bits.
pub const CHUNK: u32 = 1 << 30;

/// A 16-byte entry (a descriptor or an event) of little-endian 32-bit words.
fn entry(words: [u32; 4]) -> [u8; 16] {
    let mut e = [0u8; 16];
    for (i, w) in words.iter().enumerate() {
        e[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    e
}

/// Word `i` of an entry.
fn word(e: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(e[4 * i..4 * i + 4].try_into().expect("4 bytes"))
}

/// A send descriptor: buffer address, length, and what the buffer holds (a
/// frame, a chunk of them, or a large send and its template: `extra`).
pub fn descriptor(addr: u64, len: u32, extra: u32) -> [u8; 16] {
    entry([addr as u32, (addr >> 32) as u32, len, extra])
}

pub fn parse_descriptor(d: &[u8]) -> (u64, u32, u32) {
    (word(d, 0) as u64 | (word(d, 1) as u64) << 32, word(d, 2), word(d, 3))
}

/// A filled receive buffer's event: its length, the frames in it (more than
/// one when coalesced) and the wire frames they stand for (more when merged).
pub fn rx_event(len: u32, frames: u32, segments: u32) -> [u8; 16] {
    entry([len, frames, segments, 0])
}

/// What `rx_event` wrote: length, frames, wire frames.
pub fn parse_rx_event(e: &[u8]) -> (usize, u32, u32) {
    (word(e, 0) as usize, word(e, 1), word(e, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_what_was_written() {
        let addr = APP + 3 * 65_536 + 7;
        assert_eq!(parse_descriptor(&descriptor(addr, 1514, SEGMENT | 1460 << 8 | 54)), (addr, 1514, SEGMENT | 1460 << 8 | 54));
        assert_eq!(&descriptor(addr, 1, 2)[..8], &addr.to_le_bytes(), "the address as one little-endian word of 64 bits");
        assert_eq!(parse_rx_event(&rx_event(62_000, 42, 44)), (62_000, 42, 44));
    }
}
