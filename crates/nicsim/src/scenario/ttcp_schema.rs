//! A host's TTCP transfer (`ttcp`), as serde reads it; its socket (`tcp`) is
//! the stack's (`stack::settings`), its offload engine's table the engine's
//! (`toe::settings`). docs/scenarios.md documents every key.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::scenario::units::TimeSpan;
use crate::settings::defaults;

defaults! {
    port_5001: i64 = 5001;
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
