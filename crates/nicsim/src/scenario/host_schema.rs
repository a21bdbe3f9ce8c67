//! The `[[host]]` tables of a scenario, as serde reads them.
//! docs/scenarios.md documents every key and default.

use schemars::JsonSchema;
use serde::Deserialize;

pub use crate::bus::settings::BusSpec;
use crate::host::config::{Costs, DriverConfig};
pub use crate::nic::settings::{AdapterKindSpec, AdapterSpec};
pub use crate::scenario::file_schema::{FileReadSpec, FileRequestSpec, FileServeSpec};
use crate::scenario::smart_schema::SendSpec;
use crate::scenario::ttcp_schema::TtcpSpec;
use crate::scenario::units::{BitRate, Frequency, TimeSpan};
use crate::stack::settings::StackSpec;

use crate::scenario::defaults::{one, yes};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Unique among all parts; no `:`.
    pub name: String,
    /// A host whose processors, bus and adapter cost nothing: only its
    /// applications, TCP and link remain (`name`, `warmup`, `file_request`, `file_serve`,
    /// `file_read`, `ttcp` and `tcp` are its keys).
    #[serde(default)]
    pub ideal: bool,
    /// Processors, 1 to 256.
    #[serde(default = "one")]
    pub cpus: i64,
    /// Processor clock (required unless the host is ideal).
    #[serde(default)]
    pub clock: Option<Frequency>,
    /// Protocol work on one processor at a time (a stack lock, as NT 4's).
    #[serde(default)]
    pub serialized_stack: bool,
    /// Application throughput is measured from this time on; it must be before the run's `duration`.
    #[serde(default)]
    pub warmup: TimeSpan,
    /// Its interfaces' MTU, 68 up to the scenario's `mtu` (the default): its TCP's
    /// segments and the MSS it advertises follow from it.
    #[serde(default)]
    pub mtu: Option<i64>,
    /// Processor cycles per event (`[host.costs]`; required unless the host is ideal).
    #[serde(default)]
    pub costs: Option<Costs>,
    /// How the driver learns of received frames and returns buffers (`[host.driver]`).
    #[serde(default)]
    pub driver: DriverConfig,
    /// The bus kind and its settings (`[host.bus]`; required unless the host is ideal).
    #[serde(default)]
    pub bus: Option<BusSpec>,
    /// Peer buses of the `[host.bus]` kind.
    #[serde(default = "one")]
    pub buses: i64,
    /// The host's adapters, in port order (`[[host.adapter]]`); one default
    /// adapter when none is given.
    #[serde(default = "one_adapter")]
    pub adapter: Vec<AdapterSpec>,
    /// Ask other hosts for files over TCP, and ask again when one arrives.
    #[serde(default)]
    pub file_request: Option<FileRequestSpec>,
    /// Serve blocks to the hosts whose `file_read` names this host.
    #[serde(default)]
    pub file_serve: Option<FileServeSpec>,
    /// Read blocks from another host's `file_serve`.
    #[serde(default)]
    pub file_read: Option<FileReadSpec>,
    /// A TTCP transfer, and its socket's settings.
    #[serde(default)]
    pub ttcp: Option<TtcpSpec>,
    /// The TTCP transfer's socket.
    #[serde(default)]
    pub tcp: StackSpec,
    /// Processes that are always ready to run (a busy run queue).
    #[serde(default)]
    pub background: Option<BackgroundSpec>,
    /// A switched segment of clients per adapter, generated.
    #[serde(default)]
    pub segments: Option<SegmentsSpec>,
    /// Count received frames that no session claims.
    #[serde(default)]
    pub sink: bool,
    /// Send frames to a sink as fast as the host and adapter take them, through
    /// a ring or programmable adapter.
    #[serde(default)]
    pub blast: Option<BlastSpec>,
    /// What the host sends through its programmable adapter (or the adapter's
    /// firmware makes itself).
    #[serde(default)]
    pub send: Option<SendSpec>,
    /// Applications own pinned buffers the adapters read and write: no copy
    /// between them and kernel or socket buffers (else `copy_ns_per_byte`), on a
    /// programmable adapter, an offload engine or the host's own stack.
    #[serde(default)]
    pub zero_copy: bool,
    /// The processor the host's TCP applications run on: their calls, and
    /// their part of each received segment's work, handed over from the
    /// processor that did its protocol work (waking it when idle: `costs.wakeup`,
    /// `costs.wakeup_latency`). By default, that same processor.
    #[serde(default)]
    pub app_cpu: Option<i64>,
    /// Devices write received frames into the last-level cache (Intel's DDIO),
    /// into the share of it given here; a frame that as many bytes of DMA
    /// followed before the driver took it was evicted, and its first touch
    /// waits `miss`.
    #[serde(default)]
    pub ddio: Option<DdioSpec>,
}

