//! A processor as a run-to-completion executive (the i960 firmware's, and in the
//! same shape the host's interrupt and system-call path): work waits in one queue;
//! when the processor is free it takes everything waiting as one run, handles
//! each item to completion, then runs the protocol stack once. Work that arrives
//! during a run waits for the next, so a busy processor batches by itself.

use std::collections::VecDeque;

use crate::time::{Clock, Duration, Time};

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

#[derive(Debug)]
pub struct Processor {
    pub clock: Clock,
    queue: VecDeque<Work>,
    busy: bool,
    pub busy_time: Duration,
    pub cycles: u64,
    pub runs: u64,
}

impl Processor {
    pub fn new(clock: Clock) -> Self {
        Processor { clock, queue: VecDeque::new(), busy: false, busy_time: Duration::ZERO, cycles: 0, runs: 0 }
    }

    /// Queue `w`; true when the processor is free and a run should start now.
    pub fn push(&mut self, w: Work) -> bool {
        self.queue.push_back(w);
        !self.busy
    }

    /// Start a run: everything waiting, in arrival order.
    pub fn take(&mut self) -> Vec<Work> {
        self.busy = true;
        self.runs += 1;
        self.queue.drain(..).collect()
    }

    /// A run of `run` ended; true when more work is waiting.
    pub fn finish(&mut self, run: &Run) -> bool {
        self.busy = false;
        self.cycles += run.cycles;
        self.busy_time = self.busy_time + run.at.since(run.start);
        !self.queue.is_empty()
    }
}

/// The time a run has taken so far: processor cycles, and waits for the bus.
#[derive(Debug)]
pub struct Run {
    pub start: Time,
    pub at: Time,
    clock: Clock,
    pub cycles: u64,
}

impl Run {
    pub fn new(start: Time, clock: Clock) -> Run {
        Run { start, at: start, clock, cycles: 0 }
    }
    pub fn cycles(&mut self, n: u64) {
        self.cycles += n;
        self.at += self.clock.cycles(n);
    }
    /// Time spent moving bytes through memory (copies).
    pub fn copy(&mut self, ns_per_byte: f64, bytes: usize) {
        self.at += Duration((ns_per_byte * bytes as f64 * 1000.0).round() as u64);
    }
    /// Stall until `t` (a programmed-I/O write or a DMA the run waits for).
    pub fn until(&mut self, t: Time) {
        self.at = self.at.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_arriving_during_a_run_waits_and_is_taken_together() {
        let mut p = Processor::new(Clock::from_mhz(100));
        assert!(p.push(Work::Timer), "idle: start at once");
        let batch = p.take();
        assert_eq!(batch.len(), 1);
        assert!(!p.push(Work::Frame(vec![])), "busy: wait");
        assert!(!p.push(Work::Frame(vec![])));
        let mut run = Run::new(Time::ZERO, p.clock);
        run.cycles(1000);
        assert_eq!(run.at, Time::ZERO + Duration::from_us(10));
        assert!(p.finish(&run), "two are waiting");
        assert_eq!(p.take().len(), 2, "both in one run");
        assert_eq!(p.busy_time, Duration::from_us(10));
    }
}
