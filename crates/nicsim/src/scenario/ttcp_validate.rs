//! A host's `ttcp` and `tcp` tables: a TTCP transfer's role, size, port and start, and its
//! socket's settings. Which stations a sender may name is the caller's to say.

use crate::scenario::checks::within;
use crate::scenario::tcp_schema::{AckPolicySpec, CongestionSpec, RoleSpec, StackSpec, TtcpSpec};
use crate::scenario::ScenarioError;
use crate::stack::{AckPolicy, SocketConfig};
use crate::time::Duration;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// A checked TTCP table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub send: bool,
    pub message: u32,
    /// Bytes the sender sends (0 for the receiver).
    pub bytes: u64,
    pub port: u16,
    pub start: Duration,
}

/// `tp`: the table's path, for errors. The sender must name its receiver in
/// `to`; the receiver must not.
pub fn transfer(t: &TtcpSpec, tp: &str) -> Result<Transfer, ScenarioError> {
    let send = t.role == RoleSpec::Send;
    let message = within(format!("{tp}.message"), t.message, 1, 1 << 24)? as u32;
    let bytes = match (send, t.count, t.bytes) {
        (true, None, None) => return err(format!("{tp}.count"), "needed: how many messages (count) or bytes the sender sends"),
        (true, Some(_), Some(_)) => return err(format!("{tp}.bytes"), "give count or bytes, not both"),
        (true, Some(n), None) => within(format!("{tp}.count"), n, 1, 1 << 40)? * message as u64,
        (true, None, Some(b)) => within(format!("{tp}.bytes"), b, 1, 1 << 44)?,
        (false, None, None) => 0,
        (false, ..) => return err(format!("{tp}.count"), "only the sender has a count or bytes"),
    };
    match (send, &t.to) {
        (true, None) => return err(format!("{tp}.to"), "needed: the name of the receiving host"),
        (false, Some(_)) => return err(format!("{tp}.to"), "only the sender names a receiver"),
        _ => {}
    }
    Ok(Transfer { send, message, bytes, port: within(format!("{tp}.port"), t.port, 1, 65_535)? as u16, start: t.start.0 })
}

/// A `tcp` table's socket (its defaults are the table's, in `tcp_schema`),
/// with `ack_policy` when the table does not name one.
pub fn socket(s: &StackSpec, sp: &str, ack_policy: AckPolicy) -> Result<SocketConfig, ScenarioError> {
    let buffer = |key: &str, v: i64| within(format!("{sp}.{key}"), v, 1_024, 1 << 30).map(|v| v as usize);
    Ok(SocketConfig {
        rx_buffer: buffer("rx_buffer", s.rx_buffer)?,
        tx_buffer: buffer("tx_buffer", s.tx_buffer)?,
        nagle: s.nagle,
        ack_delay: (s.ack_delay.0 > Duration::ZERO).then_some(s.ack_delay.0),
        ack_policy: match s.ack_policy {
            Some(AckPolicySpec::EverySecondSegment) => AckPolicy::EverySecondSegment,
            Some(AckPolicySpec::WindowUpdate) => AckPolicy::WindowUpdate,
            None => ack_policy,
        },
        min_rto: min_rto(s.min_rto.0, &format!("{sp}.min_rto"))?,
        cubic: s.congestion == CongestionSpec::Cubic,
        byte_counting: s.byte_counting,
        tso_defer: s.tso_defer,
    })
}

/// A least retransmission timeout smoltcp can keep: 1 ms to 60 s, whole milliseconds.
fn min_rto(d: Duration, path: &str) -> Result<Duration, ScenarioError> {
    if d < Duration::from_ms(1) || d > Duration::from_ms(60_000) {
        return err(path, format!("must be 1ms to 60s (RFC 6298: 1s; Linux: 200ms), got {} ms", d.ps() as f64 / 1e9));
    }
    Ok(d)
}