/// DMA into the last-level cache (`[host.ddio]`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DdioSpec {
    /// Bytes of the cache DMA may fill (DDIO's ways: 2 of 20 of a 15 MB cache
    /// are 1,572,864), 0 to 2^40; 0: DMA goes to memory, and every frame's
    /// first touch misses.
    pub bytes: i64,
    /// What the driver's first touch of an evicted frame costs: a load from
    /// memory.
    pub miss: TimeSpan,
}

/// One switched segment of clients per adapter (`scenario::segments`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SegmentsSpec {
    /// Ideal hosts on each adapter's switch, 1 to 4095.
    pub clients: i64,
    /// The rate of every link of the segment.
    pub rate: BitRate,
    /// Sessions per client.
    #[serde(default = "one")]
    pub sessions: i64,
    /// A client's pause between a block's last byte and its next request.
    #[serde(default)]
    pub think: TimeSpan,
    /// The switch's frames per output port.
    #[serde(default = "queue_frames")]
    pub queue_frames: i64,
    /// The switch's latency.
    #[serde(default = "no_time")]
    pub latency: TimeSpan,
}

fn queue_frames() -> i64 {
    256
}
fn no_time() -> TimeSpan {
    TimeSpan(crate::time::Duration::ZERO)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSpec {
    /// Processes always ready to run.
    pub processes: i64,
    /// How long each runs when its turn comes.
    pub slice: TimeSpan,
    /// The processor whose run queue they are in.
    #[serde(default)]
    pub cpu: i64,
}

fn one_adapter() -> Vec<AdapterSpec> {
    vec![AdapterSpec::default()]
}

/// The keys an ideal host may have: the rest describe what it does not model.
pub const IDEAL_KEYS: [&str; 9] = ["name", "ideal", "warmup", "mtu", "file_request", "file_serve", "file_read", "ttcp", "tcp"];

impl HostSpec {
    /// An ideal host (`ideal = true`) with nothing but a name and what it reads.
    pub fn ideal(name: String, file_read: Option<FileReadSpec>) -> HostSpec {
        HostSpec {
            name,
            ideal: true,
            cpus: 1,
            clock: None,
            serialized_stack: false,
            warmup: TimeSpan::default(),
            mtu: None,
            costs: None,
            driver: DriverConfig::default(),
            bus: None,
            buses: 1,
            adapter: Vec::new(),
            file_request: None,
            file_serve: None,
            file_read,
            ttcp: None,
            tcp: StackSpec::default(),
            background: None,
            segments: None,
            sink: false,
            blast: None,
            send: None,
            zero_copy: false,
            app_cpu: None,
            ddio: None,
        }
    }

    /// How many adapters (ports) the host has, counting each entry's copies.
    pub fn adapter_count(&self) -> i64 {
        self.adapter.iter().fold(0, |n: i64, a| n.saturating_add(a.count.max(0)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlastSpec {
    /// The sink the frames are addressed to.
    pub to: String,
    /// Bytes per frame, FCS included.
    pub frame_size: i64,
    /// The processor the sender runs on, through a ring adapter (through a
    /// programmable one its send calls run on the polling processor).
    #[serde(default)]
    pub cpu: i64,
    /// Frames built per step of the sending loop, or per send call through a
    /// programmable adapter (in one buffer, one DMA, when more than one).
    #[serde(default = "one")]
    pub burst: i64,
    /// UDP frames (else raw Ethernet).
    #[serde(default = "yes")]
    pub udp: bool,
    /// Frames to send in all; without it, for the whole run.
    #[serde(default)]
    pub count: Option<i64>,
}
