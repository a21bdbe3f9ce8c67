//! A host's `ttcp` and `tcp` tables: a TTCP transfer's role, size, port and start, and its
//! socket's settings. Which stations a sender may name is the caller's to say.

use crate::scenario::checks::within;
use crate::scenario::ttcp_schema::{RoleSpec, TtcpSpec};
use crate::scenario::ScenarioError;
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
