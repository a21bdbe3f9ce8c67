//! The socket-level messages between a host and an adapter that runs the
//! host's TCP (an offload engine): what the host's driver writes into adapter
//! memory before it rings the doorbell, and what the adapter leaves for the
//! driver's interrupt handler, each naming the socket it concerns.

#[derive(Debug)]
pub enum Message {
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
