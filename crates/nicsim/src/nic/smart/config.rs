//! What a scenario sets on a host with an intelligent adapter: the adapter's
//! processors, memory and firmware modules, the host's costs, and the workload.
//! docs/model.md gives each cost's source.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::nic::firmware::coalesce::CoalesceConfig;
use crate::time::{Clock, Duration};
use crate::units::{cycles, per_byte};
use crate::wire::endpoint::Addr;

/// Embedded-processor costs of firmware operations, in adapter cycles
/// (`[host.adapter.programmable.costs]`); a key left out takes its assumed
/// default (docs/model.md gives each one's source).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FirmwareCosts {
    /// Notice a doorbell (or a host buffer post) and read its mailbox.
    #[serde(deserialize_with = "cycles")]
    pub doorbell: u64,
    /// Program one DMA transfer and take its completion.
    #[serde(deserialize_with = "cycles")]
    pub dma_setup: u64,
    /// Hand one whole frame to the MAC (standard send).
    #[serde(deserialize_with = "cycles")]
    pub tx_frame: u64,
    /// Take one received frame from the MAC and classify it.
    #[serde(deserialize_with = "cycles")]
    pub rx_frame: u64,
    /// Form one segment's headers from a template.
    #[serde(deserialize_with = "cycles")]
    pub segment: u64,
    /// Checksumming in firmware, cycles per byte (unused when the MAC sums).
    #[serde(deserialize_with = "per_byte")]
    pub checksum_per_byte: f64,
    /// Make one frame in adapter memory (adapter-to-adapter tests).
    #[serde(deserialize_with = "cycles")]
    pub generate: u64,
    /// Find the next frame in a fragmentation chunk.
    #[serde(deserialize_with = "cycles")]
    pub split: u64,
    /// Append a received frame to a coalescing buffer.
    #[serde(deserialize_with = "cycles")]
    pub coalesce: u64,
    /// Run one segment through LRO.
    #[serde(deserialize_with = "cycles")]
    pub lro: u64,
    /// Post one event to the host's event ring.
    #[serde(deserialize_with = "cycles")]
    pub event: u64,
}

/// The firmware costs a scenario leaves out (assumed; docs/model.md).
impl Default for FirmwareCosts {
    fn default() -> Self {
        FirmwareCosts {
            doorbell: 100,
            dma_setup: 100,
            tx_frame: 200,
            rx_frame: 300,
            segment: 150,
            checksum_per_byte: 1.0,
            generate: 100,
            split: 50,
            coalesce: 100,
            lro: 150,
            event: 50,
        }
    }
}

/// Where checksums are computed and verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksumAt {
    /// On the fly as the MAC moves the bytes: no processor time.
    #[default]
    Mac,
    /// By the firmware, reading the bytes from adapter memory.
    Firmware,
    /// Shared: the firmware sums the headers and the pseudo-header, the MAC the
    /// payload as it passes, and the two sums make the checksum (the patent's
    /// claims 5 and 15). Works with direct segmentation.
    Split,
}

impl ChecksumAt {
    /// Bytes of a frame of `len` with `headers` bytes of headers that the
    /// firmware sums itself: all of them, the headers and the 12-byte
    /// pseudo-header, or none.
    pub fn firmware_bytes(self, len: usize, headers: usize) -> usize {
        match self {
            ChecksumAt::Mac => 0,
            ChecksumAt::Firmware => len,
            ChecksumAt::Split => headers.min(len) + PSEUDO_HEADER,
        }
    }
}

/// The IPv4 pseudo-header that TCP and UDP checksums cover.
const PSEUDO_HEADER: usize = 12;

/// How a large send is cut into frames (the direct segmentation of US patent application 10/082,893, or store and forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Segmentation {
    /// Headers in adapter memory, payload gathered straight from host memory.
    #[default]
    Direct,
    /// Payload copied into adapter memory first, frames sent from there.
    StoreAndForward,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AdapterConfig {
    pub processors: u32,
    pub clock: Clock,
    pub memory_bytes: u64,
    /// Adapter memory port bandwidth, bytes per second.
    pub memory_bytes_per_s: u64,
    /// Adapter memory set aside for received frames waiting for the host.
    pub rx_memory_bytes: u64,
    /// Frames the MAC's transmit FIFO holds: how far gathers may run ahead of the wire.
    pub mac_tx_frames: u32,
    /// Each DMA transfer's start-up on its engine, before its data moves, in
    /// cycles of `clock`.
    pub dma_startup: u64,
    pub link_rate_bps: u64,
    pub mtu: u32,
    pub costs: FirmwareCosts,
    pub checksum: ChecksumAt,
    pub segmentation: Segmentation,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostSide {
    /// The host's clock, for the report's cycles per byte. The host prices
    /// the work its driver's steps do with its own costs.
    pub clock: Clock,
    /// Applications own pinned buffers the adapter reads and writes (mechanism
    /// 12); otherwise data is copied between them and kernel buffers.
    pub zero_copy: bool,
    /// Receive buffers the host keeps posted, and how many it returns per doorbell.
    pub rx_buffers: u32,
    pub repost_batch: u32,
}

/// What the adapter's firmware does of its own, besides receiving whatever
/// arrives and sending what the host posts.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    Idle,
    /// Frames made by the firmware itself, no host involved.
    Generate {
        from: Addr,
        to: Addr,
        frame_size: u32,
        count: Option<u64>,
    },
    /// A firmware loop of DMA transfers of `length` bytes, one way.
    Dma {
        to_host: bool,
        length: u32,
        count: u64,
    },
}

/// What happens to received frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Receive {
    /// Move frames to the host; otherwise the firmware counts and drops them.
    pub to_host: bool,
    pub coalesce: Option<CoalesceConfig>,
    /// LRO in the firmware, or GRO in the host driver, with the flush timeout.
    pub lro: Option<Duration>,
    pub gro: Option<Duration>,
    /// Offloaded XDP: the program the receiving processor runs on each frame.
    pub xdp: Option<crate::xdp::Xdp>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SmartConfig {
    pub host: HostSide,
    pub adapter: AdapterConfig,
    pub workload: Workload,
    pub receive: Receive,
}
