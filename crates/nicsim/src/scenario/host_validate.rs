//! Checks `[[host]]` tables and turns them into host configurations; errors name
//! the key path.

use crate::host::config::{BackgroundConfig, Ddio, DriverMode, FrameSenderConfig, HostConfig};
use crate::host::sessions::{Role, SessionConfig, SEND_BUFFER};
use crate::link::SourceConfig;
use crate::nic::smart::layout::SEND_SLOTS;
use crate::scenario::adapter_validate::{adapter_slots, offload_engines};
use crate::scenario::checks::within;
use crate::scenario::file_schema::{FileServeSpec, Transport};
use crate::scenario::host_schema::{AdapterKindSpec, FileRequestSpec, HostSpec};
use crate::scenario::smart_schema::SendKind;
use crate::scenario::smart_validate::frame_sender;
use crate::scenario::surroundings::Surroundings;
use crate::scenario::ttcp_schema::TtcpSpec;
use crate::scenario::ttcp_validate::transfer;
use crate::scenario::ScenarioError;
use crate::stack::{AckPolicy, SocketConfig, StackConfig};
use crate::time::Duration;
use crate::wire::endpoint::Addr;
use crate::wire::ncp;
use crate::wire::{Headers, L3, L4};

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// The port an ideal host serves files on.
pub const FILE_PORT: u16 = 80;

/// A session's socket from a table's keys (the receive window it offers, its
/// delayed-ACK time, zero for none); errors name `path.key`. The applications
/// write each request or block in one call, and the tail of a write leaves at
/// once (no Nagle hold, as with Minshall's rule when nothing small is in
/// flight): smoltcp's strict Nagle would hold it for the far end's delayed ACK.
fn socket_config(path: &str, mtu: u32, window: i64, delayed_ack: Duration) -> Result<SocketConfig, ScenarioError> {
    let mss = mtu.saturating_sub(40);
    Ok(SocketConfig {
        rx_buffer: within(format!("{path}.window"), window, mss as i64, 65_535)? as usize,
        tx_buffer: SEND_BUFFER,
        nagle: false,
        ack_delay: (delayed_ack > Duration::ZERO).then_some(delayed_ack),
        ack_policy: AckPolicy::EverySecondSegment,
        // RFC 6298's; `[host.tcp] min_rto` sets a TTCP socket's.
        min_rto: Duration::from_ms(1000),
        cubic: false,
        byte_counting: false,
        tso_defer: true,
    })
}

/// A host's TTCP end (ideal or not); a sender may send to another host or a tap.
pub(crate) fn ttcp_session(t: &TtcpSpec, tp: &str, socket: SocketConfig, s: &Surroundings) -> Result<SessionConfig, ScenarioError> {
    let x = transfer(t, tp)?;
    let role = match &t.to {
        Some(to) => match (s.station)(to) {
            Some(("host" | "ideal" | "tap", st)) if st.ipv4 != s.me.ipv4 => {
                Role::Send { ip: st.ipv4, port: x.port, message: x.message, bytes: x.bytes, seed: s.seed, start: x.start }
            }
            _ => return err(format!("{tp}.to"), format!("no other host or tap is named {to:?}")),
        },
        None => Role::Receive { message: x.message },
    };
    // The sender's own port is the first above the well-known ones.
    let port = if x.send { 40_000 } else { x.port };
    let peer = match role {
        Role::Send { ip, .. } => Some(ip),
        _ => None,
    };
    Ok(SessionConfig { role, port, socket, peer, ncp: false })
}

/// The sessions of a host's `[host.file_request]` (at `fp`): `sessions` to each
/// host named, each asking for one file after another.
pub(crate) fn file_requests(f: &FileRequestSpec, fp: &str, s: &Surroundings) -> Result<Vec<SessionConfig>, ScenarioError> {
    let socket = socket_config(fp, s.mtu, f.window, f.delayed_ack.0)?;
    let request = within(format!("{fp}.request_bytes"), f.request_bytes, 1, 65_535)? as u32;
    let answer = within(format!("{fp}.file_bytes"), f.file_bytes, 1, 1 << 30)? as u32;
    let per_peer = within(format!("{fp}.sessions"), f.sessions, 1, 1000)?;
    let ncp = ncp_transport(f.transport, request, fp)?;
    if f.peers.is_empty() {
        return err(format!("{fp}.peers"), "name at least one host");
    }
    let mut sessions = Vec::new();
    for (i, name) in f.peers.iter().enumerate() {
        let st = match (s.station)(name) {
            Some(("ideal" | "host", st)) if st.ipv4 != s.me.ipv4 => st,
            _ => return err(format!("{fp}.peers[{i}]"), format!("no other host is named {name:?}")),
        };
        for _ in 0..per_peer {
            let port = 1024 + sessions.len() as u16;
            let role = Role::Ask { ip: st.ipv4, port: FILE_PORT, request, answer, think: Duration::ZERO, start: f.start.0 };
            sessions.push(SessionConfig { role, port, socket: socket.clone(), peer: Some(st.ipv4), ncp });
        }
        if sessions.len() > 60_000 {
            return err(format!("{fp}.sessions"), "more than 60000 sessions in all");
        }
    }
    Ok(sessions)
}

