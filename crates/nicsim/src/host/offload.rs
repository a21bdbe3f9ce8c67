//! A host's side of a TCP offload engine adapter (`toe::engine`): the TTCP
//! application's calls become messages to the adapter, written word by word
//! across the bus (small sends inside the message, large ones copied to pinned
//! buffers the adapter fetches); the adapter's completions and received data
//! come back as messages the interrupt handler takes, one at a time, and the
//! application then reads and posts its buffers again.

use std::collections::VecDeque;

use crate::bus::HostBus;
use crate::host::sessions::Role;
use crate::host::stream::Stream;
use crate::observe::Report;
use crate::time::{Clock, Duration, Time};
use crate::toe::engine::Engine;
use crate::toe::work::Work;

/// A message to the adapter is a 16-byte header, then any inline data.
const MESSAGE_HEADER: usize = 16;

pub struct Offload {
    pub engine: Engine,
    /// The TTCP stream through the application, the bytes it is to send (none
    /// for a receiver) and when the sender starts; send calls made.
    pub stream: Stream,
    total: u64,
    pub start: Duration,
    pub calls: u64,
    /// Frames from the wire on their way into adapter memory, in order.
    pub arriving: VecDeque<(Time, Vec<u8>)>,
    /// Messages from the adapter the handler has not taken yet.
    pub events: VecDeque<Work>,
    /// Send messages the adapter has not completed.
    pub outstanding: u32,
    /// The sender waits for a completion.
    pub blocked: bool,
    pub messages: u64,
    pub completions: u64,
    pub deliveries: u64,
}

/// A host step's work with the adapter: its cycles, the time it stalls to
/// (copies, programmed I/O), and the messages it leaves for the adapter.
pub struct Call {
    pub cycles: u64,
    pub until: Time,
    pub to_adapter: Vec<Work>,
    /// The sender may make its next call at once.
    pub again: bool,
}

impl Offload {
    pub fn new(engine: Engine, role: &Role) -> Offload {
        let (stream, total, start) = match *role {
            Role::Send { message, bytes, seed, start, .. } => (Stream::new(message, seed), bytes, start),
            Role::Receive { message } => (Stream::new(message, 0), 0, Duration::ZERO),
            _ => unreachable!("an offload engine carries a TTCP end"),
        };
        Offload {
            engine,
            stream,
            total,
            start,
            calls: 0,
            arriving: VecDeque::new(),
            events: VecDeque::new(),
            outstanding: 0,
            blocked: false,
            messages: 0,
            completions: 0,
            deliveries: 0,
        }
    }

    pub fn sender(&self) -> bool {
        self.total > 0
    }

    /// The sender has handed all its bytes to the adapter.
    fn all_offered(&self) -> bool {
        self.stream.bytes == self.total
    }

    /// The time after `at` when a message with `data` inline bytes has been
    /// written, word by word, and its doorbell rung: the processor waits for
    /// each write to post.
    fn write_message(&mut self, bus: &mut HostBus, mut at: Time, data: usize) -> Time {
        self.messages += 1;
        for _ in 0..(MESSAGE_HEADER + data).div_ceil(4) + 1 {
            at = bus.register_write(at);
        }
        at
    }

    /// The application opens its socket: listen (posting its receive buffers)
    /// or connect.
    pub fn open(&mut self, now: Time, clock: Clock, syscall: u64, bus: &mut HostBus) -> Call {
        let mut until = self.write_message(bus, now + clock.cycles(syscall), 0);
        let mut call = Call { cycles: syscall, until, to_adapter: vec![Work::OpenSocket], again: false };
        if !self.sender() {
            let depth = self.engine.cfg.adapter.queue_depth;
            until = self.write_message(bus, until + clock.cycles(syscall), 0);
            call.cycles += syscall;
            call.until = until;
            call.to_adapter.push(Work::PostReceive(depth));
        }
        call
    }

