//! The messages of a TCP offload engine's processor: what it is given to do
//! (frames, its stack's timer, the host's requests) and what it tells the host,
//! each host message naming the socket it concerns.

/// One thing for a processor to do.
#[derive(Debug)]
pub enum Work {
    /// A received frame for the stack on this processor.
    Frame(Box<crate::wire::Frame>),
    /// The stack's timer fell due (retransmission, delayed ACK).
    Timer,
    /// Host to adapter: data for socket `s` to send, inside the message or by reference.
    SendData { s: usize, bytes: Vec<u8>, inline: bool },
    /// Host to adapter: this many receive buffers for a socket, one message each.
    PostReceive(usize, u32),
    /// Host to adapter: a socket listens, or connects.
    OpenSocket(usize),
    /// Host to adapter: close a socket once everything queued is sent.
    CloseSocket(usize),
    /// Adapter to host: this many of a socket's send messages are done.
    Completion(usize, u32),
    /// Adapter to host: bytes received on socket `s` in `buffers` posted
    /// buffers; `fin` once the peer has closed and everything is delivered.
    Delivery { s: usize, bytes: Vec<u8>, buffers: u32, fin: bool },
}
