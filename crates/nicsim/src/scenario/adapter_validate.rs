//! Checks a host's `[[host.adapter]]` entries: each ring adapter's hardware and
//! moderation, each offload engine's, and the TTCP session an engine carries.

use crate::host::config::{AdapterSlot, OffloadConfig};
use crate::host::sessions::FileApp;
use crate::host::sessions::{Role, SessionConfig};
use crate::nic::rss::VERIFICATION_KEY;
use crate::nic::{Moderation, NicConfig, ProcessorConfig, Transfer, TxDone, ITR_UNIT, RDTR_UNIT};
use crate::scenario::adapter_schema::{TransferSpec, TxDoneSpec, BACKUP_LOW_BUFFERS};
use crate::scenario::checks::within;
use crate::scenario::host_schema::{AdapterKindSpec, AdapterSpec, HostSpec, InterruptSpec};
use crate::scenario::smart_validate::programmable_config;
use crate::scenario::surroundings::Surroundings;
use crate::scenario::ScenarioError;
use crate::stack::{SocketConfig, StackConfig};
use crate::time::Duration;
use crate::toe::config::AdapterConfig;
use crate::toe::engine::{EngineConfig, Open, SocketPlan};
use crate::toe::settings::OffloadSpec;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// The host's adapters in port order, each entry's copies one after another;
/// port `i` is on bus `i % buses` unless its entry names a bus.
/// A key set (to other than its default) that the adapter's kind has no use
/// for: the ring keys on any other kind, and the interrupt keys on a
/// programmable adapter (an offload engine interrupts the host as a ring
/// adapter does).
fn foreign_key(a: &AdapterSpec) -> Option<(&'static str, &'static str)> {
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
    let interrupt = first_set!(interrupt, irq_cpu, interrupt_interval, coalesce_frames, coalesce_time, backup_timeout, backup_low_buffers);
    let ring = ring.map(|k| (k, "applies only to a ring adapter (kind = \"ring\")"));
    let interrupt = interrupt.map(|k| (k, "does not apply: a programmable adapter's interrupt is masked (the host polls its event ring)"));
    match a.kind {
        AdapterKindSpec::Ring => None,
        AdapterKindSpec::Toe => ring,
        AdapterKindSpec::Programmable => ring.or(interrupt),
    }
}

/// The host's first programmable adapter runs its `send` workload
/// (`needs_end`: it would run for ever without a scenario duration).
pub(crate) fn adapter_slots(
    h: &HostSpec,
    path: &str,
    buses: u32,
    s: &Surroundings,
    needs_end: &mut bool,
) -> Result<Vec<(AdapterSlot, Option<AdapterConfig>)>, ScenarioError> {
    let link_rates = &s.link_rates;
    if h.adapter.is_empty() {
        return err(format!("{path}.adapter"), "give the host at least one adapter");
    }
    let mut slots = Vec::new();
    let mut port = 0;
    for (i, a) in h.adapter.iter().enumerate() {
        let ap = format!("{path}.adapter[{i}]");
        let count = within(format!("{ap}.count"), a.count, 1, 64)?;
        let bus = a.bus.map(|b| within(format!("{ap}.bus"), b, 0, buses as i64 - 1)).transpose()?;
        let queues = queue_cpus(a, &ap, h.cpus)?;
        let rss_key = a.rss_key.as_deref().map_or(Ok(VERIFICATION_KEY), |k| rss_key(k, &format!("{ap}.rss_key")))?;
        for _ in 0..count {
            let Some(&rate) = link_rates.get(port) else {
                return err(format!("{path}.adapter"), format!("more than {} adapters in all", link_rates.len()));
            };
            if let Some((key, why)) = foreign_key(a) {
                return err(format!("{ap}.{key}"), why);
            }
            let nic = nic_config(a, &ap, rate)?;
            let bus = bus.map_or(port % buses as usize, |b| b as usize);
            if a.toe.is_some() && a.kind != AdapterKindSpec::Toe {
                return err(format!("{ap}.toe"), "applies only with kind = \"toe\"");
            }
            if a.programmable.is_some() && a.kind != AdapterKindSpec::Programmable {
                return err(format!("{ap}.programmable"), "applies only with kind = \"programmable\"");
            }
            let offload = match (a.kind, &a.toe) {
                (AdapterKindSpec::Toe, t) => {
                    Some(ScenarioError::field(&format!("{ap}.toe"), t.as_ref().unwrap_or(&OffloadSpec::default()).config())?)
                }
                _ => None,
            };
            let programmable = match a.kind {
                AdapterKindSpec::Programmable => {
                    let first = !slots.iter().any(|(a, _): &(AdapterSlot, _)| a.programmable.is_some());
                    Some(programmable_config(h, a.programmable.as_ref(), &ap, rate, first, s, needs_end)?)
                }
                _ => None,
            };
            let n = queues.len() as u16;
            if n > 1 && (nic.rx_fifo / n as u64) < 2048 {
                return err(
                    format!("{ap}.queues"),
                    format!("each of {n} queues' share of rx_fifo ({} bytes) must hold a full frame (2 KB)", nic.rx_fifo / n as u64),
                );
            }
            // The receive packet buffer is split evenly between the queues.
            let nic = NicConfig { rx_fifo: nic.rx_fifo / n as u64, ..nic };
            for (q, &irq_cpu) in queues.iter().enumerate() {
                let slot = AdapterSlot {
                    nic: nic.clone(),
                    wire: port,
                    queue: q as u16,
                    queues: n,
                    rss_key,
                    bus,
                    irq_cpu,
                    offload: None,
                    programmable: programmable.clone(),
                    device: None,
                };
                slots.push((slot, offload.clone()));
            }
            port += 1;
        }
    }
    if h.send.is_some() && !slots.iter().any(|(a, _)| a.programmable.is_some()) {
        return err(format!("{path}.send"), "runs through a programmable adapter: give the host one (kind = \"programmable\")");
    }
    Ok(slots)
}

