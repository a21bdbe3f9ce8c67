//! Checks the workload a host runs through its programmable adapter
//! (`[host.send]`), whose stations it names, and puts it together with the
//! adapter's own table (`nic::smart::settings`); errors name the key path.

use crate::host::config::FrameSenderConfig;
use crate::link::SourceConfig;
use crate::nic::firmware::chunk;
use crate::nic::smart::config::*;
use crate::nic::smart::layout::{RX_BUFFER, SEND_SLOTS};
use crate::nic::smart::settings::ProgrammableSpec;
use crate::scenario::checks::within;
use crate::scenario::host_schema::HostSpec;
use crate::scenario::smart_schema::{send_default as D, *};
use crate::scenario::surroundings::Surroundings;
use crate::scenario::ScenarioError;
use crate::wire::endpoint::Addr;
use crate::wire::{Headers, L3, L4};

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// The keys each kind of send takes.
fn allowed(kind: SendKind) -> &'static [&'static str] {
    match kind {
        SendKind::Frames => &["to", "frame_size", "per_chunk", "count", "outstanding"],
        SendKind::Generate => &["to", "frame_size", "count"],
        SendKind::Dma => &["direction", "length", "count"],
    }
}

/// The keys `w` gives that its kind does not take.
fn check_keys(w: &SendSpec, path: &str) -> Result<(), ScenarioError> {
    let given = [
        ("to", w.to.is_some()),
        ("outstanding", w.outstanding.is_some()),
        ("frame_size", w.frame_size.is_some()),
        ("per_chunk", w.per_chunk.is_some()),
        ("count", w.count.is_some()),
        ("direction", w.direction.is_some()),
        ("length", w.length.is_some()),
    ];
    match given.iter().find(|(k, set)| *set && !allowed(w.kind).contains(k)) {
        Some((key, _)) => err(format!("{path}.{key}"), format!("does not apply to kind = {:?}", w.kind)),
        None => Ok(()),
    }
}

/// The station `w` sends to, and its frames' size.
fn ends(w: &SendSpec, path: &str, s: &Surroundings) -> Result<(Addr, u32), ScenarioError> {
    let Some(name) = &w.to else { return err(format!("{path}.to"), "is required: the station to send to") };
    let Some((_, st)) = (s.station)(name) else { return err(format!("{path}.to"), format!("no station is named {name:?}")) };
    let Some(v) = w.frame_size else { return err(format!("{path}.frame_size"), "is required") };
    let frame_size = within(format!("{path}.frame_size"), v, 64, s.mtu as i64 + 18)? as u32;
    Ok((Addr { mac: st.mac, ip: st.ipv4, port: 80 }, frame_size))
}

fn count(w: &SendSpec, path: &str) -> Result<Option<u64>, ScenarioError> {
    w.count.map(|c| within(format!("{path}.count"), c, 1, 1 << 40)).transpose()
}

/// What the firmware does of its own for `[host.send]` (nothing for frames
/// the host sends: `frame_sender`).
fn workload(w: &SendSpec, path: &str, s: &Surroundings, needs_end: &mut bool) -> Result<Workload, ScenarioError> {
    check_keys(w, path)?;
    let count = count(w, path)?;
    Ok(match w.kind {
        SendKind::Frames => {
            *needs_end |= count.is_none();
            Workload::Idle
        }
        SendKind::Generate => {
            *needs_end |= count.is_none();
            let (to, frame_size) = ends(w, path, s)?;
            Workload::Generate { from: Addr { mac: s.me.mac, ip: s.me.ipv4, port: 5001 }, to, frame_size, count }
        }
        SendKind::Dma => {
            let Some(direction) = w.direction else {
                return err(format!("{path}.direction"), "is required: \"to-host\" or \"to-adapter\"");
            };
            let length = within(format!("{path}.length"), w.length.unwrap_or(D::LENGTH), 1, RX_BUFFER as i64)? as u32;
            Workload::Dma { to_host: direction == DmaDirection::ToHost, length, count: count.unwrap_or(D::DMA_COUNT) }
        }
    })
}

/// The host's frame sender for `[host.send] kind = "frames"` (at `path`):
/// UDP frames to its station, built `per_chunk` a send call on the polling
/// processor `cpu`, through adapter `port` (the host's first programmable one).
pub fn frame_sender(w: &SendSpec, path: &str, s: &Surroundings, cpu: u32, port: usize) -> Result<FrameSenderConfig, ScenarioError> {
    let (to, frame_size) = ends(w, path, s)?;
    let fit = (chunk::MAX_CHUNK / chunk::footprint(frame_size as usize - 4)) as i64;
    let per_chunk = within(format!("{path}.per_chunk"), w.per_chunk.unwrap_or(D::PER_CHUNK), 1, fit.max(1))? as u32;
    let outstanding = within(format!("{path}.outstanding"), w.outstanding.unwrap_or(D::OUTSTANDING), 1, SEND_SLOTS as i64)? as u32;
    let l4 = L4::Udp { src_port: 5001, dst_port: to.port };
    let l3 = L3::Ipv4 { src: s.me.ipv4, dst: to.ip, ttl: 64, id: 0, l4 };
    let frames = SourceConfig::numbered(Headers { dst_mac: to.mac, src_mac: s.me.mac, vlan: None, l3 }, frame_size as usize, s.flow);
    Ok(FrameSenderConfig { frames, cpu, burst: per_chunk, count: count(w, path)?, port, outstanding })
}

/// A programmable adapter at `path` (its `programmable` table), on a link of
/// `link_rate`, with the host's `send` workload when `runs` (the host's first
/// programmable adapter); `needs_end` is set when that would run for ever
/// without a scenario duration.
#[allow(clippy::too_many_arguments)]
pub fn programmable_config(
    h: &HostSpec,
    spec: Option<&ProgrammableSpec>,
    path: &str,
    link_rate: u64,
    runs: bool,
    s: &Surroundings,
    needs_end: &mut bool,
) -> Result<SmartConfig, ScenarioError> {
    let Some(a) = spec else {
        return err(format!("{path}.programmable"), "is required with kind = \"programmable\"");
    };
    let ap = format!("{path}.programmable");
    let hp = path.split(".adapter").next().unwrap_or(path);
    let workload = match (&h.send, runs) {
        (Some(w), true) => workload(w, &format!("{hp}.send"), s, needs_end)?,
        _ => Workload::Idle,
    };
    Ok(SmartConfig {
        host: ScenarioError::field(&ap, a.host_side(h.clock.map(|c| c.0), h.zero_copy))?,
        adapter: ScenarioError::field(&ap, a.adapter(link_rate, s.mtu))?,
        workload,
        receive: ScenarioError::field(&format!("{ap}.receive"), a.receive.receive())?,
    })
}
