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

/// A send descriptor: buffer address, length, and the length of the template behind it.
pub fn descriptor(addr: u64, len: u32, extra: u32) -> [u8; 16] {
    let mut d = [0u8; 16];
    d[..8].copy_from_slice(&addr.to_le_bytes());
    d[8..12].copy_from_slice(&len.to_le_bytes());
    d[12..16].copy_from_slice(&extra.to_le_bytes());
    d
}

pub fn parse_descriptor(d: &[u8]) -> (u64, u32, u32) {
    let word = |r: std::ops::Range<usize>| u32::from_le_bytes(d[r].try_into().expect("4 bytes"));
    (u64::from_le_bytes(d[..8].try_into().expect("8 bytes")), word(8..12), word(12..16))
}

/// A filled receive buffer's event: its length, the frames in it (more than
/// one when coalesced) and the wire frames they stand for (more when merged).
pub fn rx_event(len: u32, frames: u32, segments: u32) -> [u8; 16] {
    let mut e = [0u8; 16];
    e[..4].copy_from_slice(&len.to_le_bytes());
    e[4..8].copy_from_slice(&frames.to_le_bytes());
    e[8..12].copy_from_slice(&segments.to_le_bytes());
    e
}

/// What `rx_event` wrote: length, frames, wire frames.
pub fn parse_rx_event(e: &[u8]) -> (usize, u32, u32) {
    let word = |r: std::ops::Range<usize>| u32::from_le_bytes(e[r].try_into().expect("4 bytes"));
    (word(0..4) as usize, word(4..8), word(8..12))
}