/// The sessions of a host's `[host.file_serve]` (at `fp`): a listening socket
/// per session of the hosts that read from it.
pub(crate) fn file_serves(f: &FileServeSpec, fp: &str, s: &Surroundings) -> Result<Vec<SessionConfig>, ScenarioError> {
    let port = within(format!("{fp}.port"), f.port, 1, 65_535)? as u16;
    let socket = socket_config(fp, s.mtu, f.window, f.delayed_ack.0)?;
    let request = within(format!("{fp}.request_bytes"), f.request_bytes, 1, 1 << 30)? as u32;
    let answer = within(format!("{fp}.read_bytes"), f.read_bytes, 1, 1 << 30)? as u32;
    let ncp = ncp_transport(f.transport, request, fp)?;
    let answer = |c: &Addr| SessionConfig { role: Role::Answer { request, answer }, port, socket: socket.clone(), peer: Some(c.ip), ncp };
    Ok(s.clients.iter().map(answer).collect())
}

/// Whether a file table's sessions run over NCP; its burst read request
/// carries 24 bytes of command, so `request_bytes` is at least that.
fn ncp_transport(t: Transport, request: u32, fp: &str) -> Result<bool, ScenarioError> {
    if t == Transport::Ncp && (request as usize) < ncp::READ_COMMAND {
        return err(
            format!("{fp}.request_bytes"),
            format!("an NCP burst read request carries {} bytes of command: at least that", ncp::READ_COMMAND),
        );
    }
    if t == Transport::Ncp && request as usize > ncp::MAX_DATA {
        return err(format!("{fp}.request_bytes"), format!("an NCP request is one packet: at most {} bytes", ncp::MAX_DATA));
    }
    Ok(t == Transport::Ncp)
}

/// A key that every host but an ideal one needs.
fn needed<'h, T>(v: &'h Option<T>, path: &str, key: &str) -> Result<&'h T, ScenarioError> {
    v.as_ref().ok_or_else(|| ScenarioError::new(format!("{path}.{key}"), "missing: a host needs it unless it is ideal (ideal = true)"))
}