/// A 40-byte key written in hex, its bytes apart by colons or not.
fn rss_key(text: &str, path: &str) -> Result<[u8; 40], ScenarioError> {
    let digits: String = text.chars().filter(|c| *c != ':').collect();
    let bytes = (0..digits.len())
        .step_by(2)
        .map(|i| digits.get(i..i + 2).and_then(|d| u8::from_str_radix(d, 16).ok()))
        .collect::<Option<Vec<u8>>>();
    match bytes {
        Some(b) if b.len() == 40 => Ok(b.try_into().expect("40 bytes")),
        Some(b) => err(path, format!("must be 40 bytes (80 hex digits), got {}", b.len())),
        None => err(path, format!("must be hex digits, two a byte (\"6d:5a:...\"), got {text:?}")),
    }
}

/// The processor of each queue's interrupt vector: `irq_cpus`, one per queue,
/// or queue q's on `irq_cpu` + q around the host's processors.
fn queue_cpus(a: &AdapterSpec, ap: &str, cpus: i64) -> Result<Vec<usize>, ScenarioError> {
    let queues = within(format!("{ap}.queues"), a.queues, 1, 64)? as usize;
    let first = within(format!("{ap}.irq_cpu"), a.irq_cpu, 0, cpus - 1)? as usize;
    match &a.irq_cpus {
        None => Ok((0..queues).map(|q| (first + q) % cpus as usize).collect()),
        Some(list) if list.len() != queues => {
            err(format!("{ap}.irq_cpus"), format!("give one processor per queue: {queues}, got {}", list.len()))
        }
        Some(list) => {
            list.iter().enumerate().map(|(q, &k)| within(format!("{ap}.irq_cpus[{q}]"), k, 0, cpus - 1).map(|k| k as usize)).collect()
        }
    }
}

/// Each TCP offload engine of a host, with no sessions yet: `carry` gives
/// each the sessions whose far end it reaches, once every session is known.
pub(crate) fn offload_engines(s: &Surroundings, adapters: &mut [(AdapterSlot, Option<AdapterConfig>)]) {
    for (slot, engine) in adapters.iter_mut() {
        if let Some(adapter) = engine.take() {
            let stack = StackConfig { mac: s.me.mac, ip: s.me.ipv4, mtu: s.mtu as usize, neighbors: Default::default(), tso: false };
            let engine = EngineConfig { adapter, stack, sockets: Vec::new(), seed: s.seed };
            slot.offload = Some(OffloadConfig { engine, roles: Vec::new() });
        }
    }
}

