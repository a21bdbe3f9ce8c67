//! The messages of a TCP offload engine's processor: what it is given to do
//! (frames, its stack's timer, the host's requests) and what it tells the host.

/// One thing for a processor to do.
#[derive(Debug)]
pub enum Work {
    /// A received frame for the stack on this processor.
    Frame(Vec<u8>),
    /// The stack's timer fell due (retransmission, delayed ACK).
    Timer,
    /// Host to adapter: data to send, inside the message or by reference.
    SendData { bytes: Vec<u8>, inline: bool },
    /// Host to adapter: this many receive buffers, one message each.
    PostReceive(u32),
    /// Host to adapter: listen, or connect to the receiver.
    OpenSocket,
    /// Host to adapter: close once everything queued is sent.
    CloseSocket,
    /// Adapter to host: this many send messages are done.
    Completion(u32),
    /// Adapter to host: received bytes in `buffers` posted buffers; `fin` once the
    /// peer has closed and everything is delivered.
    Delivery { bytes: Vec<u8>, buffers: u32, fin: bool },
}
