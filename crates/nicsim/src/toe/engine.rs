//! The TCP offload engine as an adapter of a modelled host (the HP i960RN
//! design, Ang, HPL-2001-8): the adapter's processor runs the whole TCP/IP
//! stack behind a socket-level message interface. Host messages, received
//! frames and the stack's timer wait in one queue; when the processor is free
//! it takes everything waiting as one run (`processor::run`), handled to
//! completion, so a busy processor batches by itself. The stack then runs
//! once, what the host asked to send goes into each socket as room allows,
//! received bytes go to the host's posted buffers by DMA, and completions go
//! back in one message per socket and run. Each socket serves one of the
//! host's sessions.

use std::collections::VecDeque;

use crate::bus::{Fill, HostBus, Purpose};
use crate::processor::run::Run;
use crate::processor::Timeline;
use crate::stack::tally::{classify, Class};
use crate::stack::{Sock, SocketConfig, Stack, StackConfig};
use crate::time::{Duration, Time};
use crate::toe::config::AdapterConfig;
use crate::toe::work::{Message, Work};

/// How one of the engine's sockets opens when the host asks.
#[derive(Clone, Debug, PartialEq)]
pub enum Open {
    Listen(u16),
    Connect { ip: [u8; 4], port: u16, local: u16 },
}

/// One socket the host's applications use.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketPlan {
    pub socket: SocketConfig,
    pub open: Open,
    /// The size of each receive buffer the host posts (its read size).
    pub buffer: u32,
    /// Received bytes go up in whole buffers (a bulk receiver's, as on the HP
    /// adapter), else whatever a run finds.
    pub whole_buffers: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    pub adapter: AdapterConfig,
    pub stack: StackConfig,
    pub sockets: Vec<SocketPlan>,
    pub seed: u64,
}

/// A socket's state on the engine.
#[derive(Debug, Default)]
struct Conn {
    sock: Sock,
    /// Host sends waiting for room in the socket, in order, each with when its
    /// data is in adapter memory (the DMA engine's read done).
    pending_tx: VecDeque<(Time, Vec<u8>)>,
    close_requested: bool,
    closing: bool,
    posted: u32,
    fin_delivered: bool,
    /// The connection has been open (a socket closed before it ever was has
    /// nothing to finish).
    connected: bool,
}

/// What a run hands on when it ends: frames for the MAC, and messages the host
/// finds in its memory (each one's DMA done within the run).
#[derive(Debug, Default)]
pub struct RunOut {
    pub frames: Vec<Vec<u8>>,
    pub to_host: Vec<Message>,
}

pub struct Engine {
    pub cfg: EngineConfig,
    pub stack: Stack,
    conns: Vec<Conn>,
    pub processor: Timeline,
    /// Work waiting for the next run.
    waiting: Vec<Work>,
    pub private_bus: HostBus,
    /// Frames leave the MAC in the order the stack made them.
    tx_free: Time,
    /// The run under way, and what it hands on at its end.
    pub running: Option<(Run, RunOut)>,
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Engine {
        let mut stack = Stack::new(&cfg.stack, cfg.seed);
        let conns: Vec<Conn> = cfg.sockets.iter().map(|s| Conn { sock: stack.open(&s.socket), ..Conn::default() }).collect();
        // A listening socket is open when the run starts, as on a host whose stack
        // runs on its own processors (a server is up before its clients call): a
        // SYN in the first microseconds finds it, not a closed port.
        for (c, s) in conns.iter().zip(&cfg.sockets) {
            if let Open::Listen(port) = s.open {
                stack.listen(c.sock, port).expect("ports are checked with the scenario");
            }
        }
        Engine {
            processor: Timeline::new(cfg.adapter.clock),
            waiting: Vec::new(),
            private_bus: HostBus::new(cfg.adapter.private_bus.clone(), Duration::from_ms(1)),
            stack,
            conns,
            tx_free: Time::ZERO,
            running: None,
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
    /// its connections are all closed (TIME-WAIT would only stretch the run).
    pub fn next_timer(&mut self, now: Time) -> Option<Time> {
        if self.conns.iter().all(|c| self.stack.closed(c.sock)) {
            return None;
        }
        // A DMA read finishing wakes the firmware, which queues its data.
        let dma = self.conns.iter().filter_map(|c| c.pending_tx.iter().map(|(t, _)| *t).find(|t| *t > now)).min();
        [self.stack.poll_at(now), dma].into_iter().flatten().min()
    }

    /// Firmware cycles for a frame taken in (`received`) or sent out.
    fn frame_cycles(&self, frame: &[u8], received: bool) -> u64 {
        match classify(frame) {
            Class::Data { .. } if received => self.cfg.adapter.rx_packet_cycles,
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
                    run.cycles(self.frame_cycles(&f.bytes, true));
                    self.stack.input(f);
                }
                Work::Host(Message::SendData { s, bytes, inline }) => {
                    run.cycles(message_cycles);
                    // The firmware programs the DMA engine and goes on (p. 8 of the
                    // report: "when DMA completes, iNIC code is once again invoked").
                    let ready = if inline { run.at } else { host_bus.read(run.at, bytes.len() as u64, Purpose::TxData) };
                    self.conns[s].pending_tx.push_back((ready, bytes));
                }
                Work::Host(Message::PostReceive(s, n)) => {
                    run.cycles(message_cycles * n as u64);
                    self.conns[s].posted += n;
                }
                Work::Host(Message::OpenSocket(s)) => {
                    run.cycles(message_cycles);
                    let sock = self.conns[s].sock;
                    if let Open::Connect { ip, port, local } = self.cfg.sockets[s].open {
                        self.stack.connect(sock, ip, port, local).expect("addresses are checked with the scenario");
                    }
                }
                Work::Host(Message::CloseSocket(s)) => {
                    run.cycles(message_cycles);
                    self.conns[s].close_requested = true;
                }
                Work::Timer => {}
                other => unreachable!("{other:?} is host work"),
            }
        }
        let mut completed: Vec<u32> = (0..self.conns.len()).map(|s| self.fill_socket(s, run.at)).collect();
        self.poll(run, out);
        // The ACKs just taken in may have made room for more of what waits.
        let mut again = false;
        for (s, done) in completed.iter_mut().enumerate() {
            let queued = self.stack.send_queue(self.conns[s].sock);
            let more = self.fill_socket(s, run.at);
            *done += more;
            again |= more > 0 || self.stack.send_queue(self.conns[s].sock) != queued;
        }
        if again {
            self.poll(run, out);
        }
        for s in 0..self.conns.len() {
            self.deliver(s, run, out, host_bus);
        }
        for (s, n) in completed.into_iter().enumerate().filter(|(_, n)| *n > 0) {
            run.until(host_bus.write(run.at, 16, Fill::Ready, Purpose::RxStatus));
            out.to_host.push(Message::Completion(s, n));
        }
    }

