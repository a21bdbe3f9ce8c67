//! A frame in flight: its bytes, with the model's metadata kept beside them.

use crate::time::Time;

/// Facts about a frame that are not in its bytes (offload flags, timestamps later).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameMeta {
    /// When the source made it, for latency.
    pub created: Time,
    /// Which source flow it belongs to (index assigned at assembly).
    pub flow: u32,
    /// Its number within the flow, from zero.
    pub seq: u64,
    /// A TCP send larger than a segment: the segment size the adapter (or the
    /// driver, in software) cuts its data into; a segment GRO merged: the
    /// size of the segments it was merged from. 0: a frame as it is.
    pub gso: u16,
    /// When its last bit reached the adapter that received it (for the
    /// host's receive latency).
    pub arrived: Time,
    /// The receiving host's count of frame bytes its devices had written to
    /// its memory once this frame's were in (`mem::DmaCount`): DDIO's eviction
    /// test.
    pub dma_mark: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// From the destination MAC to the end of the (padded) payload; no FCS.
    pub bytes: Vec<u8>,
    pub meta: FrameMeta,
}

impl Frame {
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    /// The destination MAC, if the frame is long enough to have one.
    pub fn destination(&self) -> Option<[u8; 6]> {
        self.bytes.get(..6)?.try_into().ok()
    }
    /// The source MAC, if the frame is long enough to have one.
    pub fn source(&self) -> Option<[u8; 6]> {
        self.bytes.get(6..12)?.try_into().ok()
    }
}
