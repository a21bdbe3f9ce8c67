//! The `[[smart_host]]` table: a host with an intelligent adapter, as serde reads
//! it. docs/scenarios.md documents every key and default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::host_schema::BusSpec;
use crate::scenario::units::{BitRate, Frequency, TimeSpan};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmartSpec {
    /// Unique among all parts; no `:`.
    pub name: String,
    /// Applications own pinned buffers the adapter reads and writes (else data is copied through
    /// kernel buffers).
    #[serde(default)]
    pub zero_copy: bool,
    /// Receive buffers (64 KB each) the host keeps posted, 1 to 4096 (default 64).
    #[serde(default)]
    pub rx_buffers: Option<i64>,
    /// Buffers returned per doorbell (default 1).
    #[serde(default)]
    pub repost_batch: Option<i64>,
    /// The host processor and its costs.
    pub host: SmartHostSpec,
    /// The host bus, as `[host.bus]`.
    pub bus: BusSpec,
    /// The programmable adapter.
    pub adapter: SmartAdapterSpec,
    /// What the host (or the firmware) sends.
    #[serde(default)]
    pub send: Option<SendSpec>,
    /// What happens to received frames.
    #[serde(default)]
    pub receive: ReceiveSpec,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmartHostSpec {
    /// Host processor clock.
    pub clock: Frequency,
    /// Cycles per send call: system call, header template, descriptor (default 2000).
    pub send_call: Option<i64>,
    /// Cycles to build one frame in a buffer (default 500).
    pub frame_build: Option<i64>,
    /// Cycles to notice an event and act on it (default 200).
    pub event: Option<i64>,
    /// Cycles to take one filled receive buffer (default 300).
    pub rx_buffer: Option<i64>,
    /// Cycles of protocol work per received frame (default 1000).
    pub rx_frame: Option<i64>,
    /// Cycles per segment GRO merges (default 200).
    pub gro_segment: Option<i64>,
    /// Copy through kernel buffers, ns per byte (default 1.0).
    pub copy_ns_per_byte: Option<f64>,
}

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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmartAdapterSpec {
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

fn yes() -> bool {
    true
}

impl Default for ReceiveSpec {
    fn default() -> Self {
        ReceiveSpec { to_host: true, coalesce_frames: None, coalesce_timeout: None, lro_timeout: None, gro_timeout: None }
    }
}