    /// Move socket `s`'s queued send data that is in adapter memory by `now`
    /// into it; returns the messages finished.
    fn fill_socket(&mut self, s: usize, now: Time) -> u32 {
        let c = &mut self.conns[s];
        let mut completed = 0;
        while let Some((ready, front)) = c.pending_tx.front_mut() {
            if *ready > now {
                break;
            }
            let n = self.stack.send(c.sock, front);
            front.drain(..n);
            if !front.is_empty() {
                break;
            }
            c.pending_tx.pop_front();
            completed += 1;
        }
        if c.close_requested && c.pending_tx.is_empty() && !c.closing {
            c.closing = true;
            self.stack.close(c.sock);
        }
        completed
    }

    fn poll(&mut self, run: &mut Run, out: &mut RunOut) {
        let frames = self.stack.poll(run.at);
        run.cycles(frames.iter().map(|f| self.frame_cycles(&f.bytes, false)).sum());
        out.frames.extend(frames.into_iter().map(|f| f.bytes));
    }

    /// Received bytes to the host's posted buffers, one batch per run: whole
    /// buffers only, or what there is once the socket buffer is too full to
    /// take another segment or the sender has finished (Ang, HPL-2001-8, p. 12: the adapter
    /// releases buffer space only when it hands a batch to the host). Freeing
    /// the socket buffer may open the window, so the stack runs again.
    fn deliver(&mut self, s: usize, run: &mut Run, out: &mut RunOut, host_bus: &mut HostBus) {
        let (c, plan) = (&mut self.conns[s], &self.cfg.sockets[s]);
        c.connected |= self.stack.established(c.sock);
        let finished = c.connected && self.stack.peer_finished(c.sock);
        let buffer = plan.buffer as usize;
        let readable = self.stack.readable(c.sock);
        let room = readable.min(c.posted as usize * buffer);
        let n = if plan.whole_buffers {
            let stuck = self.stack.recv_room(c.sock) < self.cfg.stack.mtu - 40 || self.stack.peer_closed(c.sock);
            let whole = (readable / buffer).min(c.posted as usize) * buffer;
            if whole == 0 && stuck {
                room
            } else {
                whole
            }
        } else {
            room
        };
        if n == 0 && (c.fin_delivered || !finished) {
            return;
        }
        let bytes = self.stack.recv(c.sock, n);
        let fin = !c.fin_delivered && c.connected && self.stack.peer_finished(c.sock);
        let buffers = bytes.len().div_ceil(buffer) as u32;
        c.posted -= buffers;
        run.until(host_bus.write(run.at, bytes.len() as u64 + 16, Fill::Ready, Purpose::RxData));
        if fin {
            c.fin_delivered = true;
            self.stack.close(c.sock);
        }
        out.to_host.push(Message::Delivery { s, bytes, buffers, fin });
        self.poll(run, out);
    }
}
