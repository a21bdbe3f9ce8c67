//! A host's bus (`[host.bus]`, and an offload engine's private bus), as serde
//! reads it. docs/scenario-keys.md lists every key with its default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::units::TimeSpan;
use crate::units::Frequency;

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BusKind {
    Pci,
    /// PCI-X: PCI's timing plus the attribute phase in every transaction.
    #[serde(rename = "pci-x")]
    PciX,
    Pcie,
}

/// One table for every bus kind; a key that does not apply to `kind` is an error.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusSpec {
    /// "pci", "pci-x" (PCI's keys; each transaction one clock longer, its attribute phase) or "pcie"; a key of another kind is an error.
    pub kind: BusKind,
    // PCI / PCI-X
    /// PCI: data width in bits, 32 or 64.
    #[schemars(extend("default" = bus_default::WIDTH))]
    pub width: Option<i64>,
    /// PCI: bus clock.
    #[schemars(extend("default" = bus_default::CLOCK))]
    pub clock: Option<Frequency>,
    /// PCI: the host's cache line, bytes.
    #[schemars(extend("default" = bus_default::CACHE_LINE))]
    pub cache_line: Option<i64>,
    /// PCI: clocks of address phase and turnaround per transaction.
    #[schemars(extend("default" = bus_default::OVERHEAD_CLOCKS))]
    pub overhead_clocks: Option<i64>,
    /// PCI: clocks before a read's first data.
    #[schemars(extend("default" = bus_default::READ_LATENCY_CLOCKS))]
    pub read_latency_clocks: Option<i64>,
    /// PCI: memory write and invalidate for whole lines.
    #[schemars(extend("default" = bus_default::MWI))]
    pub mwi: Option<bool>,
    // PCIe
    /// PCIe: generation 1 to 5.
    #[schemars(extend("default" = bus_default::GENERATION))]
    pub generation: Option<i64>,
    /// PCIe: lanes.
    #[schemars(extend("default" = bus_default::LANES))]
    pub lanes: Option<i64>,
    /// PCIe: maximum payload size, bytes.
    #[schemars(extend("default" = bus_default::MPS))]
    pub mps: Option<i64>,
    /// PCIe: maximum read request size, bytes.
    #[schemars(extend("default" = bus_default::MRRS))]
    pub mrrs: Option<i64>,
    /// PCIe: read completion boundary, bytes.
    #[schemars(extend("default" = bus_default::RCB))]
    pub rcb: Option<i64>,
    /// PCIe: from a read request to its first completion.
    #[schemars(extend("default" = bus_default::READ_LATENCY))]
    pub read_latency: Option<TimeSpan>,
}

/// The defaults of the bus keys, each of one kind only: the checks apply them
/// and the schema shows them (docs/model.md gives their sources).
pub mod bus_default {
    pub const WIDTH: i64 = 64;
    pub const CLOCK: &str = "33MHz";
    pub const CACHE_LINE: i64 = 32;
    pub const OVERHEAD_CLOCKS: i64 = 6;
    pub const READ_LATENCY_CLOCKS: i64 = 10;
    pub const MWI: bool = true;
    pub const GENERATION: i64 = 3;
    pub const LANES: i64 = 8;
    pub const MPS: i64 = 256;
    pub const MRRS: i64 = 512;
    pub const RCB: i64 = 64;
    pub const READ_LATENCY: &str = "500ns";
}
