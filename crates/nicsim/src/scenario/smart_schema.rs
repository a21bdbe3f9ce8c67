//! The `[[smart_host]]` table: a host with an intelligent adapter, as serde reads
//! it. docs/scenarios.md documents every key and default.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::host_schema::BusSpec;
use crate::scenario::units::{BitRate, Frequency, TimeSpan};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmartSpec {
    pub name: String,
    #[serde(default)]
    pub zero_copy: bool,
    #[serde(default)]
    pub rx_buffers: Option<i64>,
    #[serde(default)]
    pub repost_batch: Option<i64>,
    pub host: SmartHostSpec,
    pub bus: BusSpec,
    pub adapter: SmartAdapterSpec,
    #[serde(default)]
    pub send: Option<SendSpec>,
    #[serde(default)]
    pub receive: ReceiveSpec,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmartHostSpec {
    pub clock: Frequency,
    pub send_call: Option<i64>,
    pub frame_build: Option<i64>,
    pub event: Option<i64>,
    pub rx_buffer: Option<i64>,
    pub rx_frame: Option<i64>,
    pub gro_segment: Option<i64>,
    pub copy_ns_per_byte: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksumSpec {
    #[default]
    Mac,
    Firmware,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentationSpec {
    #[default]
    Direct,
    StoreAndForward,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmartAdapterSpec {
    pub processors: Option<i64>,
    pub clock: Frequency,
    pub memory: Option<i64>,
    pub memory_bandwidth: BitRate,
    pub rx_memory: Option<i64>,
    pub mac_tx_frames: Option<i64>,
    #[serde(default)]
    pub checksum: ChecksumSpec,
    #[serde(default)]
    pub segmentation: SegmentationSpec,
    #[serde(default)]
    pub costs: FirmwareCostsSpec,
}

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct FirmwareCostsSpec {
    pub doorbell: Option<i64>,
    pub dma_setup: Option<i64>,
    pub tx_frame: Option<i64>,
    pub rx_frame: Option<i64>,
    pub segment: Option<i64>,
    pub checksum_per_byte: Option<f64>,
    pub generate: Option<i64>,
    pub split: Option<i64>,
    pub coalesce: Option<i64>,
    pub lro: Option<i64>,
    pub event: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SendKind {
    Tcp,
    Frames,
    Generate,
    Dma,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DmaDirection {
    ToHost,
    ToAdapter,
}

/// One table for every kind of send; a key that does not apply to `kind` is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendSpec {
    pub kind: SendKind,
    pub to: Option<String>,
    pub bytes: Option<i64>,
    pub message: Option<i64>,
    pub outstanding: Option<i64>,
    pub frame_size: Option<i64>,
    pub per_chunk: Option<i64>,
    pub count: Option<i64>,
    pub direction: Option<DmaDirection>,
    pub length: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiveSpec {
    #[serde(default = "yes")]
    pub to_host: bool,
    pub coalesce_frames: Option<i64>,
    pub coalesce_timeout: Option<TimeSpan>,
    pub lro_timeout: Option<TimeSpan>,
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
