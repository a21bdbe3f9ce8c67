//! What a scenario sets on a modelled host: its processors and their costs, the
//! driver's policy, the bus, the adapter and the applications.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bus::BusConfig;
use crate::device::DeviceFactory;
use crate::host::sessions::SessionConfig;
use crate::link::SourceConfig;
use crate::nic::smart::config::SmartConfig;
use crate::nic::NicConfig;
use crate::stack::StackConfig;
use crate::time::{Clock, Duration};
use crate::toe::engine::EngineConfig;
use crate::units::{count, cycles, per_byte, time_span, TimeSpan};

/// Processor cycles per event (`[host.costs]`), of the host clock unless the
/// name says otherwise; required unless the host is ideal. docs/model.md gives
/// each one's source.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// Taking an interrupt and reaching the handler.
    #[serde(deserialize_with = "cycles")]
    pub interrupt_entry: u64,
    /// Leaving the handler.
    #[serde(deserialize_with = "cycles")]
    pub interrupt_exit: u64,
    /// Driver work per received frame (descriptor, buffer, hand-off).
    #[serde(deserialize_with = "cycles")]
    pub rx_frame: u64,
    /// Protocol work per received frame or segment (one per GRO batch).
    #[serde(deserialize_with = "cycles")]
    pub protocol_segment: u64,
    /// Protocol and driver work per transmitted frame (per send's segments with TSO).
    #[serde(deserialize_with = "cycles")]
    pub tx_frame: u64,
    /// Memory time of a copy, ns per byte: the driver's copy, and a TTCP application's to and from
    /// socket buffers (a copy of data just written by DMA runs at memory speed, not processor speed).
    #[serde(default, deserialize_with = "per_byte")]
    pub copy_ns_per_byte: f64,
    /// Application work per request made or answered, and per TTCP send or receive call.
    #[serde(default, deserialize_with = "cycles")]
    pub app_request: u64,
    /// One poll of one adapter's ring, found work or not.
    #[serde(default, deserialize_with = "cycles")]
    pub poll: u64,
    /// Per frame each way, the media work only a dumb adapter leaves to the host (an intelligent
    /// one fills the receive control block's fields and builds the media header itself).
    #[serde(default, deserialize_with = "cycles")]
    pub media_frame: u64,
    /// Freeing and allocating a receive buffer, when `buffers = "reallocate"`.
    #[serde(default, deserialize_with = "cycles")]
    pub rx_alloc: u64,
    /// How long each allocation holds the memory the adapter writes to.
    #[serde(default, deserialize_with = "time_span")]
    #[schemars(with = "TimeSpan", extend("default" = "0s"))]
    pub alloc_stall: Duration,
    /// Handling one completion or delivery message from a TCP offload engine,
    /// or one event from a programmable adapter's event ring.
    #[serde(default, deserialize_with = "cycles")]
    pub completion: u64,
    /// GRO in the driver, per segment it merges.
    #[serde(default, deserialize_with = "cycles")]
    pub gro_segment: u64,
    /// Handing one frame to another processor's queue (an XDP program's
    /// redirect into the CPU map), on the processor that hands it.
    #[serde(default, deserialize_with = "cycles")]
    pub handoff: u64,
    /// Waking an idle processor that work was handed to (its interrupt and
    /// the scheduler's switch to the thread that takes the work), on that processor.
    #[serde(default, deserialize_with = "cycles")]
    pub wakeup: u64,
    /// From the wake-up's interrupt to the idle processor running (leaving its sleep state).
    #[serde(default, deserialize_with = "time_span")]
    #[schemars(with = "TimeSpan", extend("default" = "0s"))]
    pub wakeup_latency: Duration,
}

