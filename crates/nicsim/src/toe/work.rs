//! What a TCP offload engine's processor is given to do: frames, its stack's
//! timer, and the host's messages (`device::Message`).

pub use crate::device::Message;

/// One thing for a processor to do.
#[derive(Debug)]
pub enum Work {
    /// A received frame for the stack on this processor.
    Frame(Box<crate::wire::Frame>),
    /// The stack's timer fell due (retransmission, delayed ACK).
    Timer,
    /// A message from the host.
    Host(Message),
}