pub fn host_config(h: &HostSpec, path: &str, s: &Surroundings) -> Result<HostConfig, ScenarioError> {
    let cpus = within(format!("{path}.cpus"), h.cpus, 1, 256)? as u32;
    let clock = needed(&h.clock, path, "clock")?.0;
    let costs = needed(&h.costs, path, "costs")?.clone();
    let dp = format!("{path}.driver");
    let mut driver = h.driver.clone();
    within(format!("{dp}.poll_cpu"), driver.poll_cpu as i64, 0, cpus as i64 - 1)?;
    if driver.busy_poll {
        if driver.mode != DriverMode::Poll {
            return err(format!("{dp}.busy_poll"), "polls from the applications' processor: it needs mode = \"poll\"");
        }
        // The applications' processor is the one that polls.
        if let Some(a) = h.app_cpu {
            driver.poll_cpu = within(format!("{path}.app_cpu"), a, 0, cpus as i64 - 1)? as u32;
        }
    }
    let buses = within(format!("{path}.buses"), h.buses, 1, 64)? as u32;
    let background = match &h.background {
        None => None,
        Some(b) => {
            let bp = format!("{path}.background");
            if b.slice.0 == Duration::ZERO {
                return err(format!("{bp}.slice"), "must be above zero");
            }
            Some(BackgroundConfig {
                processes: within(format!("{bp}.processes"), b.processes, 0, 10_000)? as u32,
                slice: b.slice.0,
                cpu: within(format!("{bp}.cpu"), b.cpu, 0, cpus as i64 - 1)? as u32,
            })
        }
    };
    let bus = ScenarioError::field(&format!("{path}.bus"), needed(&h.bus, path, "bus")?.config())?;
    let mut needs_end = false;
    let adapters = adapter_slots(h, path, buses, s, &mut needs_end)?;
    if needs_end && !s.bounded {
        return err("duration", format!("needed: {path}.send has no count and would run for ever"));
    }
    if h.blast.is_some() && h.adapter.iter().all(|a| a.kind == AdapterKindSpec::Toe) {
        return err(format!("{path}.blast"), "runs through a ring or programmable adapter: give the host one");
    }
    if let Some((a, _)) = adapters.iter().find(|(a, _)| driver.refill_batch >= a.nic.rx_ring) {
        return err(format!("{dp}.refill_batch"), format!("must be below the receive ring of {} descriptors", a.nic.rx_ring));
    }
    let mut sessions = Vec::new();
    if let Some(f) = &h.file_request {
        let fp = format!("{path}.file_request");
        sessions = file_requests(f, &fp, s)?;
    }
    if let Some(f) = &h.file_serve {
        sessions.extend(file_serves(f, &format!("{path}.file_serve"), s)?);
    }
    if let Some(t) = &h.ttcp {
        let socket = ScenarioError::field(&format!("{path}.tcp"), h.tcp.socket(AckPolicy::EverySecondSegment))?;
        sessions.push(ttcp_session(t, &format!("{path}.ttcp"), socket, s)?);
    }
    let mut adapters = adapters;
    offload_engines(s, &mut adapters);
    let blast = match &h.blast {
        None => None,
        Some(b) => {
            let bp = format!("{path}.blast");
            let Some(("sink", to)) = (s.station)(&b.to) else {
                return err(format!("{bp}.to"), format!("no sink is named {:?}", b.to));
            };
            let max = s.mtu as i64 + 18;
            let frame_size = within(format!("{bp}.frame_size"), b.frame_size, 64, max)? as usize;
            let l3 = if b.udp {
                L3::Ipv4 { src: s.me.ipv4, dst: to.ipv4, ttl: 64, id: 0, l4: L4::Udp { src_port: 10_000 + s.flow as u16, dst_port: 9 } }
            } else {
                L3::Raw { ether_type: crate::scenario::RAW_ETHER_TYPE }
            };
            let headers = Headers { dst_mac: to.mac, src_mac: s.me.mac, vlan: None, l3 };
            Some(FrameSenderConfig {
                frames: SourceConfig::numbered(headers, frame_size, s.flow),
                cpu: within(format!("{bp}.cpu"), b.cpu, 0, cpus as i64 - 1)? as u32,
                burst: within(format!("{bp}.burst"), b.burst, 1, 4096)? as u32,
                count: b.count.map(|c| within(format!("{bp}.count"), c, 0, i64::MAX)).transpose()?,
                port: 0,
                // As fast as the adapter takes them: every send slot posted.
                outstanding: SEND_SLOTS as u32,
            })
        }
    };
    let send = match &h.send {
        Some(w) if w.kind == SendKind::Frames => {
            // Through the host's first programmable adapter, as `adapter_slots` checked it has one.
            let port = adapters.iter().position(|(a, _)| a.programmable.is_some()).expect("a programmable adapter");
            Some(frame_sender(w, &format!("{path}.send"), s, driver.poll_cpu, port)?)
        }
        _ => None,
    };
    Ok(HostConfig {
        mac: s.me.mac,
        ip: s.me.ipv4,
        cpus,
        clock,
        serialized_stack: h.serialized_stack,
        costs,
        driver,
        bus,
        buses,
        adapters: adapters.into_iter().map(|(a, _)| a).collect(),
        stack: StackConfig { mac: s.me.mac, ip: s.me.ipv4, mtu: s.mtu as usize, neighbors: Default::default(), tso: false },
        sessions,
        routes: Vec::new(),
        seed: s.seed,
        background,
        sink: h.sink,
        blast,
        send,
        warmup: h.warmup.0,
        zero_copy: h.zero_copy,
        app_cpu: h.app_cpu.map(|c| within(format!("{path}.app_cpu"), c, 0, cpus as i64 - 1)).transpose()?.map(|c| c as usize),
        ddio: h
            .ddio
            .as_ref()
            .map(|d| Ok::<_, ScenarioError>(Ddio { bytes: within(format!("{path}.ddio.bytes"), d.bytes, 0, 1 << 40)?, miss: d.miss.0 }))
            .transpose()?,
    })
}
