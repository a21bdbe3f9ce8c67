//! The workload a host runs through its programmable adapter (`[host.send]`),
//! as serde reads it; the adapter's own table is the adapter's
//! (`nic::smart::settings`). docs/scenarios.md documents every key and default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
