//! The `[[tcp_host]]` table: a host running a real TCP (on itself or on its
//! adapter) and a TTCP transfer. docs/scenarios.md documents every key; the
//! defaults are the HP 2001 study's (docs/model.md).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::host_schema::BusSpec;
use crate::scenario::units::{Frequency, TimeSpan};

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DesignSpec {
    #[default]
    HostStack,
    FullOffload,
    PartialOffload,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpHostSpec {
    pub name: String,
    #[serde(default)]
    pub design: DesignSpec,
    /// The host processor's clock.
    pub clock: Frequency,
    #[serde(default)]
    pub costs: TcpCostsSpec,
    /// The host bus (default: 32-bit 33 MHz PCI).
    #[serde(default)]
    pub bus: Option<BusSpec>,
    #[serde(default)]
    pub adapter: OffloadSpec,
    #[serde(default)]
    pub fast_path: FastPathSpec,
    #[serde(default)]
    pub tcp: StackSpec,
    pub ttcp: TtcpSpec,
}

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct TcpCostsSpec {
    pub interrupt: Option<i64>,
    pub syscall: Option<i64>,
    pub copy_ns_per_byte: Option<f64>,
    pub rx_frame: Option<i64>,
    pub protocol_segment: Option<i64>,
    pub tx_frame: Option<i64>,
    pub completion: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct OffloadSpec {
    pub clock: Option<Frequency>,
    pub packet_cycles: Option<i64>,
    pub ack_cycles: Option<i64>,
    pub message_cycles: Option<i64>,
    pub inline_max: Option<i64>,
    pub queue_depth: Option<i64>,
    pub private_bus: Option<BusSpec>,
}

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct FastPathSpec {
    pub batch: Option<i64>,
    pub timeout: Option<TimeSpan>,
}

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    pub rx_buffer: Option<i64>,
    pub tx_buffer: Option<i64>,
    pub nagle: Option<bool>,
    /// "0 s" acknowledges at once.
    pub ack_delay: Option<TimeSpan>,
    pub ack_policy: Option<AckPolicySpec>,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AckPolicySpec {
    EverySecondSegment,
    WindowUpdate,
}

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RoleSpec {
    Send,
    Receive,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TtcpSpec {
    pub role: RoleSpec,
    /// Bytes per send or receive call.
    pub message: i64,
    /// Messages to send (the sender's; the receiver reads until the sender closes).
    #[serde(default)]
    pub count: Option<i64>,
    /// Or: bytes to send, in as many whole messages as that needs.
    #[serde(default)]
    pub bytes: Option<i64>,
    /// The receiving tcp_host (the sender's).
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub port: Option<i64>,
    #[serde(default)]
    pub start: Option<TimeSpan>,
}