/// How the driver learns of received frames (docs/model.md, "Notification").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DriverMode {
    /// The interrupt handler takes each frame (copying it when `copy`), returns
    /// its buffer and queues deferred protocol work (NT 4, the IBM study).
    Handler,
    /// NAPI: the interrupt schedules a poll of up to `budget` frames; the
    /// interrupt is re-enabled only when a poll finds fewer.
    #[default]
    Napi,
    /// A processor polls the ring for ever and takes no interrupts (DPDK).
    Poll,
    /// The operating system's polling process (NetWare): one process of the run
    /// queue on `poll_cpu`, so it polls less often as other work fills the queue;
    /// empty polls while nothing else is ready are idle time. Interrupts are
    /// masked unless the adapter's interrupt is the polling backup.
    OsPoll,
}

/// What the driver does with the buffer of a received frame (Walravens and Gaidioz, CERN 2007: recycling or reallocating).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Buffers {
    /// A fixed pool: the descriptor is reset and the buffer posted again.
    #[default]
    Recycle,
    /// The buffer goes up the stack and a new one is allocated for the ring.
    Reallocate,
}

/// Where received frames' protocol work runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Deferred {
    /// On the processor that took the interrupt (Linux's softirq).
    #[default]
    Interrupted,
    /// On any processor, once the handler run that queued it has ended (NT 4's
    /// deferred tasks in the IBM study).
    Any,
}

/// Where the handler's frame loop runs (handler mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Handler {
    /// In the interrupt, before any deferred work.
    #[default]
    Interrupt,
    /// Queued by the interrupt as a deferred procedure call behind the deferred
    /// work already queued on its processor, which runs first (NDIS miniports on
    /// Windows NT: the ISR queues MiniportHandleInterrupt).
    Dpc,
}

/// How the driver learns of received frames and returns buffers (`[host.driver]`).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DriverConfig {
    /// "handler", "napi", "poll" (a processor polls for ever) or "os-poll" (the OS's polling
    /// process).
    pub mode: DriverMode,
    /// The handler copies each received frame (handler mode).
    pub copy: bool,
    /// Receive buffers handed back per tail write; below the ring size.
    #[serde(deserialize_with = "count::<4096, _>")]
    pub refill_batch: u32,
    /// Frames per poll (NAPI weight, DPDK burst).
    #[serde(deserialize_with = "count::<65536, _>")]
    pub budget: u32,
    /// Frames per transmit tail write.
    #[serde(deserialize_with = "count::<4096, _>")]
    pub tx_tail_batch: u32,
    /// The polling processor in the poll modes.
    pub poll_cpu: u32,
    /// With mode "poll": the applications' processor (`app_cpu`, else
    /// `poll_cpu`) polls every queue itself, taking each frame through the
    /// stack to the applications there (Linux's busy polling, its interrupts
    /// deferred), not each queue on its vector's processor.
    pub busy_poll: bool,
    /// "recycle" (a fixed pool) or "reallocate" (a new buffer per frame).
    pub buffers: Buffers,
    /// Merge in-order data segments of one connection, queued together for the
    /// protocol, into one pass (GRO), by the adapter's GRO rule: the same ACK
    /// number and options, no flag but ACK (PSH or FIN joins and ends the
    /// merge), the IPv4 ID following on, a shorter segment last, at most 64 KB.
    /// Other connections' segments may come between, up to 8 merges held at
    /// once, and a NAPI poll's merges last until it ends, as in Linux.
    pub gro: bool,
    /// Where the protocol work of received frames runs: "interrupted" (on the processor that
    /// took the interrupt, as Linux's softirq) or "any" (on any processor, once the handler run
    /// that queued it has ended, as NT 4's deferred tasks in the IBM study).
    pub deferred: Deferred,
    /// Handler mode: where the handler's frame loop runs. "interrupt": in the interrupt, before
    /// any deferred work; "dpc": the interrupt queues it as a deferred procedure call behind the
    /// deferred work already queued on its processor, which runs first (NDIS miniports on
    /// Windows NT: the ISR queues MiniportHandleInterrupt).
    pub handler: Handler,
    /// An XDP program the driver runs on every received frame before the stack
    /// sees it (`[host.driver.xdp]`): its verdict drops the frame, passes it up,
    /// sends it back out of its adapter or redirects it out of another.
    #[schemars(with = "Option<crate::xdp::XdpKeys>")]
    pub xdp: Option<crate::xdp::Xdp>,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            mode: DriverMode::Napi,
            copy: false,
            refill_batch: 1,
            budget: 64,
            tx_tail_batch: 1,
            poll_cpu: 0,
            busy_poll: false,
            buffers: Buffers::Recycle,
            gro: false,
            deferred: Deferred::Interrupted,
            handler: Handler::Interrupt,
            xdp: None,
        }
    }
}

