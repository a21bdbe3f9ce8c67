//! The intelligent adapter's hardware as timed resources: embedded processors
//! (each busy until its current work is done), the adapter memory port (a
//! calendar shared by the MAC, the DMA engines and the processors), one DMA engine
//! each way across the host bus, the MAC's transmit side, and the bridge that
//! routes every bus request by its address to adapter memory or across the host
//! bus to host memory. Bytes really move: host memory and adapter memory are
//! address spaces under one map, as the bridge sees them.

use crate::bus::calendar::Calendar;
use crate::bus::chunked::Chunked;
use crate::bus::{Fill, HostBus, Purpose};
use crate::mem::{AddressSpace, MemError, Memory, SpaceId};
use crate::nic::smart::config::AdapterConfig;
use crate::processor::Timeline;
use crate::time::{Duration, Time};
use crate::wire::ethernet::wire_time;

/// Where the bridge claims adapter memory in bus address space; host memory
/// answers below it.
pub const ADAPTER_BASE: u64 = 0x8000_0000_0000;
const HOST_BYTES: u64 = ADAPTER_BASE;
/// The memory port's arbitration unit: a DMA engine's bursts.
const BURST: u64 = 256;

/// What the adapter did, for the counters that prove a design.
#[derive(Debug, Default)]
pub struct Counters {
    /// Payload bytes written into adapter memory (zero for direct segmentation).
    pub memory_payload_written: u64,
    /// Every byte through the adapter memory port, either way.
    pub memory_bytes: u64,
    pub dma_transfers: u64,
    /// How long each DMA engine (host to adapter, adapter to host) was busy:
    /// start-ups and transfers.
    pub engine_busy: [Duration; 2],
    /// Bytes and transactions the adapter and host moved across the host bus.
    pub bus_bytes: u64,
    pub bus_transactions: u64,
}

pub struct Hw {
    pub cfg: AdapterConfig,
    pub mem: Memory,
    host: SpaceId,
    /// The embedded processors, each working in order.
    pub cpus: Vec<Timeline>,
    /// Chunked: its DMA bursts are booked across whole transfers, the MAC's
    /// accesses reaching back among them.
    memory_port: Calendar<Chunked>,
    engine_free: [Time; 2],
    mac_free: Time,
    /// Wire start times of frames handed to the MAC, the last `mac_tx_frames`.
    mac_queue: std::collections::VecDeque<Time>,
    pub c: Counters,
}

impl Hw {
    pub fn new(cfg: AdapterConfig) -> Self {
        let mut mem = Memory::default();
        let host = mem.add_space(AddressSpace::new("host memory", HOST_BYTES));
        let adapter = mem.add_space(AddressSpace::new("adapter memory", cfg.memory_bytes));
        mem.map(0, HOST_BYTES, host, 0).expect("host memory maps");
        mem.map(ADAPTER_BASE, cfg.memory_bytes, adapter, 0).expect("adapter memory maps");
        Hw {
            mem,
            host,
            cpus: (0..cfg.processors).map(|_| Timeline::new(cfg.clock)).collect(),
            memory_port: Calendar::new(Duration::from_ms(10)),
            engine_free: [Time::ZERO; 2],
            mac_free: Time::ZERO,
            mac_queue: Default::default(),
            c: Counters::default(),
            cfg,
        }
    }

    /// Run `cycles` of firmware on processor `cpu` from `at`; returns when done.
    /// The simulation has reached `now`: firmware and transfers may book the
    /// processors and the memory port ahead of it, and nothing before it is
    /// forgotten while a request may still reach it.
    pub fn settle(&mut self, now: Time) {
        self.memory_port.settle(now);
        for c in &mut self.cpus {
            c.settle(now);
        }
    }

    pub fn run(&mut self, cpu: usize, at: Time, cycles: u64) -> Time {
        let k = cpu.min(self.cpus.len() - 1);
        self.cpus[k].run(at, cycles)
    }

    /// Move `bytes` through the adapter memory port from `at`.
    pub fn memory(&mut self, at: Time, bytes: u64) -> Time {
        self.c.memory_bytes += bytes;
        let len = Duration::for_bits(bytes * 8, self.cfg.memory_bytes_per_s * 8);
        self.memory_port.reserve(at, |_| len).1
    }

    /// Move `bytes` through the memory port as a DMA engine streams them between
    /// `start` and `end`: in bursts spread over the transfer, so other masters
    /// (the MAC) get the port in between. Returns when the last burst is done.
    fn memory_streamed(&mut self, start: Time, end: Time, bytes: u64) -> Time {
        let bursts = bytes.div_ceil(BURST).max(1);
        let step = end.since(start).ps() / bursts;
        let mut done = end;
        for i in 0..bursts {
            let n = BURST.min(bytes - i * BURST);
            done = done.max(self.memory(start + Duration::from_ps(step * i), n));
        }
        done
    }

    fn bus_tally(&mut self, bytes: u64) {
        self.c.bus_bytes += bytes;
        self.c.bus_transactions += 1;
    }

