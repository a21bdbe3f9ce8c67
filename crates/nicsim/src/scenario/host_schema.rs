//! The `[[host]]` and `[[peer]]` tables of a scenario, as serde reads them.
//! docs/scenarios.md documents every key and default.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::tcp_schema::{OffloadSpec, StackSpec, TtcpSpec};
use crate::scenario::units::{BitRate, Frequency, TimeSpan};

fn one() -> i64 {
    1
}
fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    #[serde(default = "one")]
    pub cpus: i64,
    pub clock: Frequency,
    #[serde(default)]
    pub serialized_stack: bool,
    #[serde(default)]
    pub warmup: Option<TimeSpan>,
    pub costs: CostsSpec,
    #[serde(default)]
    pub driver: DriverSpec,
    pub bus: BusSpec,
    #[serde(default = "one")]
    pub buses: i64,
    /// The host's adapters, in port order (`[[host.adapter]]`); one default
    /// adapter when none is given.
    #[serde(default = "one_adapter")]
    pub adapter: Vec<AdapterSpec>,
    #[serde(default)]
    pub file_request: Option<FileRequestSpec>,
    #[serde(default)]
    pub file_serve: Option<FileServeSpec>,
    /// A TTCP transfer, and its socket's settings.
    #[serde(default)]
    pub ttcp: Option<TtcpSpec>,
    #[serde(default)]
    pub tcp: StackSpec,
    #[serde(default)]
    pub background: Option<BackgroundSpec>,
    #[serde(default)]
    pub segments: Option<SegmentsSpec>,
    #[serde(default)]
    pub sink: bool,
    #[serde(default)]
    pub blast: Option<BlastSpec>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostsSpec {
    pub interrupt_entry: i64,
    pub interrupt_exit: i64,
    pub rx_frame: i64,
    pub protocol_segment: i64,
    pub tx_frame: i64,
    #[serde(default)]
    pub copy_ns_per_byte: f64,
    #[serde(default)]
    pub app_request: i64,
    #[serde(default)]
    pub poll: i64,
    #[serde(default)]
    pub media_frame: i64,
    #[serde(default)]
    pub rx_alloc: i64,
    #[serde(default)]
    pub alloc_stall: Option<TimeSpan>,
    /// Handling one completion or delivery message from a TCP offload engine.
    #[serde(default)]
    pub completion: i64,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ModeSpec {
    Handler,
    #[default]
    Napi,
    Poll,
    #[serde(rename = "os-poll")]
    OsPoll,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum BuffersSpec {
    #[default]
    Recycle,
    Reallocate,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverSpec {
    #[serde(default)]
    pub mode: ModeSpec,
    #[serde(default)]
    pub copy: bool,
    #[serde(default = "one")]
    pub refill_batch: i64,
    #[serde(default = "sixty_four")]
    pub budget: i64,
    #[serde(default = "one")]
    pub tx_tail_batch: i64,
    #[serde(default)]
    pub poll_cpu: i64,
    #[serde(default)]
    pub buffers: BuffersSpec,
    /// Merge consecutive in-order data segments of one connection, queued
    /// together for the protocol, into one pass (GRO).
    #[serde(default)]
    pub gro: bool,
}

impl Default for DriverSpec {
    fn default() -> Self {
        DriverSpec {
            mode: ModeSpec::Napi,
            copy: false,
            refill_batch: 1,
            budget: 64,
            tx_tail_batch: 1,
            poll_cpu: 0,
            buffers: BuffersSpec::Recycle,
            gro: false,
        }
    }
}

/// One switched segment of clients per adapter (`scenario::segments`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SegmentsSpec {
    pub clients: i64,
    pub rate: BitRate,
    #[serde(default = "one")]
    pub sessions: i64,
    #[serde(default)]
    pub think: Option<TimeSpan>,
    #[serde(default = "queue_frames")]
    pub queue_frames: i64,
    #[serde(default = "no_time")]
    pub latency: TimeSpan,
}

fn queue_frames() -> i64 {
    256
}
fn no_time() -> TimeSpan {
    TimeSpan(crate::time::Duration::ZERO)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSpec {
    pub processes: i64,
    pub slice: TimeSpan,
    #[serde(default)]
    pub cpu: i64,
}

fn sixty_four() -> i64 {
    64
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BusKind {
    Pci,
    Pcie,
}

/// One table for every bus kind; a key that does not apply to `kind` is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusSpec {
    pub kind: BusKind,
    // PCI / PCI-X
    pub width: Option<i64>,
    pub clock: Option<Frequency>,
    pub cache_line: Option<i64>,
    pub overhead_clocks: Option<i64>,
    pub read_latency_clocks: Option<i64>,
    pub mwi: Option<bool>,
    // PCIe
    pub generation: Option<i64>,
    pub lanes: Option<i64>,
    pub mps: Option<i64>,
    pub mrrs: Option<i64>,
    pub rcb: Option<i64>,
    pub read_latency: Option<TimeSpan>,
    pub tlps_per_ack: Option<i64>,
    pub tlps_per_fc_update: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum InterruptSpec {
    #[default]
    PerFrame,
    MinInterval,
    Coalesce,
    /// Polling with interrupt backup.
    Backup,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AdapterKindSpec {
    #[default]
    Ring,
    Toe,
}

fn one_adapter() -> Vec<AdapterSpec> {
    vec![AdapterSpec::default()]
}

impl HostSpec {
    /// How many adapters (ports) the host has, counting each entry's copies.
    pub fn adapter_count(&self) -> i64 {
        self.adapter.iter().map(|a| a.count.max(0)).sum()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdapterSpec {
    /// Copies of this adapter, each a port of its own.
    #[serde(default = "one")]
    pub count: i64,
    /// The peer bus it is on (all its copies); without it, port `i` is on bus `i % buses`.
    pub bus: Option<i64>,
    /// "ring": a bus-master adapter with descriptor rings; "toe": a TCP offload
    /// engine whose processor runs the host's TCP (settings in `toe`).
    #[serde(default)]
    pub kind: AdapterKindSpec,
    /// The offload engine's processor and host interface (with kind = "toe").
    #[serde(default)]
    pub toe: Option<OffloadSpec>,
    pub rx_fifo: Option<i64>,
    pub tx_fifo: Option<i64>,
    pub rx_dma_threshold: Option<i64>,
    pub rx_ring: Option<i64>,
    pub tx_ring: Option<i64>,
    pub rx_desc_cache: Option<i64>,
    pub rx_desc_fetch: Option<i64>,
    pub tx_desc_fetch: Option<i64>,
    pub rx_writeback: Option<i64>,
    pub tx_writeback: Option<i64>,
    pub status_wait_clocks: Option<i64>,
    #[serde(default)]
    pub strip_crc: bool,
    #[serde(default)]
    pub interrupt: InterruptSpec,
    pub interrupt_interval: Option<TimeSpan>,
    pub coalesce_frames: Option<i64>,
    pub coalesce_time: Option<TimeSpan>,
    pub backup_timeout: Option<TimeSpan>,
    pub backup_low_buffers: Option<i64>,
    pub rx_writeback_delay: Option<TimeSpan>,
    /// Only in-order TCP data of one connection waits for a write-back group;
    /// any other frame is written back at once.
    #[serde(default)]
    pub rx_writeback_data_only: bool,
    /// An intelligent adapter: its processor does the per-frame media work.
    #[serde(default)]
    pub intelligent: bool,
    /// The processor's clock and per-frame cycles (used when `intelligent`).
    pub processor_clock: Option<Frequency>,
    pub processor_frame_cycles: Option<i64>,
    /// Segmentation offload: the host's transmit work is once per send.
    #[serde(default)]
    pub tso: bool,
}

impl Default for AdapterSpec {
    fn default() -> Self {
        toml::from_str("").expect("every adapter key has a default")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileRequestSpec {
    pub peers: Vec<String>,
    #[serde(default = "one")]
    pub sessions: i64,
    #[serde(default = "request_bytes")]
    pub request_bytes: i64,
    #[serde(default = "file_bytes")]
    pub file_bytes: i64,
    #[serde(default = "window")]
    pub window: i64,
    #[serde(default = "delayed_ack")]
    pub delayed_ack: TimeSpan,
}

/// Serve blocks to the peers whose `read_from` names this host.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileServeSpec {
    #[serde(default = "serve_port")]
    pub port: i64,
    #[serde(default = "request_bytes")]
    pub request_bytes: i64,
    #[serde(default = "read_bytes")]
    pub read_bytes: i64,
    #[serde(default = "window")]
    pub window: i64,
    #[serde(default = "delayed_ack")]
    pub delayed_ack: TimeSpan,
}

fn serve_port() -> i64 {
    524
}
fn read_bytes() -> i64 {
    65_536
}

fn request_bytes() -> i64 {
    64
}
fn file_bytes() -> i64 {
    100_000
}
fn window() -> i64 {
    65_535
}
fn delayed_ack() -> TimeSpan {
    TimeSpan(crate::time::Duration::from_ms(200))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlastSpec {
    /// The sink the frames are addressed to.
    pub to: String,
    pub frame_size: i64,
    #[serde(default)]
    pub cpu: i64,
    #[serde(default = "one")]
    pub burst: i64,
    #[serde(default = "yes")]
    pub udp: bool,
    /// Frames to send in all; without it, for the whole run.
    #[serde(default)]
    pub count: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PeerSpec {
    pub name: String,
    /// A client: the host whose `file_serve` it reads blocks from.
    #[serde(default)]
    pub read_from: Option<String>,
    #[serde(default = "one")]
    pub sessions: i64,
    /// Time between a block's last byte and the next request.
    #[serde(default)]
    pub think: Option<TimeSpan>,
}
