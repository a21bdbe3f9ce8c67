//! The TCP tables of a host: its TTCP transfer (`ttcp`), its socket (`tcp`) and
//! its TCP offload engine (`[host.adapter.toe]`). docs/scenarios.md documents
//! every key; the engine's defaults are the HP 2001 study's (docs/model.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::bus_schema::BusSpec;
use crate::scenario::units::{Frequency, TimeSpan};
use crate::time::Clock;
use crate::toe::firmware_costs::{hp_firmware_cycles, HP_ACK_CYCLES};

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

/// The offloading adapter (the HP study's i960RN).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffloadSpec {
    /// The adapter processor's clock.
    #[serde(default = "hundred_mhz")]
    pub clock: Frequency,
    /// Firmware cycles per data segment sent (calibrated).
    #[serde(default = "packet_cycles")]
    pub packet_cycles: i64,
    /// Firmware cycles per data segment received (calibrated).
    #[serde(default = "rx_packet_cycles")]
    pub rx_packet_cycles: i64,
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
    /// The private bus between adapter memory and the MACs (default: 32-bit PCI without
    /// memory write and invalidate, its other keys at their defaults).
    #[serde(default)]
    pub private_bus: Option<BusSpec>,
}
defaults_of_an_empty_table!(OffloadSpec);

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
    /// The delayed-ACK limit; "0s" acknowledges at once.
    #[serde(default = "ms_200")]
    pub ack_delay: TimeSpan,
    /// When, besides the delayed ACK, this end acknowledges (default: "window-update"
    /// for the stack on an offload engine, else "every-second-segment").
    #[serde(default)]
    pub ack_policy: Option<AckPolicySpec>,
    /// The least retransmission timeout: RFC 6298's "1s", or Linux's "200ms".
    #[serde(default = "s_1")]
    pub min_rto: TimeSpan,
    /// Congestion control: "reno" (RFC 5681, the historical stacks') or
    /// "cubic" (RFC 9438, Linux's default since 2.6.19).
    #[serde(default)]
    pub congestion: CongestionSpec,
    /// Grow the congestion window by the bytes each ACK acknowledges (RFC 3465
    /// byte counting; Linux since 4.0 counts every segment a stretch ACK covers,
    /// such as the one ACK of a GRO merge), not by one segment an ACK at most
    /// (RFC 5681, and the stacks of the studies: NT 4, FreeBSD 4).
    #[serde(default)]
    pub byte_counting: bool,
    /// With segmentation offload, hold back a send the window cuts short while
    /// the ACK that widens it is near, as Linux does (`tcp_tso_should_defer`).
    #[serde(default = "yes")]
    pub tso_defer: bool,
}
defaults_of_an_empty_table!(StackSpec);

/// The default-value functions serde's `default = "..."` names.
macro_rules! defaults {
    ($($name:ident: $ty:ty = $value:expr;)*) => {
        $(fn $name() -> $ty { $value })*
    };
}

defaults! {
    packet_cycles: i64 = hp_firmware_cycles().packet as i64;
    rx_packet_cycles: i64 = hp_firmware_cycles().rx_packet as i64;
    message_cycles: i64 = hp_firmware_cycles().message as i64;
    ack_cycles: i64 = HP_ACK_CYCLES as i64;
    bytes_512: i64 = 512;
    messages_32: i64 = 32;
    bytes_8760: i64 = 8_760;
    yes: bool = true;
    port_5001: i64 = 5001;
    ms_200: TimeSpan = TimeSpan(crate::time::Duration::from_ms(200));
    s_1: TimeSpan = TimeSpan(crate::time::Duration::from_ms(1000));
    hundred_mhz: Frequency = Frequency(Clock::from_mhz(100));
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CongestionSpec {
    #[default]
    Reno,
    Cubic,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AckPolicySpec {
    EverySecondSegment,
    WindowUpdate,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RoleSpec {
    Send,
    Receive,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TtcpSpec {
    /// "send" (`ttcp -t`) or "receive" (`ttcp -r`).
    pub role: RoleSpec,
    /// Bytes per send or receive call.
    pub message: i64,
    /// Messages to send (the sender's; the receiver reads until the sender closes).
    #[serde(default)]
    pub count: Option<i64>,
    /// Or: bytes to send, in as many whole messages as that needs.
    #[serde(default)]
    pub bytes: Option<i64>,
    /// The receiving host or tap (the sender's).
    #[serde(default)]
    pub to: Option<String>,
    /// The receiver's port.
    #[serde(default = "port_5001")]
    pub port: i64,
    /// When the sender connects (start the receiver first).
    #[serde(default)]
    pub start: TimeSpan,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_left_out_has_the_defaults_of_the_table_given_empty() {
        assert_eq!(format!("{:?}", OffloadSpec::default()), format!("{:?}", toml::from_str::<OffloadSpec>("").unwrap()));
        let engine = OffloadSpec::default();
        let socket = StackSpec::default();
        assert_eq!((engine.queue_depth, engine.inline_max, socket.rx_buffer, socket.nagle), (32, 512, 8_760, true));
    }
}
