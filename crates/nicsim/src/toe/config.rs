//! What a scenario sets on a TCP host (`[[tcp_host]]`): where its TCP runs, what
//! each step costs on the host and on the adapter, and the TTCP transfer it runs.
//! docs/model.md gives each cost's source.

use crate::bus::BusConfig;
use crate::stack::{SocketConfig, StackConfig};
use crate::time::{Clock, Duration};

/// Where the protocol stack runs (BRIEF.md mechanism 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// The host's own stack over a plain bus-master adapter.
    HostStack,
    /// The whole stack on the adapter's processor; the host talks to it through
    /// message queues with doorbells, at the socket level.
    FullOffload,
    /// The host's stack, with fixed-function adapter logic that cuts outgoing bulk
    /// sends into segments and hands in-order incoming data segments up in batches.
    PartialOffload,
}

/// Host processor costs, cycles of the host clock.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCosts {
    /// Taking an interrupt and leaving it, together.
    pub interrupt: u64,
    /// One send or receive call of the application, entry to return.
    pub syscall: u64,
    /// Copying between application and kernel (or pinned) buffers.
    pub copy_ns_per_byte: f64,
    /// Driver work per received frame.
    pub rx_frame: u64,
    /// Protocol input per received segment (or per fast-path batch).
    pub protocol_segment: u64,
    /// Protocol output and driver work per transmitted frame.
    pub tx_frame: u64,
    /// Handling one completion or delivery message from an offloading adapter.
    pub completion: u64,
}

/// The offloading adapter's processor and its host interface.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterConfig {
    pub clock: Clock,
    /// Firmware cycles per data segment sent or received.
    pub packet_cycles: u64,
    /// Firmware cycles per pure ACK sent or received.
    pub ack_cycles: u64,
    /// Firmware cycles per host message (a send, a posted receive buffer).
    pub message_cycles: u64,
    /// Sends up to this many bytes travel inside the message, by programmed I/O.
    pub inline_max: u32,
    /// Host messages outstanding at most (the inbound queue's depth).
    pub queue_depth: u32,
    /// The private bus between adapter memory and the MACs.
    pub private_bus: BusConfig,
}

/// The partial offload's fast path for received data.
#[derive(Clone, Debug, PartialEq)]
pub struct FastPathConfig {
    /// In-order segments handed up together at most.
    pub batch: u32,
    /// How long the first segment of a batch may wait.
    pub timeout: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Send,
    Receive,
}

/// A TTCP-style bulk transfer: `bytes` in messages of `message` bytes (the last
/// one shorter when `bytes` is not a multiple).
#[derive(Clone, Debug, PartialEq)]
pub struct TtcpConfig {
    pub role: Role,
    pub message: u32,
    pub bytes: u64,
    pub port: u16,
    /// The receiver's address (for the sender).
    pub peer_ip: [u8; 4],
    pub start: Duration,
    /// Seeds the bytes sent, so the receiver's digest checks them.
    pub content_seed: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TcpHostConfig {
    pub design: Design,
    pub stack: StackConfig,
    pub socket: SocketConfig,
    pub host_clock: Clock,
    pub costs: HostCosts,
    pub bus: BusConfig,
    pub adapter: AdapterConfig,
    pub fast_path: FastPathConfig,
    pub ttcp: TtcpConfig,
    /// The attached link's rate, for wire throughput as a fraction of it.
    pub line_rate_bps: u64,
    pub seed: u64,
}
