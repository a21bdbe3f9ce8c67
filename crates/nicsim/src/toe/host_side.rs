//! The host processor's runs: interrupts, the TTCP application's calls and, in
//! the host-stack and partial designs, the protocol stack itself. With full
//! offload the host only writes messages to the adapter (small data inside them
//! by programmed I/O, large data copied to pinned buffers and named) and takes
//! completions and received data back in batches.

use crate::toe::config::{Design, Role};
use crate::toe::exec::{Run, Work};
use crate::toe::node::{Outputs, Side, TcpHost};

/// A message to the adapter is a 16-byte header, then any inline data.
pub(super) const MESSAGE_HEADER: usize = 16;

impl TcpHost {
    pub(super) fn host_run(&mut self, batch: Vec<Work>, run: &mut Run, out: &mut Outputs) {
        let costs = self.cfg.costs.clone();
        if batch.iter().any(Work::from_hardware) {
            self.interrupts += 1;
            run.cycles(costs.interrupt);
        }
        for w in batch {
            match w {
                Work::Frame(f) => {
                    run.cycles(costs.rx_frame + costs.protocol_segment);
                    self.stack.input(f);
                }
                Work::FastBatch(frames) => {
                    // One hand-off and one protocol pass for the whole batch.
                    run.cycles(costs.rx_frame + costs.protocol_segment);
                    self.fast_batches += 1;
                    frames.into_iter().for_each(|f| self.stack.input(f));
                }
                Work::Open => self.open(run, out),
                Work::Send if self.stack_side() == Side::Host => self.send_to_stack(run, out),
                Work::Send => self.send_to_adapter(run, out),
                Work::Completion(n) => {
                    run.cycles(costs.completion);
                    self.completions += n as u64;
                    self.outstanding -= n;
                    if self.blocked {
                        self.blocked = false;
                        out.host.push(Work::Send);
                    }
                }
                Work::Delivery { bytes, buffers, fin } => {
                    run.cycles(costs.completion + costs.syscall * self.app.reads_for(bytes.len()));
                    run.copy(costs.copy_ns_per_byte, bytes.len());
                    self.deliveries += 1;
                    self.app.receive(&bytes);
                    if fin {
                        self.app.stream.done = Some(run.at);
                    } else {
                        self.post_receive(run, out, buffers);
                    }
                }
                Work::Timer => {}
                other => unreachable!("{other:?} is adapter work"),
            }
        }
        if self.stack_side() == Side::Host {
            self.run_host_stack(run, out);
        }
    }

    fn open(&mut self, run: &mut Run, out: &mut Outputs) {
        run.cycles(self.cfg.costs.syscall);
        if self.stack_side() == Side::Adapter {
            self.write_message(run, 0);
            out.adapter.push(Work::OpenSocket);
            if self.cfg.ttcp.role == Role::Receive {
                self.post_receive(run, out, self.cfg.adapter.queue_depth);
            }
        } else {
            self.open_stack();
        }
        if self.cfg.ttcp.role == Role::Send {
            out.host.push(Work::Send);
        }
    }

    /// The host's own stack: one send call puts (the rest of) a message in the
    /// socket buffer; the call blocks while the buffer is full.
    fn send_to_stack(&mut self, run: &mut Run, out: &mut Outputs) {
        if self.app.all_offered() {
            return;
        }
        let costs = &self.cfg.costs;
        if self.app.begin_call() {
            run.cycles(costs.syscall);
            if self.cfg.design == Design::PartialOffload {
                // One send hands the fast path one block and a header template.
                run.cycles(costs.tx_frame);
            }
        }
        let bytes = self.app.next_bytes(self.stack.send_room(self.sock));
        let n = self.stack.send(self.sock, &bytes);
        run.copy(self.cfg.costs.copy_ns_per_byte, n);
        let finished = self.app.taken(&bytes[..n]);
        if self.app.all_offered() {
            self.stack.close(self.sock);
        } else if finished {
            out.host.push(Work::Send);
        } else {
            self.blocked = true;
        }
    }

    /// Full offload: one send call becomes one message to the adapter.
    fn send_to_adapter(&mut self, run: &mut Run, out: &mut Outputs) {
        if self.app.all_offered() {
            return;
        }
        self.app.begin_call();
        run.cycles(self.cfg.costs.syscall);
        let bytes = self.app.next_bytes(usize::MAX);
        let inline = bytes.len() <= self.cfg.adapter.inline_max as usize;
        if inline {
            self.write_message(run, bytes.len());
        } else {
            // Into a pinned buffer the adapter will fetch by DMA.
            run.copy(self.cfg.costs.copy_ns_per_byte, bytes.len());
            self.write_message(run, 0);
        }
        self.app.taken(&bytes);
        self.outstanding += 1;
        out.adapter.push(Work::SendData { bytes, inline });
        if self.app.all_offered() {
            self.write_message(run, 0);
            out.adapter.push(Work::CloseSocket);
        } else if self.outstanding < self.cfg.adapter.queue_depth {
            out.host.push(Work::Send);
        } else {
            self.blocked = true;
        }
    }

    /// Write a message of `data` inline bytes word by word across the bus, then
    /// ring the doorbell; the processor waits for each posted write.
    fn write_message(&mut self, run: &mut Run, data: usize) {
        self.messages += 1;
        for _ in 0..(MESSAGE_HEADER + data).div_ceil(4) + 1 {
            let done = self.bus.register_write(run.at);
            run.until(done);
        }
    }

    fn post_receive(&mut self, run: &mut Run, out: &mut Outputs, buffers: u32) {
        if buffers == 0 {
            return;
        }
        run.cycles(self.cfg.costs.syscall);
        self.write_message(run, 0);
        out.adapter.push(Work::PostReceive(buffers));
    }

    /// Poll the host's stack: charge what it sends, let the receiver read, and
    /// let a blocked sender go on once the socket buffer has room.
    fn run_host_stack(&mut self, run: &mut Run, out: &mut Outputs) {
        self.poll_host_stack(run, out);
        if self.cfg.ttcp.role == Role::Receive && self.app.stream.done.is_none() {
            let n = self.stack.readable(self.sock);
            if n > 0 {
                run.cycles(self.cfg.costs.syscall * self.app.reads_for(n));
                let bytes = self.stack.recv(self.sock, n);
                run.copy(self.cfg.costs.copy_ns_per_byte, bytes.len());
                self.app.receive(&bytes);
            }
            if self.stack.peer_finished(self.sock) {
                self.app.stream.done = Some(run.at);
                self.stack.close(self.sock);
            }
            self.poll_host_stack(run, out);
        }
        if self.blocked && self.stack.send_room(self.sock) > 0 {
            self.blocked = false;
            out.host.push(Work::Send);
        }
    }

    fn poll_host_stack(&mut self, run: &mut Run, out: &mut Outputs) {
        let before = (self.stack.tally.data_out, self.stack.tally.retransmits);
        let frames = self.stack.poll(run.at);
        let new_data = (self.stack.tally.data_out - before.0) - (self.stack.tally.retransmits - before.1);
        // The fast path cuts new in-order data itself; the host pays for the rest.
        let charged = match self.cfg.design {
            Design::PartialOffload => frames.len() as u64 - new_data,
            _ => frames.len() as u64,
        };
        run.cycles(self.cfg.costs.tx_frame * charged);
        out.frames.extend(frames);
    }
}
