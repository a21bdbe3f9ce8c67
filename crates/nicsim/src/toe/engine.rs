//! The TCP offload engine as an adapter of a modelled host (BRIEF.md mechanism
//! 7, the HP i960RN design): the adapter's processor runs the whole TCP/IP
//! stack behind a socket-level message interface. Host messages, received
//! frames and the stack's timer wait in one queue; when the processor is free
//! it takes everything waiting as one run (`processor::run`), handled to
//! completion, so a busy processor batches by itself. The stack then runs once, what the host asked to send goes
//! into the socket as room allows, received bytes go to the host's posted
//! buffers by DMA, and completions go back in one message per run.

use std::collections::VecDeque;

use crate::bus::{Fill, HostBus, Purpose};
use crate::processor::run::Run;
use crate::processor::Timeline;
use crate::stack::tally::{classify, Class};
use crate::stack::{Sock, SocketConfig, Stack, StackConfig};
use crate::time::{Duration, Time};
use crate::toe::config::AdapterConfig;
use crate::toe::work::Work;

/// How the engine's one socket opens when the host asks.
#[derive(Clone, Debug, PartialEq)]
pub enum Open {
    Listen(u16),
    Connect { ip: [u8; 4], port: u16, local: u16 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    pub adapter: AdapterConfig,
    pub stack: StackConfig,
    pub socket: SocketConfig,
    pub open: Open,
    /// The size of each receive buffer the host posts (its read size).
    pub buffer: u32,
    pub seed: u64,
}

/// What a run hands on when it ends: frames for the MAC, and messages the host
/// finds in its memory (each one's DMA done within the run).
#[derive(Debug, Default)]
pub struct RunOut {
    pub frames: Vec<Vec<u8>>,
    pub to_host: Vec<Work>,
}

pub struct Engine {
    pub cfg: EngineConfig,
    pub stack: Stack,
    sock: Sock,
    pub processor: Timeline,
    /// Work waiting for the next run.
    waiting: Vec<Work>,
    pub private_bus: HostBus,
    /// Frames leave the MAC in the order the stack made them.
    tx_free: Time,
    pending_tx: VecDeque<Vec<u8>>,
    close_requested: bool,
    closing: bool,
    posted: u32,
    fin_delivered: bool,
    /// The connection has been open (a socket closed before it ever was has
    /// nothing to finish).
    connected: bool,
    /// The run under way, and what it hands on at its end.
    pub running: Option<(Run, RunOut)>,
    pub timer_at: Option<Time>,
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Engine {
        let mut stack = Stack::new(&cfg.stack, cfg.seed);
        let sock = stack.open(&cfg.socket);
        Engine {
            processor: Timeline::new(cfg.adapter.clock),
            waiting: Vec::new(),
            private_bus: HostBus::new(cfg.adapter.private_bus.clone(), Duration::from_ms(1)),
            stack,
            sock,
            tx_free: Time::ZERO,
            pending_tx: VecDeque::new(),
            close_requested: false,
            closing: false,
            posted: 0,
            fin_delivered: false,
            connected: false,
            running: None,
            timer_at: None,
            cfg,
        }
    }

    /// A frame from the wire is in adapter memory when this returns.
    pub fn receive(&mut self, now: Time, len: usize) -> Time {
        self.private_bus.settle(now);
        self.private_bus.write(now, len as u64, Fill::Ready, Purpose::RxData)
    }

    /// A frame the stack made goes on the wire at the returned time: the MAC
    /// fetches it from adapter memory, after the frames before it.
    pub fn transmit(&mut self, now: Time, len: usize) -> Time {
        self.private_bus.settle(now);
        let fetched = self.private_bus.read(now, len as u64, Purpose::TxData);
        self.tx_free = fetched.max(self.tx_free);
        self.tx_free
    }

    /// Queue `w`; true when the processor is free and a run should start now.
    pub fn push(&mut self, w: Work) -> bool {
        self.waiting.push(w);
        self.running.is_none()
    }

    /// Start a run at `now` of everything waiting; returns when it ends. Data
    /// the host named and the messages to it cross `host_bus`.
    pub fn start_run(&mut self, now: Time, host_bus: &mut HostBus) -> Time {
        let batch = std::mem::take(&mut self.waiting);
        let mut run = Run::new(now, self.processor.account.clock);
        let mut out = RunOut::default();
        self.run(batch, &mut run, &mut out, host_bus);
        let end = run.at;
        self.running = Some((run, out));
        end
    }

