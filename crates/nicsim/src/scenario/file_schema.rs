//! The file applications of a `[[host]]`: `[host.file_request]`,
//! `[host.file_serve]` and `[host.file_read]`, as serde reads them.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::scenario::defaults::one;
use crate::scenario::units::TimeSpan;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileRequestSpec {
    /// The hosts to ask (each answers with a file from memory).
    pub peers: Vec<String>,
    /// Sessions per host asked.
    #[serde(default = "one")]
    pub sessions: i64,
    /// Bytes of each request.
    #[serde(default = "request_bytes")]
    pub request_bytes: i64,
    /// Bytes of each file.
    #[serde(default = "file_bytes")]
    pub file_bytes: i64,
    /// The receive window advertised, bytes.
    #[serde(default = "window")]
    pub window: i64,
    /// The delayed-ACK limit; "0ns" acknowledges at once.
    #[serde(default = "delayed_ack")]
    pub delayed_ack: TimeSpan,
    /// How requests and files travel.
    #[serde(default)]
    #[schemars(extend("default" = "tcp"))]
    pub transport: Transport,
    /// When the sessions connect and make their first request (start the
    /// hosts asked first: one not yet listening answers with a reset).
    #[serde(default = "crate::scenario::defaults::zero_time")]
    pub start: TimeSpan,
}

/// Serve blocks to the hosts whose `file_read` names this host.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileServeSpec {
    /// The port it serves on.
    #[serde(default = "serve_port")]
    pub port: i64,
    /// Bytes of each request.
    #[serde(default = "request_bytes")]
    pub request_bytes: i64,
    /// Bytes of each block served.
    #[serde(default = "read_bytes")]
    pub read_bytes: i64,
    /// The receive window advertised, bytes.
    #[serde(default = "window")]
    pub window: i64,
    /// The delayed-ACK limit; "0ns" acknowledges at once.
    #[serde(default = "delayed_ack")]
    pub delayed_ack: TimeSpan,
    /// How requests and blocks travel (its readers' sessions follow it).
    #[serde(default)]
    #[schemars(extend("default" = "tcp"))]
    pub transport: Transport,
}

/// How a file session's requests and answers travel.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A TCP connection a session.
    #[default]
    Tcp,
    /// NetWare's NCP in packet-burst mode over IPX: one read request, the whole
    /// answer in a burst of packets, no acknowledgement per packet.
    Ncp,
}

fn serve_port() -> i64 {
    524
}
fn read_bytes() -> i64 {
    65_536
}

fn request_bytes() -> i64 {
    64
}
fn file_bytes() -> i64 {
    100_000
}
fn window() -> i64 {
    65_535
}
fn delayed_ack() -> TimeSpan {
    TimeSpan(crate::time::Duration::from_ms(200))
}

/// A client of another host's `file_serve`: a NetWare client of the Novell study.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileReadSpec {
    /// The host whose `file_serve` it reads blocks from.
    pub from: String,
    /// Client sessions, each reading one block after another.
    #[serde(default = "one")]
    pub sessions: i64,
    /// Time between a block's last byte and the next request.
    #[serde(default)]
    pub think: TimeSpan,
}
