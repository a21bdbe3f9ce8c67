//! A host's programmable adapter (`[host.adapter.programmable]`) and the
//! workload it runs (`[host.send]`), as serde reads them. docs/scenarios.md
//! documents every key and default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::nic::smart::config::{ChecksumAt, FirmwareCosts, Segmentation};
use crate::scenario::defaults::{one, sixty_four, yes};
use crate::scenario::units::{BitRate, Frequency, TimeSpan};
use crate::time::Duration;

/// A programmable adapter (`kind = "programmable"`): embedded processors and
/// memory running firmware; the host drives it through rings and doorbells and
/// polls its event ring.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgrammableSpec {
    /// Embedded processors; 0 sends, 1 receives.
    #[serde(default = "two")]
    pub processors: i64,
    /// Their clock.
    pub clock: Frequency,
    /// Adapter memory, bytes, at least 256 KB.
    #[serde(default = "one_megabyte")]
    pub memory: i64,
    /// The adapter memory port's bandwidth.
    pub memory_bandwidth: BitRate,
    /// Adapter memory for received frames (default: half of what is left after 192 KB).
    pub rx_memory: Option<i64>,
    /// Frames the MAC's transmit FIFO holds.
    #[serde(default = "two")]
    pub mac_tx_frames: i64,
    /// Each DMA transfer's start-up, in cycles of the adapter's clock: the
    /// engine's time from being programmed to its first data on the host bus
    /// (calibrated; the bus is free meanwhile).
    #[serde(default = "dma_startup")]
    pub dma_startup: i64,
    /// Where checksums are inserted and verified: "mac", "firmware" (not with direct
    /// segmentation), or "split" (the firmware sums headers and pseudo-header, the MAC
    /// the payload).
    #[serde(default)]
    pub checksum: ChecksumAt,
    /// "direct" (payload gathered from host memory) or "store-and-forward".
    #[serde(default)]
    pub segmentation: Segmentation,
    /// Firmware cycles of each operation.
    #[serde(default)]
    pub costs: FirmwareCosts,
    /// Receive buffers (64 KB each) the host keeps posted, 1 to 4096.
    #[serde(default = "sixty_four")]
    pub rx_buffers: i64,
    /// Buffers the host returns per doorbell.
    #[serde(default = "one")]
    pub repost_batch: i64,
    /// What happens to received frames.
    #[serde(default)]
    pub receive: ReceiveSpec,
}

/// The DMA start-up from the Malta calibration point (adapter to host,
/// 1512-byte transfers at 665.6 Mb/s at 88 MHz; docs/model.md shows the arithmetic).
pub const DMA_STARTUP_CALIBRATED: i64 = 470;
fn dma_startup() -> i64 {
    DMA_STARTUP_CALIBRATED
}

fn two() -> i64 {
    2
}
fn one_megabyte() -> i64 {
    1 << 20
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SendKind {
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

/// The defaults of send keys that apply to some kinds only: the checks apply
/// them and the schema shows them.
pub mod send_default {
    pub const OUTSTANDING: i64 = 2;
    pub const PER_CHUNK: i64 = 1;
    pub const LENGTH: i64 = 1512;
    /// DMA transfers when `count` is not given.
    pub const DMA_COUNT: u64 = 1000;
}

/// One table for every kind of send; a key that does not apply to `kind` is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendSpec {
    /// "frames", "generate" or "dma"; a key of another kind is an error. TCP
    /// comes from the host's own stack (`[host.ttcp]`), which hands the adapter
    /// large sends with their headers for segmentation.
    pub kind: SendKind,
    /// frames, generate: the receiving station.
    pub to: Option<String>,
    /// frames: sends in flight.
    #[schemars(extend("default" = send_default::OUTSTANDING))]
    pub outstanding: Option<i64>,
    /// frames, generate: bytes per frame, FCS included.
    pub frame_size: Option<i64>,
    /// frames: frames per chunk (more than 1 is fragmentation).
    #[schemars(extend("default" = send_default::PER_CHUNK))]
    pub per_chunk: Option<i64>,
    /// frames, generate: frames in all; dma: transfers (default: 1000 transfers; frames and
    /// generate run the whole run).
    pub count: Option<i64>,
    /// dma: "to-host" or "to-adapter".
    pub direction: Option<DmaDirection>,
    /// dma: bytes per transfer, up to 65536.
    #[schemars(extend("default" = send_default::LENGTH))]
    pub length: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiveSpec {
    /// Received frames go to the host (false: the firmware counts and drops them).
    #[serde(default = "yes")]
    pub to_host: bool,
    /// Packet coalescing, on when given: frames per buffer, 1 to 43.
    pub coalesce_frames: Option<i64>,
    /// Packet coalescing: how long a buffer may wait.
    #[serde(default = "hundred_us")]
    pub coalesce_timeout: TimeSpan,
    /// LRO in the firmware, with this timeout.
    pub lro_timeout: Option<TimeSpan>,
    /// GRO in the host driver, with this timeout.
    pub gro_timeout: Option<TimeSpan>,
    /// An XDP program the firmware runs on every received frame, on the
    /// receiving processor (offloaded XDP): its verdict drops the frame on
    /// the adapter, passes it on, or sends it back out of the adapter. Its
    /// `cycles` are the adapter processor's.
    #[schemars(with = "Option<crate::xdp::XdpKeys>")]
    pub xdp: Option<crate::xdp::Xdp>,
}

impl Default for ReceiveSpec {
    fn default() -> Self {
        ReceiveSpec {
            to_host: true,
            coalesce_frames: None,
            coalesce_timeout: hundred_us(),
            lro_timeout: None,
            gro_timeout: None,
            xdp: None,
        }
    }
}

fn hundred_us() -> TimeSpan {
    TimeSpan(Duration::from_us(100))
}