    /// One send call: the next message goes to the adapter; the last one is
    /// followed by the close.
    pub fn send(&mut self, now: Time, clock: Clock, syscall: u64, copy_ns_per_byte: f64, bus: &mut HostBus) -> Option<Call> {
        if self.all_offered() || self.blocked {
            return None;
        }
        // One message per call, the last one shorter when the bytes run out.
        self.calls += 1;
        let message = self.stream.message as u64;
        let bytes = self.stream.next(message.min(self.total - self.stream.bytes) as usize);
        let inline = bytes.len() <= self.engine.cfg.adapter.inline_max as usize;
        let mut at = now + clock.cycles(syscall);
        at = if inline {
            self.write_message(bus, at, bytes.len())
        } else {
            // Into a pinned buffer the adapter will fetch by DMA.
            let at = at + copy_time(copy_ns_per_byte, bytes.len());
            self.write_message(bus, at, 0)
        };
        self.stream.through(&bytes);
        self.outstanding += 1;
        let mut call = Call { cycles: syscall, until: at, to_adapter: vec![Work::SendData { bytes, inline }], again: false };
        if self.all_offered() {
            call.until = self.write_message(bus, at, 0);
            call.to_adapter.push(Work::CloseSocket);
        } else if self.outstanding < self.engine.cfg.adapter.queue_depth {
            call.again = true;
        } else {
            self.blocked = true;
        }
        Some(call)
    }

    /// The application's part of a message from the adapter: a completion lets
    /// a blocked sender go on; received data is read (a call per buffer, and
    /// its copy) and the buffers posted again.
    pub fn take(&mut self, w: Work, now: Time, clock: Clock, syscall: u64, copy_ns_per_byte: f64, bus: &mut HostBus) -> Call {
        let mut call = Call { cycles: 0, until: now, to_adapter: vec![], again: false };
        match w {
            Work::Completion(n) => {
                self.completions += n as u64;
                self.outstanding -= n;
                call.again = std::mem::take(&mut self.blocked);
            }
            Work::Delivery { bytes, buffers, fin } => {
                self.deliveries += 1;
                call.cycles = syscall * (bytes.len() as u64).div_ceil(self.stream.message as u64);
                let read = now + clock.cycles(call.cycles) + copy_time(copy_ns_per_byte, bytes.len());
                self.stream.through(&bytes);
                call.until = read;
                if fin {
                    self.stream.done = Some(read);
                } else if buffers > 0 {
                    call.cycles += syscall;
                    call.until = self.write_message(bus, read + clock.cycles(syscall), 0);
                    call.to_adapter.push(Work::PostReceive(buffers));
                }
            }
            other => unreachable!("{other:?} is not a message to the host"),
        }
        call
    }
}

impl Offload {
    /// The transfer's figures (named as a host stack's sessions name them), the
    /// engine's TCP counts and its processor's work.
    pub fn report(&self, r: &mut Report, end: Time) {
        let sent = self.all_offered() && self.outstanding == 0;
        let done = if self.sender() { sent } else { self.stream.done.is_some() };
        r.count("ttcp_bytes", self.stream.bytes).count("transfer_complete", done as u64);
        r.count("ttcp_messages", self.calls).count("ttcp_digest48", self.stream.digest48());
        let t = &self.engine.stack.tally;
        r.count("tcp_retransmits", t.retransmits).count("tcp_out_of_order", t.out_of_order).count("tcp_connections", t.connections);
        r.count("tcp_data_out", t.data_out)
            .count("tcp_data_in", t.data_in)
            .count("tcp_acks_out", t.acks_out)
            .count("tcp_acks_in", t.acks_in);
        self.engine.processor.account.report(r, "adapter_cpu0", end);
        r.count("host_messages", self.messages).count("completions", self.completions).count("deliveries", self.deliveries);
    }
}

fn copy_time(ns_per_byte: f64, bytes: usize) -> Duration {
    Duration((ns_per_byte * bytes as f64 * 1000.0).round() as u64)
}