    /// The run ended: what it hands on, and whether another should start.
    pub fn end_run(&mut self) -> (RunOut, bool) {
        let (run, out) = self.running.take().expect("a run is under way");
        self.processor.book(&run);
        (out, !self.waiting.is_empty())
    }

    /// When the stack next needs a run (retransmission, delayed ACK), unless
    /// its connection is closed (TIME-WAIT would only stretch the run).
    pub fn next_timer(&mut self, now: Time) -> Option<Time> {
        if self.stack.closed(self.sock) {
            return None;
        }
        self.stack.poll_at(now)
    }

    fn frame_cycles(&self, frame: &[u8]) -> u64 {
        match classify(frame) {
            Class::Data { .. } => self.cfg.adapter.packet_cycles,
            // Pure ACKs and the rest (SYN, FIN, ARP) carry no data.
            _ => self.cfg.adapter.ack_cycles,
        }
    }

    fn run(&mut self, batch: Vec<Work>, run: &mut Run, out: &mut RunOut, host_bus: &mut HostBus) {
        let message_cycles = self.cfg.adapter.message_cycles;
        for w in batch {
            match w {
                Work::Frame(f) => {
                    run.cycles(self.frame_cycles(&f));
                    self.stack.input(f);
                }
                Work::SendData { bytes, inline } => {
                    run.cycles(message_cycles);
                    if !inline {
                        run.until(host_bus.read(run.at, bytes.len() as u64, Purpose::TxData));
                    }
                    self.pending_tx.push_back(bytes);
                }
                Work::PostReceive(n) => {
                    run.cycles(message_cycles * n as u64);
                    self.posted += n;
                }
                Work::OpenSocket => {
                    run.cycles(message_cycles);
                    let opened = match self.cfg.open {
                        Open::Listen(port) => self.stack.listen(self.sock, port),
                        Open::Connect { ip, port, local } => self.stack.connect(self.sock, ip, port, local),
                    };
                    opened.expect("addresses are checked with the scenario");
                }
                Work::CloseSocket => {
                    run.cycles(message_cycles);
                    self.close_requested = true;
                }
                Work::Timer => {}
                other => unreachable!("{other:?} is host work"),
            }
        }
        let mut completed = self.fill_socket();
        self.poll(run, out);
        // The ACKs just taken in may have made room for more of what waits.
        let queued = self.stack.send_queue(self.sock);
        let more = self.fill_socket();
        if more > 0 || self.stack.send_queue(self.sock) != queued {
            completed += more;
            self.poll(run, out);
        }
        self.deliver(run, out, host_bus);
        if completed > 0 {
            run.until(host_bus.write(run.at, 16, Fill::Ready, Purpose::RxStatus));
            out.to_host.push(Work::Completion(completed));
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

    fn poll(&mut self, run: &mut Run, out: &mut RunOut) {
        let frames = self.stack.poll(run.at);
        run.cycles(frames.iter().map(|f| self.frame_cycles(&f.bytes)).sum());
        out.frames.extend(frames.into_iter().map(|f| f.bytes));
    }

    /// Received bytes to the host's posted buffers, one batch per run: whole
    /// buffers only, or what there is once the socket buffer is too full to
    /// take another segment or the sender has finished (BRIEF.md: the adapter
    /// releases buffer space only when it hands a batch to the host). Freeing
    /// the socket buffer may open the window, so the stack runs again.
    fn deliver(&mut self, run: &mut Run, out: &mut RunOut, host_bus: &mut HostBus) {
        self.connected |= self.stack.established(self.sock);
        let finished = self.connected && self.stack.peer_finished(self.sock);
        let buffer = self.cfg.buffer as usize;
        let readable = self.stack.readable(self.sock);
        let stuck = self.stack.recv_room(self.sock) < self.cfg.stack.mtu - 40 || self.stack.peer_closed(self.sock);
        let whole = (readable / buffer).min(self.posted as usize) * buffer;
        let n = if whole == 0 && stuck { readable.min(self.posted as usize * buffer) } else { whole };
        if n == 0 && (self.fin_delivered || !finished) {
            return;
        }
        let bytes = self.stack.recv(self.sock, n);
        let fin = !self.fin_delivered && self.connected && self.stack.peer_finished(self.sock);
        let buffers = bytes.len().div_ceil(buffer) as u32;
        self.posted -= buffers;
        run.until(host_bus.write(run.at, bytes.len() as u64 + 16, Fill::Ready, Purpose::RxData));
        if fin {
            self.fin_delivered = true;
            self.stack.close(self.sock);
        }
        out.to_host.push(Work::Delivery { bytes, buffers, fin });
        self.poll(run, out);
    }
}
