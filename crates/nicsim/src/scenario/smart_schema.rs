//! A host's programmable adapter (`[host.adapter.programmable]`) and the
//! workload it runs (`[host.send]`), as serde reads them. docs/scenarios.md
//! documents every key and default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::host_schema::yes;
use crate::scenario::units::{BitRate, Frequency, TimeSpan};

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksumSpec {
    #[default]
    Mac,
    Firmware,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentationSpec {
    #[default]
    Direct,
    StoreAndForward,
}

/// A programmable adapter (`kind = "programmable"`): embedded processors and
/// memory running firmware; the host drives it through rings and doorbells and
/// polls its event ring.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgrammableSpec {
    /// Embedded processors; 0 sends, 1 receives (default 2).
    pub processors: Option<i64>,
    /// Their clock.
    pub clock: Frequency,
    /// Adapter memory, bytes, at least 256 KB (default 1 MB).
    pub memory: Option<i64>,
    /// The adapter memory port's bandwidth.
    pub memory_bandwidth: BitRate,
    /// Adapter memory for received frames (default: half of what is left after 192 KB).
    pub rx_memory: Option<i64>,
    /// Frames the MAC's transmit FIFO holds (default 2).
    pub mac_tx_frames: Option<i64>,
    /// Where checksums are inserted and verified: "mac" or "firmware" (not with direct
    /// segmentation).
    #[serde(default)]
    pub checksum: ChecksumSpec,
    /// "direct" (payload gathered from host memory) or "store-and-forward".
    #[serde(default)]
    pub segmentation: SegmentationSpec,
    /// Firmware cycles of each operation.
    #[serde(default)]
    pub costs: FirmwareCostsSpec,
    /// Receive buffers (64 KB each) the host keeps posted, 1 to 4096 (default 64).
    #[serde(default)]
    pub rx_buffers: Option<i64>,
    /// Buffers the host returns per doorbell (default 1).
    #[serde(default)]
    pub repost_batch: Option<i64>,
    /// What happens to received frames.
    #[serde(default)]
    pub receive: ReceiveSpec,
}

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct FirmwareCostsSpec {
    /// Notice a doorbell and read its mailbox (default 100).
    pub doorbell: Option<i64>,
    /// Program one DMA transfer and take its completion (default 570, calibrated).
    pub dma_setup: Option<i64>,
    /// Hand one whole frame to the MAC (default 200).
    pub tx_frame: Option<i64>,
    /// Take one received frame from the MAC and classify it (default 300).
    pub rx_frame: Option<i64>,
    /// Form one segment's headers from a template (default 150).
    pub segment: Option<i64>,
    /// Checksumming in firmware, per byte (default 1.0).
    pub checksum_per_byte: Option<f64>,
    /// Make one frame in adapter memory (default 100).
    pub generate: Option<i64>,
    /// Find the next frame in a fragmentation chunk (default 50).
    pub split: Option<i64>,
    /// Append a received frame to a coalescing buffer (default 100).
    pub coalesce: Option<i64>,
    /// Run one segment through LRO (default 150).
    pub lro: Option<i64>,
    /// Post one event to the host's event ring (default 50).
    pub event: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SendKind {
    Tcp,
    Frames,
    Generate,
    Dma,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DmaDirection {
    ToHost,
    ToAdapter,
}

/// One table for every kind of send; a key that does not apply to `kind` is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendSpec {
    /// "tcp", "frames", "generate" or "dma"; a key of another kind is an error.
    pub kind: SendKind,
    /// tcp, frames, generate: the receiving station.
    pub to: Option<String>,
    /// tcp: bytes in all (default 1 MB).
    pub bytes: Option<i64>,
    /// tcp: bytes per send, up to 16 MB (default 65536).
    pub message: Option<i64>,
    /// tcp, frames: sends in flight (default 2).
    pub outstanding: Option<i64>,
    /// frames, generate: bytes per frame, FCS included.
    pub frame_size: Option<i64>,
    /// frames: frames per chunk (more than 1 is fragmentation; default 1).
    pub per_chunk: Option<i64>,
    /// frames, generate: frames in all; dma: transfers (default 1000). Without it frames run all
    /// the run.
    pub count: Option<i64>,
    /// dma: "to-host" or "to-adapter".
    pub direction: Option<DmaDirection>,
    /// dma: bytes per transfer, up to 65536 (default 1512).
    pub length: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiveSpec {
    /// Received frames go to the host (false: the firmware counts and drops them).
    #[serde(default = "yes")]
    pub to_host: bool,
    /// Packet coalescing: frames per buffer, 1 to 43.
    pub coalesce_frames: Option<i64>,
    /// Packet coalescing: how long a buffer may wait (default "100us").
    pub coalesce_timeout: Option<TimeSpan>,
    /// LRO in the firmware, with this timeout.
    pub lro_timeout: Option<TimeSpan>,
    /// GRO in the host driver, with this timeout.
    pub gro_timeout: Option<TimeSpan>,
}

impl Default for ReceiveSpec {
    fn default() -> Self {
        ReceiveSpec { to_host: true, coalesce_frames: None, coalesce_timeout: None, lro_timeout: None, gro_timeout: None }
    }
}