    /// The host-to-adapter DMA engine copies `len` bytes from `from` (host) to
    /// `to` (adapter); `payload` marks data bytes for the counters.
    pub fn to_adapter(&mut self, bus: &mut HostBus, at: Time, from: u64, to: u64, len: usize, payload: bool) -> Result<Time, MemError> {
        let mut buf = vec![0u8; len];
        self.mem.read(from, &mut buf)?;
        self.mem.write(to, &buf)?;
        self.c.memory_payload_written += if payload { len as u64 } else { 0 };
        Ok(self.engine(0, at, len as u64, |start| bus.read(start, len as u64, Purpose::TxData)))
    }

    /// The adapter-to-host DMA engine copies `len` bytes from `from` (adapter) to `to` (host).
    pub fn to_host(&mut self, bus: &mut HostBus, at: Time, from: u64, to: u64, len: usize, purpose: Purpose) -> Result<Time, MemError> {
        let mut buf = vec![0u8; len];
        self.mem.read(from, &mut buf)?;
        self.write_host(bus, at, to, &buf, purpose)
    }

    /// The adapter-to-host engine writes `bytes` it holds (an event, a status) to host memory.
    pub fn write_host(&mut self, bus: &mut HostBus, at: Time, to: u64, bytes: &[u8], purpose: Purpose) -> Result<Time, MemError> {
        self.mem.write(to, bytes)?;
        let len = bytes.len() as u64;
        Ok(self.engine(1, at, len, |start| bus.write(start, len, Fill::Ready, purpose)))
    }

    /// DMA engine `k` takes a transfer of `len` bytes programmed at `at`: once
    /// free, it spends its start-up, then moves the data across the host bus
    /// (`on_bus`, from when the data may start) and through the memory port.
    fn engine(&mut self, k: usize, at: Time, len: u64, on_bus: impl FnOnce(Time) -> Time) -> Time {
        self.bus_tally(len);
        self.c.dma_transfers += 1;
        let taken = at.max(self.engine_free[k]);
        let start = taken + self.cfg.clock.cycles(self.cfg.dma_startup);
        let done = self.memory_streamed(start, on_bus(start), len);
        self.c.engine_busy[k] = self.c.engine_busy[k] + done.since(taken);
        self.engine_free[k] = done;
        done
    }

    /// A doorbell register write of the host reached the adapter (4 bytes across the host bus).
    pub fn doorbell_rung(&mut self) {
        self.bus_tally(4);
    }

    /// The MAC gathers a frame from `pieces` (bus address, length), each routed
    /// by the bridge: adapter memory through its port, host memory across the
    /// host bus. It may start once its FIFO has room. Returns when the frame is
    /// in the MAC, with its bytes.
    pub fn gather(&mut self, bus: &mut HostBus, at: Time, pieces: &[(u64, usize)]) -> Result<(Time, Vec<u8>), MemError> {
        let mut t = at.max(self.mac_room());
        let mut out = Vec::with_capacity(pieces.iter().map(|p| p.1).sum());
        for &(addr, len) in pieces {
            let start = out.len();
            out.resize(start + len, 0);
            let space = self.mem.read(addr, &mut out[start..])?;
            t = if space == self.host {
                self.bus_tally(len as u64);
                bus.read(t, len as u64, Purpose::TxData)
            } else {
                self.memory(t, len as u64)
            };
        }
        Ok((t, out))
    }

    /// When the MAC's transmit FIFO has room for another frame: once the frame
    /// `mac_tx_frames` places ahead has started on the wire.
    pub fn mac_room(&self) -> Time {
        if self.mac_queue.len() >= self.cfg.mac_tx_frames as usize {
            self.mac_queue[0]
        } else {
            Time::ZERO
        }
    }

    /// The MAC sends a frame of `len` bytes that is ready at `ready`: returns the
    /// time its first bit goes on the wire (frames leave in order).
    pub fn transmit(&mut self, ready: Time, len: usize) -> Time {
        let start = ready.max(self.mac_free);
        self.mac_free = start + wire_time(len, self.cfg.link_rate_bps);
        self.mac_queue.push_back(start);
        if self.mac_queue.len() > self.cfg.mac_tx_frames as usize {
            self.mac_queue.pop_front();
        }
        start
    }

    /// When the last frame handed to the MAC has left it.
    pub fn wire_idle_at(&self) -> Time {
        self.mac_free
    }

    /// How long DMA engine `k` was busy up to `end` (transfers it has queued
    /// past the end of the run are not counted).
    pub fn engine_busy(&self, k: usize, end: Time) -> Duration {
        let ahead = self.engine_free[k].since(end.min(self.engine_free[k]));
        Duration(self.c.engine_busy[k].0.saturating_sub(ahead.0))
    }

    /// How long the memory port was busy up to `end`.
    pub fn memory_busy(&self, end: Time) -> Duration {
        self.memory_port.busy_until(end)
    }

    /// The cycles of firmware all processors ran.
    pub fn cycles(&self) -> u64 {
        self.cpus.iter().map(|c| c.account.cycles()).sum()
    }
}
