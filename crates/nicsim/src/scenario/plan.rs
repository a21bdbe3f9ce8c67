//! What checking a scenario gives: its parts, each configured, the wires between
//! them, and the stations' addresses.

use crate::engine::PortId;
use crate::host::config::HostConfig;
use crate::host::ideal::IdealConfig;
use crate::link::{Impairment, LinkConfig, SourceConfig, SwitchConfig, TapConfig};
use crate::scenario::schema::Scenario;
use crate::time::Duration;

/// An EtherType reserved for local experiments (IEEE 802), for raw frames.
pub const RAW_ETHER_TYPE: u16 = 0x88b5;

/// A TAP bridge to open when the scenario is assembled (`tap_validate`).
#[derive(Clone)]
pub struct TapPlan {
    pub cfg: TapConfig,
    pub idle: std::time::Duration,
}

pub enum PartPlan {
    Source(SourceConfig),
    /// Its station (MAC, IPv4), and whether it announces itself.
    Sink([u8; 6], [u8; 4], bool),
    Ideal(IdealConfig),
    Host(Box<HostConfig>),
    Tap(TapPlan),
    Switch(SwitchConfig),
    Link(LinkConfig, Option<Impairment>),
}

pub struct Part {
    pub name: String,
    pub plan: PartPlan,
}

/// A checked scenario: its parts and the wires between their ports.
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub duration: Option<Duration>,
    pub parts: Vec<Part>,
    pub wires: Vec<((usize, PortId), (usize, PortId))>,
}

/// Station addresses from a station's number (from 1): locally administered MACs,
/// and the benchmarking ranges 198.18.0.0/15 (RFC 2544) and 2001:2::/48 (RFC 5180).
pub struct Station {
    pub mac: [u8; 6],
    pub ipv4: [u8; 4],
    pub ipv6: [u8; 16],
}

impl Station {
    pub fn numbered(n: u16) -> Station {
        let [hi, lo] = n.to_be_bytes();
        let mut ipv6 = [0u8; 16];
        ipv6[..4].copy_from_slice(&[0x20, 0x01, 0x00, 0x02]);
        ipv6[14] = hi;
        ipv6[15] = lo;
        Station { mac: [0x02, 0, 0, 0, hi, lo], ipv4: [198, 18, hi, lo], ipv6 }
    }
}

/// The parts that are stations, in the order that numbers their addresses and
/// their places in the plan: sources, sinks, ideal hosts, the other hosts, then
/// taps. Each with its kind (`"ideal"` for an ideal host) and its path.
pub(crate) fn stations_of(sc: &Scenario) -> Vec<(&'static str, String, &String)> {
    fn table<'a>(out: &mut Vec<(&'static str, String, &'a String)>, kind: &'static str, names: impl Iterator<Item = (usize, &'a String)>) {
        let t = if kind == "ideal" { "host" } else { kind };
        out.extend(names.map(|(i, n)| (kind, format!("{t}[{i}]"), n)));
    }
    let mut out = Vec::new();
    table(&mut out, "source", sc.source.iter().map(|s| &s.name).enumerate());
    table(&mut out, "sink", sc.sink.iter().map(|s| &s.name).enumerate());
    for (kind, ideal) in [("ideal", true), ("host", false)] {
        table(&mut out, kind, sc.host.iter().enumerate().filter(|(_, h)| h.ideal == ideal).map(|(i, h)| (i, &h.name)));
    }
    table(&mut out, "tap", sc.tap.iter().map(|t| &t.name).enumerate());
    out
}
