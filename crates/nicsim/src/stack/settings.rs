//! A socket's settings (`[host.tcp]`): the table as serde reads it and its
//! check into a `SocketConfig`, whose errors name the key (NT 4's and BSD's
//! defaults on Ethernet).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::settings::{defaults, defaults_of_an_empty_table, within};
use crate::stack::{AckPolicy, SocketConfig};
use crate::time::Duration;
use crate::units::TimeSpan;

defaults! {
    bytes_8760: i64 = 8_760;
    yes: bool = true;
    ms_200: TimeSpan = TimeSpan(Duration::from_ms(200));
    s_1: TimeSpan = TimeSpan(Duration::from_ms(1000));
}

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

impl StackSpec {
    /// The socket this table describes, with `ack_policy` when the table does
    /// not name one; an error says "key: what is wrong".
    pub fn socket(&self, ack_policy: AckPolicy) -> Result<SocketConfig, String> {
        let buffer = |key: &str, v: i64| within(key, v, 1_024, 1 << 30).map(|v| v as usize);
        Ok(SocketConfig {
            rx_buffer: buffer("rx_buffer", self.rx_buffer)?,
            tx_buffer: buffer("tx_buffer", self.tx_buffer)?,
            nagle: self.nagle,
            ack_delay: (self.ack_delay.0 > Duration::ZERO).then_some(self.ack_delay.0),
            ack_policy: match self.ack_policy {
                Some(AckPolicySpec::EverySecondSegment) => AckPolicy::EverySecondSegment,
                Some(AckPolicySpec::WindowUpdate) => AckPolicy::WindowUpdate,
                None => ack_policy,
            },
            min_rto: min_rto(self.min_rto.0)?,
            cubic: self.congestion == CongestionSpec::Cubic,
            byte_counting: self.byte_counting,
            tso_defer: self.tso_defer,
        })
    }
}

/// A least retransmission timeout smoltcp can keep: 1 ms to 60 s, whole milliseconds.
fn min_rto(d: Duration) -> Result<Duration, String> {
    if d < Duration::from_ms(1) || d > Duration::from_ms(60_000) {
        return Err(format!("min_rto: must be 1ms to 60s (RFC 6298: 1s; Linux: 200ms), got {} ms", d.ps() as f64 / 1e9));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_left_out_has_the_defaults_of_the_table_given_empty() {
        let socket = StackSpec::default();
        assert_eq!((socket.rx_buffer, socket.nagle, socket.byte_counting), (8_760, true, false));
        let c = socket.socket(AckPolicy::WindowUpdate).expect("the defaults are valid");
        assert_eq!(
            (c.ack_delay, c.ack_policy, c.min_rto),
            (Some(Duration::from_ms(200)), AckPolicy::WindowUpdate, Duration::from_ms(1000))
        );
    }

    #[test]
    fn an_error_names_the_key() {
        let spec: StackSpec = toml::from_str("rx_buffer = 10").unwrap();
        assert_eq!(spec.socket(AckPolicy::default()).unwrap_err(), "rx_buffer: must be 1024 to 1073741824, got 10");
        let spec: StackSpec = toml::from_str("min_rto = \"0s\"").unwrap();
        assert!(spec.socket(AckPolicy::default()).unwrap_err().starts_with("min_rto: must be 1ms to 60s"));
    }
}
