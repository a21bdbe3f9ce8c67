//! The scenario file, as serde reads it. Every key is documented in
//! docs/scenarios.md; unknown keys are errors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::defaults::zero_time;
use crate::scenario::host_schema::HostSpec;
use crate::scenario::units::{BitRate, SourceRate, TimeSpan};

fn default_seed() -> u64 {
    1
}
fn default_mtu() -> u32 {
    1500
}
fn default_tx_queue() -> i64 {
    1000
}
fn default_switch_queue() -> i64 {
    256
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name shown in results (default: the file's name).
    #[serde(default)]
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Seeds every component's random stream (each derived from the seed and the component's name).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop at this simulated time; without it, run until no event is left (then
    /// every source needs a count, and no host may run an application that never stops).
    #[serde(default)]
    pub duration: Option<TimeSpan>,
    /// Largest IP packet, bytes (1500; up to 9000 and more for jumbo frames).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Frame generators (`[[source]]`).
    #[serde(default)]
    pub source: Vec<SourceSpec>,
    /// Stations that count and check what they receive (`[[sink]]`).
    #[serde(default)]
    pub sink: Vec<SinkSpec>,
    /// Store-and-forward switches (`[[switch]]`).
    #[serde(default)]
    pub switch: Vec<SwitchSpec>,
    /// Full-duplex links between two ends (`[[link]]`).
    #[serde(default)]
    pub link: Vec<LinkSpec>,
    /// Hosts: processors, driver, stack, applications and adapters, or ideal
    /// ones whose processors, bus and adapter cost nothing (`[[host]]`).
    #[serde(default)]
    pub host: Vec<HostSpec>,
    /// Linux TAP devices bridging the simulation to the kernel (`[[tap]]`).
    #[serde(default)]
    pub tap: Vec<TapSpec>,
    /// How `nicsim sweep` varies this scenario; a single run ignores it.
    #[serde(default)]
    pub sweep: Option<SweepSpec>,
}

/// `[sweep]`: the values to run this scenario with (grid: every combination;
/// zip: the lists side by side). Keys are `--set` paths, or `@name` for a label
/// that is recorded with each run but changes nothing.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// "grid": every combination of the lists; "zip": the lists side by side.
    #[serde(default)]
    pub mode: SweepMode,
    /// Key (as `--set` writes it) or `@label` to the values it takes.
    #[schemars(with = "std::collections::BTreeMap<String, Vec<serde_json::Value>>")]
    pub vary: std::collections::BTreeMap<String, Vec<toml::Value>>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SweepMode {
    #[default]
    Grid,
    Zip,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Raw,
    Udp,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PatternSpec {
    Constant,
    Poisson,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FillSpec {
    Counter,
    Random,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Unique among all parts; no `:`.
    pub name: String,
    /// The sink this source addresses its frames to.
    pub to: String,
    /// "raw" (EtherType 0x88B5) or "udp"; TCP segments come only from a host's TCP (`[host.ttcp]`).
    #[serde(default = "udp")]
    pub protocol: Protocol,
    /// 4 or 6 (ignored for raw frames).
    #[serde(default = "four")]
    pub ip_version: u8,
    /// Frame size in bytes, FCS included, preamble and gap not (64..=mtu+18).
    #[serde(default)]
    pub frame_size: Option<i64>,
    /// Or: bytes after the last header (UDP/TCP payload; Ethernet payload if raw).
    #[serde(default)]
    pub payload_size: Option<i64>,
    /// "line" (back to back), a bit rate counting every bit on the wire, or frames per second
    /// ("1Mpps").
    #[serde(default = "line")]
    pub rate: SourceRate,
    /// Inter-frame times: "constant" or "poisson" (Poisson needs a rate).
    #[serde(default = "constant")]
    pub pattern: PatternSpec,
    /// Payload bytes: "counter" or "random" (from the source's seeded stream).
    #[serde(default = "counter")]
    pub fill: FillSpec,
    /// Frames to send; without it the source runs until the scenario's duration.
    #[serde(default)]
    pub count: Option<i64>,
    /// When the first frame leaves.
    #[serde(default = "zero_time")]
    pub start: TimeSpan,
    /// 802.1Q VLAN id, 0 to 4095 (none by default).
    #[serde(default)]
    pub vlan: Option<i64>,
    /// UDP or TCP source ports the frames take in turn, from 10000 + flow (UDP) or
    /// 40000 + flow (TCP): so many flows for a receiver's RSS to spread (1 by default).
    #[serde(default = "one")]
    pub source_ports: i64,
}

fn one() -> i64 {
    1
}
fn udp() -> Protocol {
    Protocol::Udp
}
fn four() -> u8 {
    4
}
fn line() -> SourceRate {
    SourceRate::Line
}
fn constant() -> PatternSpec {
    PatternSpec::Constant
}
fn counter() -> FillSpec {
    FillSpec::Counter
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkSpec {
    /// Unique among all parts; no `:`.
    pub name: String,
    /// Send one gratuitous ARP at a time drawn from the first millisecond, as a station
    /// does when its interface comes up, so that switches learn its port (a sink sends
    /// nothing else, so without it every frame for it is flooded).
    #[serde(default)]
    pub announce: bool,
}

/// `[[tap]]`: a station that is a Linux TAP device, bridging the simulation to
/// the kernel (docs/bridge.md).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TapSpec {
    /// The station's name; a host's `ttcp.to` may name it.
    pub name: String,
    /// The TAP interface; opened if it exists (say in a network namespace), else made.
    pub device: String,
    /// Without a `duration`: once frames have crossed, end the run after this long
    /// with nothing to do.
    #[serde(default = "two_seconds")]
    pub idle: TimeSpan,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// Unique among all parts; no `:`; links name its ports "NAME:PORT".
    pub name: String,
    /// Ports, 2 to 4096.
    pub ports: i64,
    /// Frames each output port holds while its link is busy (tail drop beyond).
    #[serde(default = "default_switch_queue")]
    pub queue_frames: i64,
    /// From a frame's last bit in to its being ready to leave.
    #[serde(default = "zero_time")]
    pub latency: TimeSpan,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique among all parts; no `:`.
    pub name: String,
    /// One end: a station's name (a source, sink, host or tap;
    /// "HOST:I" for adapter I of a host with several), or "SWITCH:PORT".
    pub a: String,
    /// The other end, as `a`.
    pub b: String,
    /// Line rate.
    pub rate: BitRate,
    /// One-way propagation delay (about 5 ns per metre of cable).
    #[serde(default = "zero_time")]
    pub propagation: TimeSpan,
    /// Frames that may wait at each end's transmitter behind the one being sent; beyond it they are
    /// dropped and counted.
    #[serde(default = "default_tx_queue")]
    pub tx_queue: i64,
    /// Fraction of frames lost, each way.
    #[serde(default)]
    pub loss: f64,
    /// Fraction of frames held back by `reorder_delay`, so later ones overtake them.
    #[serde(default)]
    pub reorder: f64,
    /// Default: three maximum-size frame times at the link's rate.
    #[serde(default)]
    pub reorder_delay: Option<TimeSpan>,
    /// Frames from `a` to `b` dropped on purpose, by number: the link's Nth
    /// frame that way, counted from 1 (one loss placed where a test wants it).
    #[serde(default)]
    pub drop_a_to_b: Vec<i64>,
}

fn two_seconds() -> TimeSpan {
    TimeSpan(crate::time::Duration::from_ms(2000))
}

impl Scenario {
    /// No part at all (an empty file, or one of comments and top-level keys).
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
            && self.sink.is_empty()
            && self.switch.is_empty()
            && self.link.is_empty()
            && self.host.is_empty()
            && self.tap.is_empty()
    }
}