/// Processes that are always ready to run (a busy run queue), each for `slice`
/// when its turn comes, on processor `cpu`.
#[derive(Clone, Debug, PartialEq)]
pub struct BackgroundConfig {
    pub processes: u32,
    pub slice: Duration,
    pub cpu: u32,
}

/// Send frames as fast as the host and adapter take them. Through a ring
/// adapter the sender is a process on `cpu` that builds `burst` frames a step
/// when the ring has room for them; through an event-ring adapter each send
/// call builds `burst` frames (in one buffer, one DMA, when more than one:
/// packet fragmentation) and `outstanding` calls are kept posted, the next
/// made on the polling processor as one completes.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSenderConfig {
    pub frames: SourceConfig,
    pub cpu: u32,
    /// Frames built per step of the sending loop, or per send call.
    pub burst: u32,
    /// Frames to send in all (`None`: for ever).
    pub count: Option<u64>,
    /// The adapter it leaves by.
    pub port: usize,
    /// Send calls kept posted at once through an event-ring adapter.
    pub outstanding: u32,
}

/// One adapter of a host and the peer bus it sits on.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterSlot {
    pub nic: NicConfig,
    /// Its port on the wire (a multi-queue adapter's queues share one), and
    /// which of the adapter's `queues` it is.
    pub wire: usize,
    pub queue: u16,
    pub queues: u16,
    /// The key of its RSS hash.
    pub rss_key: [u8; 40],
    pub bus: usize,
    /// The processor that takes its interrupt (its affinity).
    pub irq_cpu: usize,
    /// A TCP offload engine, with the TTCP transfer the host runs over it.
    pub offload: Option<OffloadConfig>,
    /// A programmable adapter, with the workload the host runs through it.
    pub programmable: Option<SmartConfig>,
    /// A device of a kind the configuration does not describe (a test
    /// adapter), made in place of the one it describes; the host runs the
    /// driver its interface asks for.
    pub device: Option<DeviceFactory>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OffloadConfig {
    pub engine: EngineConfig,
    /// The session of each of the engine's sockets: the host's TTCP end and
    /// its file sessions.
    pub roles: Vec<crate::host::sessions::Role>,
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
    /// The adapter that reaches each station (the first, where several do),
    /// for frames to one not heard from yet; empty with one adapter.
    pub routes: Vec<([u8; 6], usize)>,
    /// Seeds the stack's initial sequence numbers.
    pub seed: u64,
    pub background: Option<BackgroundConfig>,
    /// Count (and drop) received frames that no session claims.
    pub sink: bool,
    pub blast: Option<FrameSenderConfig>,
    /// `[host.send]`'s frames, through its first programmable adapter.
    pub send: Option<FrameSenderConfig>,
    /// Application throughput is measured from this time on.
    pub warmup: Duration,
    /// Applications' buffers are pinned: no copy to or from socket buffers
    /// (the host's stack) or an offload engine's message buffers.
    pub zero_copy: bool,
    /// The processor the TCP applications run on, if not where their
    /// segments' protocol work ran.
    pub app_cpu: Option<usize>,
    /// DMA into the last-level cache: none modelled when absent.
    pub ddio: Option<Ddio>,
}

/// DDIO (`[host.ddio]`): devices write received frames into `bytes` of the
/// last-level cache; a frame that `bytes` more of DMA followed before the
/// driver took it was evicted to memory (with `bytes` 0, every frame: DMA to
/// memory), and the driver's first touch of it waits `miss`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ddio {
    pub bytes: u64,
    pub miss: Duration,
}
