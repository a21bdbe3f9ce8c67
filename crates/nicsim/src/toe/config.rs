//! What a scenario sets on a TCP offload engine: its processor and its host
//! interface. docs/model.md gives each cost's source.

use crate::bus::BusConfig;
use crate::time::Clock;

/// The offloading adapter's processor and its host interface.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterConfig {
    pub clock: Clock,
    /// Firmware cycles per data segment sent.
    pub packet_cycles: u64,
    /// Firmware cycles per data segment received.
    pub rx_packet_cycles: u64,
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
