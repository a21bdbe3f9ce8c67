//! The `[[tcp_host]]` table: a host running a real TCP (on itself or on its
//! adapter) and a TTCP transfer. docs/scenarios.md documents every key; the
//! defaults are the HP 2001 study's (docs/model.md).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::host_schema::BusSpec;
use crate::scenario::tcp_validate::{hp_firmware_cycles, HP_ACK_CYCLES};
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

/// A table left out of a scenario takes the defaults its keys have when it is
/// given empty: they are written once, in the serde attributes below.
macro_rules! defaults_of_an_empty_table {
    ($ty:ty) => {
        impl Default for $ty {
            fn default() -> Self {
                toml::from_str("").expect("every key of the table has a default")
            }
        }
    };
}

/// Host processor costs, cycles of the host clock (docs/model.md gives each
/// default's source: the IBM study's NT 4 calibration, or assumed).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpCostsSpec {
    /// Taking an interrupt and leaving it.
    #[serde(default = "cycles_800")]
    pub interrupt: i64,
    /// One send or receive call, and one message written to the adapter.
    #[serde(default = "cycles_2000")]
    pub syscall: i64,
    /// Copying between application and kernel (or pinned) buffers, ns per byte.
    #[serde(default = "ns_10")]
    pub copy_ns_per_byte: f64,
    /// Driver work per received frame.
    #[serde(default = "cycles_1690")]
    pub rx_frame: i64,
    /// Protocol input per received segment (or fast-path batch).
    #[serde(default = "cycles_1024")]
    pub protocol_segment: i64,
    /// Protocol output and driver work per sent frame.
    #[serde(default = "cycles_2000")]
    pub tx_frame: i64,
    /// One completion or delivery message from an offloading adapter.
    #[serde(default = "cycles_1000")]
    pub completion: i64,
}
defaults_of_an_empty_table!(TcpCostsSpec);

/// The offloading adapter (the HP study's i960RN).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffloadSpec {
    /// The adapter processor's clock (default "100MHz").
    #[serde(default)]
    pub clock: Option<Frequency>,
    /// Firmware cycles per data segment sent or received (calibrated).
    #[serde(default = "packet_cycles")]
    pub packet_cycles: i64,
    /// Firmware cycles per pure ACK (or SYN, FIN, ARP).
    #[serde(default = "ack_cycles")]
    pub ack_cycles: i64,
    /// Firmware cycles per host message (calibrated).
    #[serde(default = "message_cycles")]
    pub message_cycles: i64,
    /// Sends up to this many bytes ride inside the message (programmed I/O).
    #[serde(default = "bytes_512")]
    pub inline_max: i64,
    /// Host messages outstanding at most; also the receive buffers kept posted.
    #[serde(default = "messages_32")]
    pub queue_depth: i64,
    /// The private bus between adapter memory and the MACs (default: 32-bit 33 MHz PCI).
    #[serde(default)]
    pub private_bus: Option<BusSpec>,
}
defaults_of_an_empty_table!(OffloadSpec);

/// The partial offload's fast path for received data.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FastPathSpec {
    /// In-order segments handed up together at most.
    #[serde(default = "segments_8")]
    pub batch: i64,
    /// How long the first segment of a batch may wait (default "500us").
    #[serde(default)]
    pub timeout: Option<TimeSpan>,
}
defaults_of_an_empty_table!(FastPathSpec);

/// A TCP socket's settings (NT 4 and BSD defaults on Ethernet).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    /// Receive buffer, bytes: the window offered; over 65535 turns on window scaling.
    #[serde(default = "bytes_8760")]
    pub rx_buffer: i64,
    /// Send buffer, bytes.
    #[serde(default = "bytes_8760")]
    pub tx_buffer: i64,
    /// Nagle's algorithm.
    #[serde(default = "yes")]
    pub nagle: bool,
    /// The delayed-ACK limit (default "200ms"); "0s" acknowledges at once.
    #[serde(default)]
    pub ack_delay: Option<TimeSpan>,
    /// When, besides the delayed ACK, this end acknowledges (default
    /// "window-update" for a TCP host's full offload, else "every-second-segment").
    #[serde(default)]
    pub ack_policy: Option<AckPolicySpec>,
}
defaults_of_an_empty_table!(StackSpec);

/// The default-value functions serde's `default = "..."` names.
macro_rules! defaults {
    ($($name:ident: $ty:ty = $value:expr;)*) => {
        $(fn $name() -> $ty { $value })*
    };
}

defaults! {
    cycles_800: i64 = 800;
    cycles_1000: i64 = 1_000;
    cycles_1024: i64 = 1_024;
    cycles_1690: i64 = 1_690;
    cycles_2000: i64 = 2_000;
    ns_10: f64 = 10.0;
    packet_cycles: i64 = hp_firmware_cycles().0 as i64;
    message_cycles: i64 = hp_firmware_cycles().1 as i64;
    ack_cycles: i64 = HP_ACK_CYCLES as i64;
    bytes_512: i64 = 512;
    messages_32: i64 = 32;
    segments_8: i64 = 8;
    bytes_8760: i64 = 8_760;
    yes: bool = true;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_left_out_has_the_defaults_of_the_table_given_empty() {
        let base = "name = \"h\"\nclock = \"300MHz\"\n[ttcp]\nrole = \"receive\"\nmessage = 1\n";
        let without: TcpHostSpec = toml::from_str(base).unwrap();
        let empty: TcpHostSpec = toml::from_str(&format!("{base}[costs]\n[adapter]\n[fast_path]\n[tcp]\n")).unwrap();
        assert_eq!(format!("{:?}", without.costs), format!("{:?}", empty.costs));
        assert_eq!(format!("{:?}", without.adapter), format!("{:?}", empty.adapter));
        assert_eq!(format!("{:?}", without.fast_path), format!("{:?}", empty.fast_path));
        assert_eq!(format!("{:?}", without.tcp), format!("{:?}", empty.tcp));
        assert_eq!((without.costs.interrupt, without.tcp.rx_buffer, without.adapter.queue_depth), (800, 8_760, 32));
    }
}
