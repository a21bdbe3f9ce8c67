//! Checks a `[host.bus]` table (or an offload engine's private bus) and turns it
//! into a bus configuration; errors name the key path.

use crate::bus::pci::{PciConfig, PCIX_ATTRIBUTE_CLOCKS};
use crate::bus::pcie::{CompletionSplit, PcieConfig};
use crate::bus::BusConfig;
use crate::scenario::bus_schema::bus_default as D;
use crate::scenario::bus_schema::{BusKind, BusSpec};
use crate::scenario::checks::within;
use crate::scenario::units::{parse_frequency, parse_time};
use crate::scenario::ScenarioError;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

pub(crate) fn bus_config(b: &BusSpec, path: &str) -> Result<BusConfig, ScenarioError> {
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
        return err(format!("{path}.{key}"), format!("is not a {kind} setting"));
    }
    let fix = |r| ScenarioError::at_field(path, r);
    match b.kind {
        BusKind::Pci | BusKind::PciX => {
            let width = b.width.unwrap_or(D::WIDTH);
            if width != 32 && width != 64 {
                return err(format!("{path}.width"), format!("must be 32 or 64 bits, got {width}"));
            }
            let cfg = PciConfig {
                width: width as u64 / 8,
                clock: b.clock.unwrap_or_else(|| parse_frequency(D::CLOCK).expect("a frequency")).0,
                cache_line: within(format!("{path}.cache_line"), b.cache_line.unwrap_or(D::CACHE_LINE), 4, 4096)?,
                overhead_clocks: within(format!("{path}.overhead_clocks"), b.overhead_clocks.unwrap_or(D::OVERHEAD_CLOCKS), 0, 1000)?
                    + if b.kind == BusKind::PciX { PCIX_ATTRIBUTE_CLOCKS } else { 0 },
                read_latency_clocks: within(
                    format!("{path}.read_latency_clocks"),
                    b.read_latency_clocks.unwrap_or(D::READ_LATENCY_CLOCKS),
                    0,
                    100_000,
                )?,
                mwi: b.mwi.unwrap_or(D::MWI),
            };
            fix(cfg.check())?;
            Ok(BusConfig::Pci(cfg))
        }
        BusKind::Pcie => {
            let small = |key: &str, v: Option<i64>, d: i64| within(format!("{path}.{key}"), v.unwrap_or(d), 0, 1 << 20);
            let link = PcieConfig {
                generation: small("generation", b.generation, D::GENERATION)? as u8,
                lanes: small("lanes", b.lanes, D::LANES)?.min(255) as u8,
                mps: small("mps", b.mps, D::MPS)?,
                mrrs: small("mrrs", b.mrrs, D::MRRS)?,
                rcb: small("rcb", b.rcb, D::RCB)?,
                completion_split: CompletionSplit::Mps,
            };
            fix(link.check())?;
            let read_latency = b.read_latency.unwrap_or_else(|| parse_time(D::READ_LATENCY).expect("a time")).0;
            Ok(BusConfig::Pcie { link, read_latency })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overhead(text: &str) -> u64 {
        let spec: BusSpec = toml::from_str(text).expect("a bus table");
        match bus_config(&spec, "host[0].bus").expect("a valid bus") {
            BusConfig::Pci(p) => p.overhead_clocks,
            other => panic!("not a PCI bus: {other:?}"),
        }
    }

    #[test]
    fn a_pci_x_transaction_pays_its_attribute_phase() {
        assert_eq!(overhead("kind = \"pci\"\noverhead_clocks = 6"), 6);
        assert_eq!(overhead("kind = \"pci-x\"\noverhead_clocks = 6"), 7);
        let spec: BusSpec = toml::from_str("kind = \"pci-x\"\nlanes = 4").unwrap();
        assert_eq!(bus_config(&spec, "host[0].bus").unwrap_err().to_string(), "host[0].bus.lanes: is not a PCI setting");
    }
}