/// A session onto an offload engine, a socket of its own: a TTCP end takes
/// the host's `tcp` table (`ttcp`, whose BSD-derived stack acknowledges on
/// window updates unless `tcp.ack_policy` says otherwise) and hands up whole
/// buffers of its message size; a file session keeps its table's socket and
/// hands up what each run finds.
pub(crate) fn carry(o: &mut OffloadConfig, x: SessionConfig, ttcp: &SocketConfig) {
    let (open, buffer, whole_buffers, socket) = match x.role {
        Role::Send { ip, port, message, .. } => (Open::Connect { ip, port, local: x.port }, message, true, ttcp.clone()),
        Role::Receive { message } => (Open::Listen(x.port), message, true, ttcp.clone()),
        Role::Ask { ip, port, .. } => (Open::Connect { ip, port, local: x.port }, FileApp::buffer(&x.role), false, x.socket),
        Role::Answer { .. } => (Open::Listen(x.port), FileApp::buffer(&x.role), false, x.socket),
    };
    o.engine.sockets.push(SocketPlan { socket, open, buffer, whole_buffers });
    o.roles.push(x.role);
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

fn nic_config(a: &AdapterSpec, path: &str, link_rate: u64) -> Result<NicConfig, ScenarioError> {
    let n = |key: &str, v: i64| within(format!("{path}.{key}"), v, 0, 1 << 30);
    let moderation = match a.interrupt {
        InterruptSpec::PerFrame => Moderation::PerFrame,
        InterruptSpec::MinInterval => match a.interrupt_interval {
            Some(t) => Moderation::MinInterval(in_units(t.0, ITR_UNIT)),
            None => return err(format!("{path}.interrupt_interval"), "needed with interrupt = \"min-interval\""),
        },
        InterruptSpec::Coalesce => match (a.coalesce_frames, a.coalesce_time) {
            (Some(f), Some(t)) => {
                Moderation::Coalesce { frames: within(format!("{path}.coalesce_frames"), f, 1, 65_536)? as u32, time: t.0 }
            }
            _ => return err(path, "interrupt = \"coalesce\" needs coalesce_frames and coalesce_time"),
        },
        InterruptSpec::Backup => match a.backup_timeout {
            Some(t) if t.0 > Duration::ZERO => Moderation::Backup {
                timeout: t.0,
                low_buffers: within(format!("{path}.backup_low_buffers"), a.backup_low_buffers.unwrap_or(BACKUP_LOW_BUFFERS), 0, 1 << 20)?
                    as u32,
            },
            _ => return err(format!("{path}.backup_timeout"), "needed (above zero) with interrupt = \"backup\""),
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
            return err(format!("{path}.{key}"), format!("applies only with interrupt = {:?}", interrupt_name(needs)));
        }
    }
    let processor = match (a.intelligent, a.processor_clock, a.processor_frame_cycles) {
        (false, _, _) => None,
        (true, Some(clock), Some(cycles)) => Some(ProcessorConfig {
            clock: clock.0,
            frame_cycles: within(format!("{path}.processor_frame_cycles"), cycles, 0, 100_000_000)?,
        }),
        _ => return err(format!("{path}.intelligent"), "an intelligent adapter needs processor_clock and processor_frame_cycles"),
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
        tx_in_flight: a.tx_in_flight.map(|v| within(format!("{path}.tx_in_flight"), v, 1, 65_535)).transpose()?.map(|v| v as u32),
        tx_done: match a.tx_done {
            TxDoneSpec::Read => TxDone::Read,
            TxDoneSpec::Sent => TxDone::Sent,
        },
        processor,
        tso: a.tso,
        transfer: transfer(a, path)?,
    };
    ScenarioError::at_field(path, cfg.check())?;
    Ok(cfg)
}

/// Who moves the adapter's frames; a DMA rate only for the system's controller.
fn transfer(a: &AdapterSpec, path: &str) -> Result<Transfer, ScenarioError> {
    if a.dma_rate.is_some() && a.transfer != TransferSpec::SystemDma {
        return err(format!("{path}.dma_rate"), "applies only with transfer = \"system-dma\"");
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
