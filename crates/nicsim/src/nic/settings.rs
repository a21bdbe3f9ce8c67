//! An adapter's settings (`[[host.adapter]]`: ring, TCP offload engine or
//! programmable): the table as serde reads it, which keys its kind takes, and
//! the ring adapter's check into a `NicConfig`, whose errors name the key (an
//! offload engine's and a programmable adapter's tables check themselves:
//! `toe::settings`, `nic::smart::settings`). docs/scenario-keys.md lists every
//! key with its default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::nic::smart::settings::ProgrammableSpec;
use crate::nic::{Moderation, NicConfig, ProcessorConfig, Transfer, TxDone, ITR_UNIT, RDTR_UNIT};
use crate::settings::{defaults, within};
use crate::time::Duration;
use crate::toe::settings::OffloadSpec;
use crate::units::{BitRate, Frequency, TimeSpan};

defaults! {
    one: i64 = 1;
}

/// With `interrupt = "backup"`: the receive buffers left that interrupt at once.
pub const BACKUP_LOW_BUFFERS: i64 = 4;

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum InterruptSpec {
    #[default]
    PerFrame,
    MinInterval,
    Coalesce,
    /// Polling with interrupt backup.
    Backup,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AdapterKindSpec {
    #[default]
    Ring,
    Toe,
    Programmable,
}

/// A ring adapter's defaults: the 8254x's (`NicConfig::gigabit`).
mod ring {
    use crate::nic::NicConfig;
    macro_rules! from_gigabit {
        ($($key:ident),*) => {
            $(pub fn $key() -> i64 {
                NicConfig::gigabit().$key as i64
            })*
        };
    }
    from_gigabit!(rx_fifo, tx_fifo, rx_dma_threshold, rx_ring, tx_ring, rx_desc_cache, rx_desc_fetch, tx_desc_fetch);
    from_gigabit!(rx_writeback, tx_writeback, status_wait_clocks, rx_completion_bytes, rx_buffer_frames);
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdapterSpec {
    /// Copies of this adapter, each a port of its own.
    #[serde(default = "one")]
    pub count: i64,
    /// The peer bus it is on (all its copies); without it, port `i` is on bus `i % buses`.
    pub bus: Option<i64>,
    /// "ring": a bus-master adapter with descriptor rings; "toe": a TCP offload
    /// engine whose processor runs the host's TCP (settings in `toe`);
    /// "programmable": embedded processors and memory running firmware
    /// (settings in `programmable`).
    #[serde(default)]
    pub kind: AdapterKindSpec,
    /// The offload engine's processor and host interface (with kind = "toe").
    #[serde(default)]
    pub toe: Option<OffloadSpec>,
    /// The programmable adapter's processors, memory, firmware and receive
    /// stages (required with kind = "programmable").
    #[serde(default)]
    pub programmable: Option<ProgrammableSpec>,
    /// Receive packet buffer, bytes.
    #[serde(default = "ring::rx_fifo")]
    pub rx_fifo: i64,
    /// Transmit packet buffer, bytes.
    #[serde(default = "ring::tx_fifo")]
    pub tx_fifo: i64,
    /// Bytes of a frame in the receive FIFO before its DMA may start.
    #[serde(default = "ring::rx_dma_threshold")]
    pub rx_dma_threshold: i64,
    /// Receive descriptors, a multiple of 8.
    #[serde(default = "ring::rx_ring")]
    pub rx_ring: i64,
    /// Transmit descriptors, a multiple of 8.
    #[serde(default = "ring::tx_ring")]
    pub tx_ring: i64,
    /// Receive descriptors the adapter holds on chip.
    #[serde(default = "ring::rx_desc_cache")]
    pub rx_desc_cache: i64,
    /// Receive descriptors fetched in one read.
    #[serde(default = "ring::rx_desc_fetch")]
    pub rx_desc_fetch: i64,
    /// Transmit descriptors fetched in one read.
    #[serde(default = "ring::tx_desc_fetch")]
    pub tx_desc_fetch: i64,
    /// Receive descriptors written back in one write.
    #[serde(default = "ring::rx_writeback")]
    pub rx_writeback: i64,
    /// Transmit descriptors written back in one write.
    #[serde(default = "ring::tx_writeback")]
    pub tx_writeback: i64,
    /// Bytes of one receive completion written back: 16, the descriptor
    /// itself (the 8254x's); 64, a completion queue entry (mlx5's).
    #[serde(default = "ring::rx_completion_bytes")]
    pub rx_completion_bytes: i64,
    /// Completions written back together are compressed: the first whole,
    /// the others as 8-byte mini completions, eight to each 64-byte entry
    /// (mlx5's compressed completion sessions).
    #[serde(default)]
    pub cqe_compression: bool,
    /// Frames one posted receive buffer takes (multi-packet receive buffers,
    /// mlx5's striding receive queue): one descriptor fetched for that many.
    #[serde(default = "ring::rx_buffer_frames")]
    pub rx_buffer_frames: i64,
    /// PCI target wait states on each descriptor write-back.
    #[serde(default = "ring::status_wait_clocks")]
    pub status_wait_clocks: i64,
    /// The FCS is stripped before DMA (else its 4 bytes cross the bus).
    #[serde(default)]
    pub strip_crc: bool,
    /// "per-frame", "min-interval", "coalesce", or "backup" (polling with interrupt backup).
    #[serde(default)]
    pub interrupt: InterruptSpec,
    /// The host processor that takes its interrupt, every time (its affinity, from 0).
    #[serde(default)]
    pub irq_cpu: i64,
    /// Receive and transmit queue pairs, 1 to 64: RSS steers each received frame
    /// to a queue by the Toeplitz hash of its addresses and ports, and each queue
    /// has its rings, its share of the receive packet buffer and an interrupt
    /// vector of its own.
    #[serde(default = "one")]
    pub queues: i64,
    /// The processor each queue's vector is bound to, one per queue (by default
    /// queue q's on irq_cpu + q, around the host's processors).
    #[serde(default)]
    pub irq_cpus: Option<Vec<i64>>,
    /// The RSS hash's 40-byte secret key, as ethtool writes it ("6d:5a:56:...",
    /// colons optional); by default Microsoft's verification key, the default of
    /// Linux drivers and the 82599.
    #[serde(default)]
    pub rss_key: Option<String>,
    /// With "min-interval": the least time between interrupts (in 256 ns units).
    pub interrupt_interval: Option<TimeSpan>,
    /// With "coalesce": interrupt after this many completions ...
    pub coalesce_frames: Option<i64>,
    /// With "coalesce": ... or this long after the first.
    pub coalesce_time: Option<TimeSpan>,
    /// With "backup": the longest a received frame may wait unpolled.
    pub backup_timeout: Option<TimeSpan>,
    /// With "backup": interrupt at once when this few receive buffers are left.
    #[schemars(extend("default" = BACKUP_LOW_BUFFERS))]
    pub backup_low_buffers: Option<i64>,
    /// A partial write-back group waits this long for more frames (1.024 us units; none: it goes as
    /// soon as no frame waits, or none that waits has a buffer to go to).
    pub rx_writeback_delay: Option<TimeSpan>,
    /// Only in-order TCP data of one connection waits for a write-back group;
    /// any other frame is written back at once.
    #[serde(default)]
    pub rx_writeback_data_only: bool,
    /// The adapter also interrupts as each frame it sends is done (its transmit
    /// completion sets the cause register), not only for received frames.
    #[serde(default)]
    pub tx_interrupt: bool,
    /// Frames its driver keeps handed to it at once, sent or not yet reclaimed
    /// (default: as many as the transmit ring holds). 1: the driver starts each
    /// frame from the pass that reclaims the one before, as a driver that
    /// transmits from its interrupt handler does.
    pub tx_in_flight: Option<i64>,
    /// When it writes a sent frame's status back: "read" (once the frame is in
    /// its FIFO, the 8254x's) or "sent" (once its last bit is on the wire, the
    /// status reporting how the transmission went, as a command block's does).
    #[serde(default)]
    pub tx_done: TxDoneSpec,
    /// An intelligent adapter: its processor does the per-frame media work.
    #[serde(default)]
    pub intelligent: bool,
    /// The processor's clock and per-frame cycles (used when `intelligent`).
    pub processor_clock: Option<Frequency>,
    /// An intelligent adapter's cycles per frame, each way.
    pub processor_frame_cycles: Option<i64>,
    /// Segmentation offload (TSO): the host's stack hands it sends of up to 64 KB, which it cuts
    /// into segments and sums; the host's transmit work is once per send.
    #[serde(default)]
    pub tso: bool,
    /// Who moves frames between the adapter and host memory (the Novell AppNote's designs):
    /// "bus-master" (the adapter, by DMA), "pio" (the host processor through an I/O port),
    /// "shared-memory" (the host processor through a window on the adapter's memory) or
    /// "system-dma" (the system's DMA controller, at `dma_rate`). Other than a bus master, frames
    /// wait in the adapter's packet memory (`rx_fifo`) until the host moves them.
    #[serde(default)]
    pub transfer: TransferSpec,
    /// With "system-dma": the controller's rate (default: an 8237 at 4.77 MHz, two bytes per
    /// four-clock transfer, 19.08 Mb/s).
    pub dma_rate: Option<BitRate>,
}

/// When an adapter writes a sent frame's status back (`tx_done`).
#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TxDoneSpec {
    #[default]
    Read,
    Sent,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TransferSpec {
    #[default]
    BusMaster,
    Pio,
    SharedMemory,
    SystemDma,
}

impl Default for AdapterSpec {
    fn default() -> Self {
        toml::from_str("").expect("every adapter key has a default")
    }
}

/// `t` in whole units of a hardware timer register (nearest, at least one).
fn in_units(t: Duration, unit: Duration) -> Duration {
    unit * ((t.ps() + unit.ps() / 2) / unit.ps()).max(1)
}

fn interrupt_name(i: InterruptSpec) -> &'static str {
    match i {
        InterruptSpec::PerFrame => "per-frame",
        InterruptSpec::MinInterval => "min-interval",
        InterruptSpec::Coalesce => "coalesce",
        InterruptSpec::Backup => "backup",
    }
}

impl AdapterSpec {
    /// A key set (to other than its default) that the adapter's kind has no use
    /// for: the ring keys on any other kind, and the interrupt keys on a
    /// programmable adapter (an offload engine interrupts the host as a ring
    /// adapter does).
    pub fn foreign_key(&self) -> Option<(&'static str, &'static str)> {
        let a = self;
        let d = AdapterSpec::default();
        macro_rules! first_set {
            ($($key:ident),*) => {
                [$((stringify!($key), a.$key != d.$key)),*].into_iter().find(|(_, set)| *set).map(|(k, _)| k)
            };
        }
        let ring = first_set!(
            queues,
            irq_cpus,
            rss_key,
            rx_fifo,
            tx_fifo,
            rx_dma_threshold,
            rx_ring,
            tx_ring,
            rx_desc_cache,
            rx_desc_fetch,
            tx_desc_fetch,
            rx_writeback,
            tx_writeback,
            rx_completion_bytes,
            cqe_compression,
            rx_buffer_frames,
            status_wait_clocks,
            strip_crc,
            rx_writeback_delay,
            rx_writeback_data_only,
            tx_interrupt,
            tx_in_flight,
            tx_done,
            intelligent,
            processor_clock,
            processor_frame_cycles,
            tso,
            transfer,
            dma_rate
        );
        let interrupt =
            first_set!(interrupt, irq_cpu, interrupt_interval, coalesce_frames, coalesce_time, backup_timeout, backup_low_buffers);
        let ring = ring.map(|k| (k, "applies only to a ring adapter (kind = \"ring\")"));
        let interrupt =
            interrupt.map(|k| (k, "does not apply: a programmable adapter's interrupt is masked (the host polls its event ring)"));
        match a.kind {
            AdapterKindSpec::Ring => None,
            AdapterKindSpec::Toe => ring,
            AdapterKindSpec::Programmable => ring.or(interrupt),
        }
    }

    /// The ring adapter on a link of `link_rate` (an offload engine's host
    /// interface too); an error says "key: what is wrong".
    pub fn nic_config(&self, link_rate: u64) -> Result<NicConfig, String> {
        let a = self;
        let n = |key: &str, v: i64| within(key, v, 0, 1 << 30);
        let moderation = match a.interrupt {
            InterruptSpec::PerFrame => Moderation::PerFrame,
            InterruptSpec::MinInterval => match a.interrupt_interval {
                Some(t) => Moderation::MinInterval(in_units(t.0, ITR_UNIT)),
                None => return Err("interrupt_interval: needed with interrupt = \"min-interval\"".into()),
            },
            InterruptSpec::Coalesce => match (a.coalesce_frames, a.coalesce_time) {
                (Some(f), Some(t)) => Moderation::Coalesce { frames: within("coalesce_frames", f, 1, 65_536)? as u32, time: t.0 },
                _ => return Err("interrupt = \"coalesce\" needs coalesce_frames and coalesce_time".into()),
            },
            InterruptSpec::Backup => match a.backup_timeout {
                Some(t) if t.0 > Duration::ZERO => Moderation::Backup {
                    timeout: t.0,
                    low_buffers: within("backup_low_buffers", a.backup_low_buffers.unwrap_or(BACKUP_LOW_BUFFERS), 0, 1 << 20)? as u32,
                },
                _ => return Err("backup_timeout: needed (above zero) with interrupt = \"backup\"".into()),
            },
        };
        let keys = [("interrupt_interval", a.interrupt_interval.is_some(), InterruptSpec::MinInterval)];
        let keys = keys.into_iter().chain([
            ("coalesce_frames", a.coalesce_frames.is_some(), InterruptSpec::Coalesce),
            ("coalesce_time", a.coalesce_time.is_some(), InterruptSpec::Coalesce),
            ("backup_timeout", a.backup_timeout.is_some(), InterruptSpec::Backup),
            ("backup_low_buffers", a.backup_low_buffers.is_some(), InterruptSpec::Backup),
        ]);
        for (key, set, needs) in keys {
            if set && a.interrupt != needs {
                return Err(format!("{key}: applies only with interrupt = {:?}", interrupt_name(needs)));
            }
        }
        let processor = match (a.intelligent, a.processor_clock, a.processor_frame_cycles) {
            (false, _, _) => None,
            (true, Some(clock), Some(cycles)) => {
                Some(ProcessorConfig { clock: clock.0, frame_cycles: within("processor_frame_cycles", cycles, 0, 100_000_000)? })
            }
            _ => return Err("intelligent: an intelligent adapter needs processor_clock and processor_frame_cycles".into()),
        };
        let cfg = NicConfig {
            link_rate_bps: link_rate,
            rx_fifo: n("rx_fifo", a.rx_fifo)?,
            tx_fifo: n("tx_fifo", a.tx_fifo)?,
            rx_dma_threshold: n("rx_dma_threshold", a.rx_dma_threshold)?,
            rx_ring: n("rx_ring", a.rx_ring)? as u32,
            tx_ring: n("tx_ring", a.tx_ring)? as u32,
            rx_desc_cache: n("rx_desc_cache", a.rx_desc_cache)? as u32,
            rx_desc_fetch: n("rx_desc_fetch", a.rx_desc_fetch)? as u32,
            tx_desc_fetch: n("tx_desc_fetch", a.tx_desc_fetch)? as u32,
            rx_writeback: n("rx_writeback", a.rx_writeback)? as u32,
            tx_writeback: n("tx_writeback", a.tx_writeback)? as u32,
            rx_completion_bytes: n("rx_completion_bytes", a.rx_completion_bytes)?,
            cqe_compression: a.cqe_compression,
            rx_buffer_frames: n("rx_buffer_frames", a.rx_buffer_frames)? as u32,
            status_wait_clocks: n("status_wait_clocks", a.status_wait_clocks)?,
            strip_crc: a.strip_crc,
            moderation,
            rx_writeback_delay: a.rx_writeback_delay.map(|t| in_units(t.0, RDTR_UNIT)),
            rx_writeback_data_only: a.rx_writeback_data_only,
            tx_interrupt: a.tx_interrupt,
            tx_in_flight: a.tx_in_flight.map(|v| within("tx_in_flight", v, 1, 65_535)).transpose()?.map(|v| v as u32),
            tx_done: match a.tx_done {
                TxDoneSpec::Read => TxDone::Read,
                TxDoneSpec::Sent => TxDone::Sent,
            },
            processor,
            tso: a.tso,
            transfer: transfer(a)?,
        };
        cfg.check()?;
        Ok(cfg)
    }
}

/// Who moves the adapter's frames; a DMA rate only for the system's controller.
fn transfer(a: &AdapterSpec) -> Result<Transfer, String> {
    if a.dma_rate.is_some() && a.transfer != TransferSpec::SystemDma {
        return Err("dma_rate: applies only with transfer = \"system-dma\"".into());
    }
    Ok(match a.transfer {
        TransferSpec::BusMaster => Transfer::BusMaster,
        TransferSpec::Pio => Transfer::Pio,
        TransferSpec::SharedMemory => Transfer::SharedMemory,
        TransferSpec::SystemDma => Transfer::SystemDma { rate_bps: a.dma_rate.map_or(DMA_8237_BPS, |r| r.0) },
    })
}

/// An 8237 at 4.77 MHz moves two bytes per four-clock transfer: 2.385 MB/s.
const DMA_8237_BPS: u64 = 19_080_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> AdapterSpec {
        toml::from_str(text).expect("an adapter table")
    }

    #[test]
    fn an_empty_table_is_the_gigabit_ring_adapter() {
        let cfg = spec("").nic_config(1_000_000_000).expect("valid");
        assert_eq!(cfg, NicConfig { link_rate_bps: 1_000_000_000, ..NicConfig::gigabit() });
    }

    #[test]
    fn an_error_names_the_key() {
        assert_eq!(
            spec("interrupt = \"min-interval\"").nic_config(1).unwrap_err(),
            "interrupt_interval: needed with interrupt = \"min-interval\""
        );
        assert_eq!(spec("coalesce_frames = 4").nic_config(1).unwrap_err(), "coalesce_frames: applies only with interrupt = \"coalesce\"");
        assert_eq!(spec("dma_rate = \"1Mbps\"").nic_config(1).unwrap_err(), "dma_rate: applies only with transfer = \"system-dma\"");
    }

    #[test]
    fn a_kind_refuses_the_keys_it_has_no_use_for() {
        assert_eq!(spec("rx_ring = 8").foreign_key(), None);
        assert_eq!(spec("kind = \"toe\"\nrx_ring = 8").foreign_key().map(|k| k.0), Some("rx_ring"));
        assert_eq!(spec("kind = \"programmable\"\ninterrupt = \"backup\"").foreign_key().map(|k| k.0), Some("interrupt"));
        assert_eq!(
            spec("kind = \"toe\"\ninterrupt = \"backup\"").foreign_key(),
            None,
            "an offload engine interrupts as a ring adapter does"
        );
    }
}
