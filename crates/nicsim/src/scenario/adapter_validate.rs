//! Checks a host's `[[host.adapter]]` entries: each ring adapter's hardware and
//! moderation, each offload engine's, and the TTCP session an engine carries.

use crate::host::config::{AdapterSlot, OffloadConfig};
use crate::host::sessions::FileApp;
use crate::host::sessions::{Role, SessionConfig};
use crate::nic::rss::VERIFICATION_KEY;
use crate::nic::NicConfig;
use crate::scenario::checks::within;
use crate::scenario::host_schema::{AdapterKindSpec, AdapterSpec, HostSpec};
use crate::scenario::smart_validate::programmable_config;
use crate::scenario::surroundings::Surroundings;
use crate::scenario::ScenarioError;
use crate::stack::{SocketConfig, StackConfig};
use crate::toe::config::AdapterConfig;
use crate::toe::engine::{EngineConfig, Open, SocketPlan};
use crate::toe::settings::OffloadSpec;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// The host's adapters in port order, each entry's copies one after another;
/// port `i` is on bus `i % buses` unless its entry names a bus.
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
            if let Some((key, why)) = a.foreign_key() {
                return err(format!("{ap}.{key}"), why);
            }
            let nic = ScenarioError::field(&ap, a.nic_config(rate))?;
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
