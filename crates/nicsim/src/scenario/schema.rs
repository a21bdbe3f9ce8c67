//! The scenario file, as serde reads it. Every key is documented in
//! docs/scenarios.md; unknown keys are errors.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::host_schema::{HostSpec, PeerSpec};
use crate::scenario::smart_schema::SmartSpec;
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
fn zero_time() -> TimeSpan {
    TimeSpan(crate::time::Duration::ZERO)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop at this simulated time; without it, run until no event is left.
    #[serde(default)]
    pub duration: Option<TimeSpan>,
    /// Largest IP packet, bytes (1500; up to 9000 and more for jumbo frames).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default)]
    pub source: Vec<SourceSpec>,
    #[serde(default)]
    pub sink: Vec<SinkSpec>,
    #[serde(default)]
    pub switch: Vec<SwitchSpec>,
    #[serde(default)]
    pub link: Vec<LinkSpec>,
    #[serde(default)]
    pub host: Vec<HostSpec>,
    #[serde(default)]
    pub peer: Vec<PeerSpec>,
    #[serde(default)]
    pub smart_host: Vec<SmartSpec>,
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
    #[serde(default)]
    pub mode: SweepMode,
    /// Key (as `--set` writes it) or `@label` to the values it takes.
    #[schemars(with = "std::collections::BTreeMap<String, Vec<serde_json::Value>>")]
    pub vary: std::collections::BTreeMap<String, Vec<toml::Value>>,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SweepMode {
    #[default]
    Grid,
    Zip,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Raw,
    Udp,
    Tcp,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PatternSpec {
    Constant,
    Poisson,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FillSpec {
    Counter,
    Random,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    pub name: String,
    /// The sink this source addresses its frames to.
    pub to: String,
    #[serde(default = "udp")]
    pub protocol: Protocol,
    #[serde(default = "four")]
    pub ip_version: u8,
    /// Frame size in bytes, FCS included, preamble and gap not (64..=mtu+18).
    #[serde(default)]
    pub frame_size: Option<i64>,
    /// Or: bytes after the last header (UDP/TCP payload; Ethernet payload if raw).
    #[serde(default)]
    pub payload_size: Option<i64>,
    #[serde(default = "line")]
    pub rate: SourceRate,
    #[serde(default = "constant")]
    pub pattern: PatternSpec,
    #[serde(default = "counter")]
    pub fill: FillSpec,
    /// Frames to send; without it the source runs until the scenario's duration.
    #[serde(default)]
    pub count: Option<i64>,
    #[serde(default = "zero_time")]
    pub start: TimeSpan,
    #[serde(default)]
    pub vlan: Option<i64>,
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
    pub name: String,
}

/// `[[tap]]`: a station that is a Linux TAP device, bridging the simulation to
/// the kernel (docs/bridge.md).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TapSpec {
    pub name: String,
    /// The TAP interface; opened if it exists (say in a network namespace), else made.
    pub device: String,
    /// Without a `duration`: once frames have crossed, end the run after this long
    /// with nothing to do (default 2 s).
    #[serde(default)]
    pub idle: Option<TimeSpan>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    pub name: String,
    pub ports: i64,
    #[serde(default = "default_switch_queue")]
    pub queue_frames: i64,
    #[serde(default = "zero_time")]
    pub latency: TimeSpan,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    /// One end: a source or sink name, or "switch:port".
    pub a: String,
    pub b: String,
    pub rate: BitRate,
    #[serde(default = "zero_time")]
    pub propagation: TimeSpan,
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
}
