//! Checks a host's programmable adapter (`[host.adapter.programmable]`) and the
//! workload it runs (`[host.send]`); errors name the key path. Defaults are
//! documented in docs/scenarios.md and their sources in docs/model.md.

use crate::nic::firmware::chunk;
use crate::nic::firmware::coalesce::CoalesceConfig;
use crate::nic::smart::config::*;
use crate::nic::smart::layout::{A_RESERVED, RX_BUFFER, SEND_SLOTS};
use crate::scenario::checks::within;
use crate::scenario::host_schema::HostSpec;
use crate::scenario::smart_schema::{send_default as D, *};
use crate::scenario::surroundings::Surroundings;
use crate::scenario::ScenarioError;
use crate::wire::endpoint::Addr;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

fn cycles(path: String, v: i64) -> Result<u64, ScenarioError> {
    within(path, v, 0, 1_000_000_000)
}

/// The host's side of a programmable adapter: its processor's costs, taken
/// from the host's (`[host.costs]`), and the receive buffers it keeps posted.
fn host_side(h: &HostSpec, a: &ProgrammableSpec, path: &str) -> Result<HostSide, ScenarioError> {
    let rx_buffers = within(format!("{path}.rx_buffers"), a.rx_buffers, 1, 4096)? as u32;
    let repost_batch = within(format!("{path}.repost_batch"), a.repost_batch, 1, rx_buffers as i64)? as u32;
    let Some(clock) = h.clock else { return Err(ScenarioError::new(path, "its host has no clock")) };
    Ok(HostSide { clock: clock.0, zero_copy: h.zero_copy, rx_buffers, repost_batch })
}

fn adapter(a: &ProgrammableSpec, path: &str, link_rate: u64, mtu: u32) -> Result<AdapterConfig, ScenarioError> {
    let memory = within(format!("{path}.memory"), a.memory, 256 * 1024, 1 << 34)?;
    let rx_memory = a.rx_memory.unwrap_or(((memory - A_RESERVED) / 2) as i64);
    let rx_memory = within(format!("{path}.rx_memory"), rx_memory, 16 * 1024, (memory - A_RESERVED) as i64)?;
    if a.checksum == ChecksumAt::Firmware && a.segmentation == Segmentation::Direct {
        return err(
            format!("{path}.checksum"),
            "\"firmware\" needs the payload in adapter memory, which direct segmentation never puts there: use \"mac\" or \"split\", or segmentation = \"store-and-forward\"",
        );
    }
    if a.memory_bandwidth.0 < 8 {
        return err(
            format!("{path}.memory_bandwidth"),
            format!("must be at least 8 b/s (a byte a second), got {} b/s", a.memory_bandwidth.0),
        );
    }
    Ok(AdapterConfig {
        processors: within(format!("{path}.processors"), a.processors, 1, 64)? as u32,
        clock: a.clock.0,
        memory_bytes: memory,
        memory_bytes_per_s: a.memory_bandwidth.0 / 8,
        rx_memory_bytes: rx_memory,
        mac_tx_frames: within(format!("{path}.mac_tx_frames"), a.mac_tx_frames, 1, 1024)? as u32,
        dma_startup: cycles(format!("{path}.dma_startup"), a.dma_startup)?,
        link_rate_bps: link_rate,
        mtu,
        costs: a.costs.clone(),
        checksum: a.checksum,
        segmentation: a.segmentation,
    })
}

/// The keys each kind of send takes.
fn allowed(kind: SendKind) -> &'static [&'static str] {
    match kind {
        SendKind::Frames => &["to", "frame_size", "per_chunk", "count", "outstanding"],
        SendKind::Generate => &["to", "frame_size", "count"],
        SendKind::Dma => &["direction", "length", "count"],
    }
}

fn workload(w: &SendSpec, path: &str, s: &Surroundings, needs_end: &mut bool) -> Result<Workload, ScenarioError> {
    let given = [
        ("to", w.to.is_some()),
        ("outstanding", w.outstanding.is_some()),
        ("frame_size", w.frame_size.is_some()),
        ("per_chunk", w.per_chunk.is_some()),
        ("count", w.count.is_some()),
        ("direction", w.direction.is_some()),
        ("length", w.length.is_some()),
    ];
    if let Some((key, _)) = given.iter().find(|(k, set)| *set && !allowed(w.kind).contains(k)) {
        return err(format!("{path}.{key}"), format!("does not apply to kind = {:?}", w.kind));
    }
    let me = Addr { mac: s.me.mac, ip: s.me.ipv4, port: 5001 };
    let to = || -> Result<Addr, ScenarioError> {
        let Some(name) = &w.to else { return err(format!("{path}.to"), "is required: the station to send to") };
        match (s.station)(name) {
            Some((_, st)) => Ok(Addr { mac: st.mac, ip: st.ipv4, port: 80 }),
            None => err(format!("{path}.to"), format!("no station is named {name:?}")),
        }
    };
    let max_frame = s.mtu as i64 + 18;
    let frame_size = || -> Result<u32, ScenarioError> {
        let Some(v) = w.frame_size else { return err(format!("{path}.frame_size"), "is required") };
        Ok(within(format!("{path}.frame_size"), v, 64, max_frame)? as u32)
    };
    let outstanding = within(format!("{path}.outstanding"), w.outstanding.unwrap_or(D::OUTSTANDING), 1, SEND_SLOTS as i64)? as u32;
    let count = w.count.map(|c| within(format!("{path}.count"), c, 1, 1 << 40)).transpose()?;
    Ok(match w.kind {
        SendKind::Frames => {
            let frame_size = frame_size()?;
            let fit = (chunk::MAX_CHUNK / chunk::footprint(frame_size as usize - 4)) as i64;
            let per_chunk = within(format!("{path}.per_chunk"), w.per_chunk.unwrap_or(D::PER_CHUNK), 1, fit.max(1))? as u32;
            *needs_end |= count.is_none();
            Workload::Frames { from: me, to: to()?, frame_size, per_chunk, count, outstanding }
        }
        SendKind::Generate => {
            *needs_end |= count.is_none();
            Workload::Generate { from: me, to: to()?, frame_size: frame_size()?, count }
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

fn receive(r: &ReceiveSpec, path: &str) -> Result<Receive, ScenarioError> {
    let coalesce = match r.coalesce_frames {
        None => None,
        Some(frames) => {
            if !r.to_host {
                return err(format!("{path}.coalesce_frames"), "coalescing needs to_host = true");
            }
            let max_frames = within(format!("{path}.coalesce_frames"), frames, 1, 43)? as u32;
            Some(CoalesceConfig { max_frames, capacity: RX_BUFFER as usize, timeout: r.coalesce_timeout.0 })
        }
    };
    if r.lro_timeout.is_some() && !r.to_host {
        return err(format!("{path}.lro_timeout"), "LRO needs to_host = true");
    }
    if r.lro_timeout.is_some() && coalesce.is_some() {
        return err(
            format!("{path}.lro_timeout"),
            "LRO segments of up to 64 KB do not pack into 64 KB coalescing buffers: use one or the other",
        );
    }
    Ok(Receive { to_host: r.to_host, coalesce, lro: r.lro_timeout.map(|t| t.0), gro: r.gro_timeout.map(|t| t.0), xdp: r.xdp.clone() })
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
        host: host_side(h, a, &ap)?,
        adapter: adapter(a, &ap, link_rate, s.mtu)?,
        workload,
        receive: receive(&a.receive, &format!("{ap}.receive"))?,
    })
}
