//! Checks the workload a host runs through its programmable adapter
//! (`[host.send]`), whose stations it names, and puts it together with the
//! adapter's own table (`nic::smart::settings`); errors name the key path.

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
