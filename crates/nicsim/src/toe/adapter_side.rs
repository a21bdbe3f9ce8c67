//! The offloading adapter's firmware runs (full offload): host messages, received
//! frames and timers are handled to completion, then the stack runs once; what
//! the host asked to send is moved into the socket as room allows, received
//! bytes go to the host's posted buffers by DMA, and completions go back in one
//! message per run.

use crate::bus::{Fill, Purpose};
use crate::stack::tally::{classify, Class};
use crate::toe::exec::{Run, Work};
use crate::toe::node::{Outputs, TcpHost};

impl TcpHost {
    fn frame_cycles(&self, frame: &[u8]) -> u64 {
        match classify(frame) {
            Class::Data { .. } => self.cfg.adapter.packet_cycles,
            // Pure ACKs and the rest (SYN, FIN, ARP) carry no data.
            _ => self.cfg.adapter.ack_cycles,
        }
    }

    pub(super) fn adapter_run(&mut self, batch: Vec<Work>, run: &mut Run, out: &mut Outputs) {
        let a = self.cfg.adapter.clone();
        for w in batch {
            match w {
                Work::Frame(f) => {
                    run.cycles(self.frame_cycles(&f));
                    self.stack.input(f);
                }
                Work::SendData { bytes, inline } => {
                    run.cycles(a.message_cycles);
                    if !inline {
                        let done = self.bus.read(run.at, bytes.len() as u64, Purpose::TxData);
                        run.until(done);
                    }
                    self.pending_tx.push_back(bytes);
                }
                Work::PostReceive(n) => {
                    run.cycles(a.message_cycles * n as u64);
                    self.posted += n;
                }
                Work::OpenSocket => {
                    run.cycles(a.message_cycles);
                    self.open_stack();
                }
                Work::CloseSocket => {
                    run.cycles(a.message_cycles);
                    self.close_requested = true;
                }
                Work::Timer => {}
                other => unreachable!("{other:?} is host work"),
            }
        }
        let mut completed = self.fill_socket();
        self.poll_adapter_stack(run, out);
        // The ACKs just taken in may have made room for more of what waits.
        let queued = self.stack.send_queue(self.sock);
        let more = self.fill_socket();
        if more > 0 || self.stack.send_queue(self.sock) != queued {
            completed += more;
            self.poll_adapter_stack(run, out);
        }
        self.deliver(run, out);
        if completed > 0 {
            let done = self.bus.write(run.at, 16, Fill::Ready, Purpose::RxStatus);
            run.until(done);
            out.host.push(Work::Completion(completed));
        }
    }

    /// Move queued send data into the socket; returns the messages finished.
    fn fill_socket(&mut self) -> u32 {
        let mut completed = 0;
        while let Some(front) = self.pending_tx.front_mut() {
            let n = self.stack.send(self.sock, front);
            front.drain(..n);
            if !front.is_empty() {
                break;
            }
            self.pending_tx.pop_front();
            completed += 1;
        }
        if self.close_requested && self.pending_tx.is_empty() && !self.closing {
            self.closing = true;
            self.stack.close(self.sock);
        }
        completed
    }

    fn poll_adapter_stack(&mut self, run: &mut Run, out: &mut Outputs) {
        let frames = self.stack.poll(run.at);
        let cycles: u64 = frames.iter().map(|f| self.frame_cycles(f)).sum();
        run.cycles(cycles);
        out.frames.extend(frames);
    }

    /// Received bytes to the host's posted buffers, one batch per run: whole
    /// buffers only, or what there is once the socket buffer is too full to
    /// take another segment or the sender has finished (BRIEF.md: the adapter
    /// releases buffer space only when it hands a batch to the host). Freeing
    /// the socket buffer may open the window, so the stack runs again.
    fn deliver(&mut self, run: &mut Run, out: &mut Outputs) {
        let message = self.cfg.ttcp.message as usize;
        let readable = self.stack.readable(self.sock);
        let stuck = self.stack.recv_room(self.sock) < self.cfg.stack.mtu - 40 || self.stack.peer_closed(self.sock);
        let whole = (readable / message).min(self.posted as usize) * message;
        let n = if whole == 0 && stuck { readable.min(self.posted as usize * message) } else { whole };
        if n == 0 && (self.fin_delivered || !self.stack.peer_finished(self.sock)) {
            return;
        }
        let bytes = self.stack.recv(self.sock, n);
        let fin = !self.fin_delivered && self.stack.peer_finished(self.sock);
        let buffers = bytes.len().div_ceil(message) as u32;
        self.posted -= buffers;
        let done = self.bus.write(run.at, bytes.len() as u64 + 16, Fill::Ready, Purpose::RxData);
        run.until(done);
        if fin {
            self.fin_delivered = true;
            self.stack.close(self.sock);
        }
        out.host.push(Work::Delivery { bytes, buffers, fin });
        self.poll_adapter_stack(run, out);
    }
}
