//! A bus's settings (`[host.bus]`, and an offload engine's private bus): the
//! table as serde reads it, and its check into a `BusConfig`, whose errors name
//! the key. docs/scenario-keys.md lists every key with its default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bus::pci::{PciConfig, PCIX_ATTRIBUTE_CLOCKS};
use crate::bus::pcie::{CompletionSplit, PcieConfig};
use crate::bus::BusConfig;
use crate::settings::within;
use crate::units::{parse_frequency, parse_time, Frequency, TimeSpan};

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

impl BusSpec {
    /// The bus this table describes; an error says "key: what is wrong".
    pub fn config(&self) -> Result<BusConfig, String> {
        use bus_default as D;
        let b = self;
        let pci_keys = [("width", b.width.is_some()), ("clock", b.clock.is_some()), ("cache_line", b.cache_line.is_some())];
        let pci_keys = pci_keys.into_iter().chain([
            ("overhead_clocks", b.overhead_clocks.is_some()),
            ("read_latency_clocks", b.read_latency_clocks.is_some()),
            ("mwi", b.mwi.is_some()),
        ]);
        let pcie_keys =
            [("generation", b.generation.is_some()), ("lanes", b.lanes.is_some()), ("mps", b.mps.is_some()), ("mrrs", b.mrrs.is_some())];
        let pcie_keys = pcie_keys.into_iter().chain([("rcb", b.rcb.is_some()), ("read_latency", b.read_latency.is_some())]);
        let (foreign, kind): (Vec<_>, _) = match b.kind {
            BusKind::Pci | BusKind::PciX => (pcie_keys.collect(), "PCI"),
            BusKind::Pcie => (pci_keys.collect(), "PCIe"),
        };
        if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
            return Err(format!("{key}: is not a {kind} setting"));
        }
        match b.kind {
            BusKind::Pci | BusKind::PciX => {
                let width = b.width.unwrap_or(D::WIDTH);
                if width != 32 && width != 64 {
                    return Err(format!("width: must be 32 or 64 bits, got {width}"));
                }
                let cfg = PciConfig {
                    width: width as u64 / 8,
                    clock: b.clock.unwrap_or_else(|| parse_frequency(D::CLOCK).expect("a frequency")).0,
                    cache_line: within("cache_line", b.cache_line.unwrap_or(D::CACHE_LINE), 4, 4096)?,
                    overhead_clocks: within("overhead_clocks", b.overhead_clocks.unwrap_or(D::OVERHEAD_CLOCKS), 0, 1000)?
                        + if b.kind == BusKind::PciX { PCIX_ATTRIBUTE_CLOCKS } else { 0 },
                    read_latency_clocks: within(
                        "read_latency_clocks",
                        b.read_latency_clocks.unwrap_or(D::READ_LATENCY_CLOCKS),
                        0,
                        100_000,
                    )?,
                    mwi: b.mwi.unwrap_or(D::MWI),
                };
                cfg.check()?;
                Ok(BusConfig::Pci(cfg))
            }
            BusKind::Pcie => {
                let small = |key: &str, v: Option<i64>, d: i64| within(key, v.unwrap_or(d), 0, 1 << 20);
                let link = PcieConfig {
                    generation: small("generation", b.generation, D::GENERATION)? as u8,
                    lanes: small("lanes", b.lanes, D::LANES)?.min(255) as u8,
                    mps: small("mps", b.mps, D::MPS)?,
                    mrrs: small("mrrs", b.mrrs, D::MRRS)?,
                    rcb: small("rcb", b.rcb, D::RCB)?,
                    completion_split: CompletionSplit::Mps,
                };
                link.check()?;
                let read_latency = b.read_latency.unwrap_or_else(|| parse_time(D::READ_LATENCY).expect("a time")).0;
                Ok(BusConfig::Pcie { link, read_latency })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overhead(text: &str) -> u64 {
        let spec: BusSpec = toml::from_str(text).expect("a bus table");
        match spec.config().expect("a valid bus") {
            BusConfig::Pci(p) => p.overhead_clocks,
            other => panic!("not a PCI bus: {other:?}"),
        }
    }

    #[test]
    fn a_pci_x_transaction_pays_its_attribute_phase() {
        assert_eq!(overhead("kind = \"pci\"\noverhead_clocks = 6"), 6);
        assert_eq!(overhead("kind = \"pci-x\"\noverhead_clocks = 6"), 7);
        let spec: BusSpec = toml::from_str("kind = \"pci-x\"\nlanes = 4").unwrap();
        assert_eq!(spec.config().unwrap_err(), "lanes: is not a PCI setting");
    }

    #[test]
    fn a_value_out_of_range_names_its_key() {
        let spec: BusSpec = toml::from_str("kind = \"pcie\"\nlanes = 3").unwrap();
        assert_eq!(spec.config().unwrap_err(), "lanes: must be 1, 2, 4, 8, 16 or 32, got 3");
        let spec: BusSpec = toml::from_str("kind = \"pci\"\nwidth = 16").unwrap();
        assert_eq!(spec.config().unwrap_err(), "width: must be 32 or 64 bits, got 16");
    }
}
