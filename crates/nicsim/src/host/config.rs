//! What a scenario sets on a modelled host: its processors and their costs, the
//! driver's policy, the bus, the adapter and the applications.

use crate::bus::BusConfig;
use crate::host::sessions::SessionConfig;
use crate::link::SourceConfig;
use crate::nic::smart::config::SmartConfig;
use crate::nic::NicConfig;
use crate::stack::StackConfig;
use crate::time::{Clock, Duration};
use crate::toe::engine::EngineConfig;

/// Processor costs, in cycles of the host clock unless the name says otherwise.
/// docs/model.md gives each one's source.
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// Taking an interrupt and reaching the handler; leaving it.
    pub interrupt_entry: u64,
    pub interrupt_exit: u64,
    /// Driver work per received frame (descriptor, buffer, hand-off).
    pub rx_frame: u64,
    /// Copying received bytes into another buffer, nanoseconds per byte: a copy
    /// of data just written by DMA runs at memory speed, not processor speed.
    pub copy_ns_per_byte: f64,
    /// Protocol work per received frame or segment (deferred in the handler mode).
    pub protocol_segment: u64,
    /// Protocol and driver work per transmitted frame.
    pub tx_frame: u64,
    /// Application work per request it makes or answers.
    pub app_request: u64,
    /// One call of a poll routine, found work or not.
    pub poll: u64,
    /// Per frame each way, the work an intelligent adapter does itself (filling
    /// the receive control block's fields, building the media header); the host
    /// pays it only with a dumb adapter.
    pub media_frame: u64,
    /// Freeing a received buffer and allocating its replacement, per frame, when
    /// the driver does not recycle buffers; and how long that stalls the memory
    /// the adapter writes to.
    pub rx_alloc: u64,
    pub alloc_stall: Duration,
    /// Handling one completion or delivery message from an offload engine, or
    /// one event of a programmable adapter.
    pub completion: u64,
    /// GRO in the driver, per segment merged.
    pub gro_segment: u64,
}

/// How the driver learns of received frames (BRIEF.md mechanism 8, so far).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverMode {
    /// The interrupt handler takes each frame (copying it when `copy`), returns
    /// its buffer and queues deferred protocol work (NT 4, the IBM study).
    Handler,
    /// NAPI: the interrupt schedules a poll of up to `budget` frames; the
    /// interrupt is re-enabled only when a poll finds fewer.
    Napi,
    /// A processor polls the ring for ever and takes no interrupts (DPDK).
    Poll,
    /// The operating system's polling process (NetWare): one process of the run
    /// queue on `poll_cpu`, so it polls less often as other work fills the queue;
    /// empty polls while nothing else is ready are idle time. Interrupts are
    /// masked unless the adapter's interrupt is the polling backup.
    OsPoll,
}

/// What the driver does with the buffer of a received frame (BRIEF.md mechanism 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffers {
    /// A fixed pool: the descriptor is reset and the buffer posted again.
    Recycle,
    /// The buffer goes up the stack and a new one is allocated for the ring.
    Reallocate,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DriverConfig {
    pub mode: DriverMode,
    /// Whether received bytes are copied to another buffer by the driver.
    pub copy: bool,
    /// Receive buffers returned to the adapter per tail write.
    pub refill_batch: u32,
    /// Frames per poll (NAPI budget, DPDK burst).
    pub budget: u32,
    /// Frames per transmit tail write.
    pub tx_tail_batch: u32,
    /// The processor that polls, in the poll modes.
    pub poll_cpu: u32,
    pub buffers: Buffers,
    /// GRO: consecutive in-order data segments of one connection, queued
    /// together for the protocol, pass it once.
    pub gro: bool,
    /// Received frames' protocol work runs on any processor once the handler
    /// run that queued it ends (NT 4); else on the processor that took the
    /// interrupt (a softirq).
    pub deferred_anywhere: bool,
    /// The interrupt only queues the handler's frame loop as a deferred
    /// procedure call, behind the deferred work already queued on its
    /// processor (NT); else the loop runs in the interrupt, before it.
    pub handler_dpc: bool,
}

/// Processes that are always ready to run (a busy run queue), each for `slice`
/// when its turn comes, on processor `cpu`.
#[derive(Clone, Debug, PartialEq)]
pub struct BackgroundConfig {
    pub processes: u32,
    pub slice: Duration,
    pub cpu: u32,
}

/// Send frames as fast as the host and adapter take them, from one processor.
#[derive(Clone, Debug, PartialEq)]
pub struct BlastConfig {
    pub frames: SourceConfig,
    pub cpu: u32,
    /// Frames built per step of the sending loop.
    pub burst: u32,
    /// Frames to send in all (`None`: for ever).
    pub count: Option<u64>,
}

/// One adapter of a host and the peer bus it sits on.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterSlot {
    pub nic: NicConfig,
    pub bus: usize,
    /// The processor that takes its interrupt (its affinity).
    pub irq_cpu: usize,
    /// A TCP offload engine, with the TTCP transfer the host runs over it.
    pub offload: Option<OffloadConfig>,
    /// A programmable adapter, with the workload the host runs through it.
    pub programmable: Option<SmartConfig>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OffloadConfig {
    pub engine: EngineConfig,
    /// The TTCP end the host's application runs over it.
    pub role: crate::host::sessions::Role,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostConfig {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub cpus: u32,
    pub clock: Clock,
    /// Protocol work on one processor at a time (a stack lock).
    pub serialized_stack: bool,
    pub costs: Costs,
    pub driver: DriverConfig,
    /// The bus kind; there are `buses` peer buses of it.
    pub bus: BusConfig,
    pub buses: u32,
    /// The adapters in port order: adapter `i` is port `i`.
    pub adapters: Vec<AdapterSlot>,
    /// The host's TCP/IP stack (smoltcp) and its sessions (file requests or
    /// file service); no sessions, no stack.
    pub stack: StackConfig,
    pub sessions: Vec<SessionConfig>,
    /// Seeds the stack's initial sequence numbers.
    pub seed: u64,
    pub background: Option<BackgroundConfig>,
    /// Count (and drop) received frames that no session claims.
    pub sink: bool,
    pub blast: Option<BlastConfig>,
    /// Application throughput is measured from this time on.
    pub warmup: Duration,
}
