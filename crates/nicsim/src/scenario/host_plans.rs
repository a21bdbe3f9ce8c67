//! Every host's plan, ideal or modelled, with the sessions that join hosts:
//! a host answers the file requests aimed at it, and a host that names a file
//! server in `file_read` reads blocks from it. Each side's sessions come from
//! the other side's checked settings.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::host::config::{AdapterSlot, HostConfig};
use crate::host::ideal::IdealConfig;
use crate::host::sessions::{Role, SessionConfig};
use crate::nic::smart::config::Workload;
use crate::scenario::adapter_validate::carry;
use crate::scenario::checks::within;
use crate::scenario::host_schema::HostSpec;
use crate::scenario::host_validate::{file_requests, file_serves, host_config, ttcp_session};
use crate::scenario::plan::{stations_of, Part, PartPlan, Station};
use crate::scenario::reach::{check_reached, Networks};
use crate::scenario::schema::Scenario;
use crate::scenario::surroundings::Surroundings;
use crate::scenario::ScenarioError;
use crate::stack::{AckPolicy, Neighbors, StackConfig};
use crate::time::Duration;
use crate::wire::endpoint::Addr;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// A TCP stack's seed (its initial sequence numbers), one per station `n`.
fn station_seed(seed: u64, n: usize) -> u64 {
    seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The rate of the link on each of a host's `ports` ports (`NAME` for a
/// host of one adapter, `NAME:I` for port I of several).
fn port_rates(sc: &Scenario, name: &str, ports: i64, path: &str) -> Result<Vec<u64>, ScenarioError> {
    (0..ports.max(1))
        .map(|i| {
            let end = if ports > 1 { format!("{name}:{i}") } else { name.to_string() };
            match sc.link.iter().find(|l| l.a == end || l.b == end) {
                Some(l) => Ok(l.rate.0),
                None => err(path, format!("{end:?} (adapter {i}) is not connected to any link")),
            }
        })
        .collect()
}

/// Per file server: the client sessions of the hosts that read from it.
fn readers<'a>(sc: &'a Scenario, stations: &HashMap<&str, Station>) -> Result<HashMap<&'a str, Vec<Addr>>, ScenarioError> {
    let mut clients: HashMap<&str, Vec<Addr>> = HashMap::new();
    for (i, h) in sc.host.iter().enumerate() {
        let Some(read) = &h.file_read else { continue };
        let path = format!("host[{i}].file_read");
        if !sc.host.iter().any(|s| s.name == read.from && s.file_serve.is_some()) {
            return err(format!("{path}.from"), format!("no host named {:?} has a file_serve table", read.from));
        }
        let st = &stations[h.name.as_str()];
        let n = within(format!("{path}.sessions"), read.sessions, 1, 1000)?;
        clients.entry(read.from.as_str()).or_default().extend((0..n).map(|s| Addr { mac: st.mac, ip: st.ipv4, port: 2000 + s as u16 }));
    }
    Ok(clients)
}

/// A host's own sessions, before any other host's are joined to them: its
/// name, its address and the sessions.
type Own<'a> = (&'a str, [u8; 4], &'a [SessionConfig]);

/// The sessions host `h` (at `me`) runs for the others (`own`): answering the
/// file requests they aim at it, and reading from the file server its
/// `file_read` names.
fn joined(h: &HostSpec, me: &Station, own: &[Own], clients: &HashMap<&str, Vec<Addr>>) -> Vec<SessionConfig> {
    let mut sessions = Vec::new();
    for &(name, ip, theirs) in own {
        for s in theirs {
            if let Role::Ask { ip: to, port, request, answer, .. } = s.role {
                if to == me.ipv4 {
                    let answer = Role::Answer { request, answer };
                    sessions.push(SessionConfig { role: answer, port, socket: s.socket.clone(), peer: Some(ip), ncp: s.ncp });
                }
            }
        }
        let Some(read) = h.file_read.as_ref().filter(|r| r.from == name) else { continue };
        let Some(serve) = theirs.iter().find(|s| matches!(s.role, Role::Answer { .. })) else { continue };
        let Role::Answer { request, answer } = serve.role else { unreachable!("found above") };
        let mine = clients[name].iter().filter(|c| c.ip == me.ipv4);
        sessions.extend(mine.map(|c| SessionConfig {
            role: Role::Ask { ip, port: serve.port, request, answer, think: read.think.0, start: Duration::ZERO },
            port: c.port,
            socket: serve.socket.clone(),
            peer: Some(ip),
            ncp: serve.ncp,
        }));
    }
    sessions
}

/// A host's own stack needs an adapter to carry it: a ring adapter, or a
/// programmable one that runs no `send` workload (an offload engine carries
/// only the sessions it runs). Checked once the engines have taken theirs.
fn check_carried(h: &HostSpec, cfg: &HostConfig, path: &str) -> Result<(), ScenarioError> {
    // A frame sender takes the programmable adapter it sends through.
    let senders: Vec<usize> = takers(cfg).collect();
    let carries = |(i, a): (usize, &AdapterSlot)| {
        a.offload.is_none() && a.programmable.as_ref().is_none_or(|p| p.workload == Workload::Idle && !senders.contains(&i))
    };
    let blast_takes = cfg.blast.as_ref().is_some_and(|b| senders.contains(&b.port));
    let taken = if h.send.is_some() { Some("send") } else { blast_takes.then_some("blast") };
    if let (Some(key), false, false) = (taken, cfg.sessions.is_empty(), cfg.adapters.iter().enumerate().any(carries)) {
        return err(
            format!("{path}.{key}"),
            "its programmable adapter runs this workload, so the host's TCP sessions need another adapter to carry its stack \
             (a ring adapter, or another programmable one; an offload engine carries only the sessions whose far end it reaches)",
        );
    }
    Ok(())
}

/// The adapter of host `h` that reaches each station, the first where several do
/// (its first queue, where it has several).
fn routes(h: &HostSpec, reach: &[Vec<&str>], stations: &HashMap<&str, Station>, cfg: &HostConfig) -> Vec<([u8; 6], usize)> {
    let mut taken = HashSet::from([h.name.as_str()]);
    let mut routes = Vec::new();
    for (wire, names) in reach.iter().enumerate() {
        for &name in names {
            if let (true, Some(st)) = (taken.insert(name), stations.get(name)) {
                routes.push((st.mac, first_queue(cfg, wire)));
            }
        }
    }
    routes
}

/// The adapter slot of wire port `wire`'s first queue.
fn first_queue(cfg: &HostConfig, wire: usize) -> usize {
    cfg.adapters.iter().position(|a| a.wire == wire).expect("every wire port has an adapter")
}

/// A host's sessions whose far end an offload engine reaches run on that
/// engine, the rest on the host's stack; a listening session whose far end is
/// not known (a TTCP receiver of Linux) goes to the first engine.
fn onto_engines(
    sc: &Scenario,
    h: &HostSpec,
    path: &str,
    cfg: &mut HostConfig,
    stations: &HashMap<&str, Station>,
) -> Result<(), ScenarioError> {
    let Some(first) = cfg.adapters.iter().position(|a| a.offload.is_some()) else { return Ok(()) };
    let ttcp = ScenarioError::field(&format!("{path}.tcp"), h.tcp.socket(AckPolicy::WindowUpdate))?;
    // The adapter that reaches each address; a TTCP receiver's far end is the
    // host whose transfer names it.
    let mac: HashMap<[u8; 4], [u8; 6]> = stations.values().map(|s| (s.ipv4, s.mac)).collect();
    let by_mac: HashMap<[u8; 6], usize> = cfg.routes.iter().copied().collect();
    let sender = sc.host.iter().find(|o| o.ttcp.as_ref().is_some_and(|t| t.to.as_deref() == Some(h.name.as_str())));
    let sender = sender.map(|o| stations[o.name.as_str()].ipv4);
    let mut kept = Vec::new();
    for x in std::mem::take(&mut cfg.sessions) {
        let peer = x.peer.or(if matches!(x.role, Role::Receive { .. }) { sender } else { None });
        let port = match peer.and_then(|ip| mac.get(&ip)).and_then(|m| by_mac.get(m)) {
            Some(&p) if cfg.adapters.len() > 1 => p,
            _ => first,
        };
        match cfg.adapters[port].offload.as_mut() {
            Some(_) if x.ncp => {
                return err(format!("{path}.adapter[{port}]"), "an offload engine carries TCP alone: a file session over NCP needs the host's own stack on another adapter that reaches its far end")
            }
            Some(o) => carry(o, x, &ttcp),
            None => kept.push(x),
        }
    }
    cfg.sessions = kept;
    Ok(())
}

/// The programmable adapters the frame senders send through (so the host's
/// stack does not).
fn takers(cfg: &HostConfig) -> impl Iterator<Item = usize> + '_ {
    cfg.blast.iter().chain(&cfg.send).map(|b| b.port).filter(|&p| cfg.adapters[p].programmable.is_some())
}

/// A blast leaves by the first adapter that reaches its sink and takes raw
/// frames: a ring adapter, or a programmable one whose firmware sends nothing
/// of its own and `[host.send]`'s frames do not take.
fn blast_port(h: &HostSpec, reach: &[Vec<&str>], cfg: &mut HostConfig, path: &str) -> Result<(), ScenarioError> {
    let Some(spec) = &h.blast else { return Ok(()) };
    let taken: Option<usize> = cfg.send.as_ref().map(|b| b.port);
    let takes = |p: usize| {
        let a = &cfg.adapters[p];
        a.offload.is_none() && a.programmable.as_ref().is_none_or(|s| s.workload == Workload::Idle) && taken != Some(p)
    };
    let found =
        (0..reach.len()).map(|w| first_queue(cfg, w)).find(|&p| takes(p) && reach[cfg.adapters[p].wire].contains(&spec.to.as_str()));
    let Some(b) = cfg.blast.as_mut() else { return Ok(()) };
    match found {
        Some(p) => b.port = p,
        None => {
            return err(
                format!("{path}.blast.to"),
                "no adapter of the host that takes raw frames reaches it (a ring adapter, or a programmable one that neither its firmware's own workload nor the host's send takes)",
            )
        }
    }
    Ok(())
}

/// What a session's application is, for errors.
fn application(r: &Role) -> String {
    match r {
        Role::Answer { request, answer } => format!("file sessions answering {request}-byte requests with {answer} bytes"),
        Role::Receive { .. } => "a TTCP receiver".into(),
        Role::Ask { .. } => "a file session".into(),
        Role::Send { .. } => "a TTCP sender".into(),
    }
}

/// One host's sessions keep apart: each port it listens on takes connections
/// for one application, and each session that connects has a port of its own
/// (file_serve.port, ttcp.port and the file requests aimed at the host, on
/// port 80, are where they meet).
fn check_ports(sessions: &[SessionConfig], path: &str) -> Result<(), ScenarioError> {
    let mut used: HashMap<u16, &Role> = HashMap::new();
    for s in sessions {
        let listens = matches!(s.role, Role::Answer { .. } | Role::Receive { .. });
        match used.insert(s.port, &s.role) {
            Some(r) if !(listens && *r == s.role) => {
                let (a, b) = (application(r), application(&s.role));
                return err(path, format!("port {} is taken twice, by {a} and by {b}: give one another port", s.port));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Without a duration a run ends when no event is left, so a host application
/// that never stops would run for ever: the scenario needs a duration.
/// With one, every host's warmup ends before it, or nothing would be measured.
fn check_ends(sc: &Scenario) -> Result<(), ScenarioError> {
    if let Some(d) = sc.duration {
        if let Some((i, h)) = sc.host.iter().enumerate().find(|(_, h)| h.warmup.0 >= d.0) {
            return err(
                format!("host[{i}].warmup"),
                format!("{} ms is not before the end of the run at {} ms: nothing would be measured", ms(h.warmup.0), ms(d.0)),
            );
        }
        return Ok(());
    }
    for (i, h) in sc.host.iter().enumerate() {
        let endless = [
            ("file_request", h.file_request.is_some(), "asks for files"),
            ("file_read", h.file_read.is_some(), "reads blocks"),
            ("blast", h.blast.as_ref().is_some_and(|b| b.count.is_none()), "has no count and sends"),
            ("background", h.background.is_some(), "keeps its processes ready"),
        ];
        if let Some((key, _, what)) = endless.into_iter().find(|e| e.1) {
            return err("duration", format!("needed: host[{i}].{key} ({:?}) {what} for ever", h.name));
        }
    }
    Ok(())
}

/// A host's interface MTU: its own `mtu`, at most the scenario's, else the scenario's.
fn host_mtu(sc: &Scenario, h: &HostSpec, path: &str) -> Result<u32, ScenarioError> {
    match h.mtu {
        None => Ok(sc.mtu),
        Some(m) if (68..=sc.mtu as i64).contains(&m) => Ok(m as u32),
        Some(m) => err(format!("{path}.mtu"), format!("must be 68 to the scenario's mtu ({}), got {m}", sc.mtu)),
    }
}

fn ms(d: Duration) -> f64 {
    d.ps() as f64 / 1e9
}

/// Ideal hosts, then the other hosts, in station order after the sources and sinks.
pub(super) fn hosts(sc: &Scenario, stations: &HashMap<&str, Station>) -> Result<Vec<Part>, ScenarioError> {
    let kinds: HashMap<&str, &'static str> = stations_of(sc).into_iter().map(|(k, _, n)| (n.as_str(), k)).collect();
    let lookup = |name: &str| -> Option<(&'static str, &Station)> { Some((*kinds.get(name)?, stations.get(name)?)) };
    // Static ARP entries: the simulated stations know each other from the
    // start, as a benchmark set-up configures them. A tap's Linux side has a
    // MAC of its own, learned by ARP.
    let everyone: Neighbors =
        Arc::new(stations.iter().filter(|(n, _)| kinds.get(*n) != Some(&"tap")).map(|(_, s)| (s.ipv4, s.mac)).collect());
    let (ideal, modelled): (Vec<_>, Vec<_>) = sc.host.iter().enumerate().partition(|(_, h)| h.ideal);
    let clients = readers(sc, stations)?;
    let nets = Networks::new(sc);
    let mut hosts = Vec::new();
    // Seeds and flow numbers by rank among hosts of the same kind.
    for (k, &(i, h)) in modelled.iter().enumerate() {
        let path = format!("host[{i}]");
        let link_rates = port_rates(sc, &h.name, h.adapter_count(), &path)?;
        check_reached(&nets, h, &path, stations)?;
        let me = &stations[h.name.as_str()];
        let served = clients.get(h.name.as_str()).map_or(&[][..], |c| c.as_slice());
        let seed = station_seed(sc.seed, sc.source.len() + sc.sink.len() + k);
        let around = Surroundings {
            me,
            link_rates,
            mtu: host_mtu(sc, h, &path)?,
            station: &lookup,
            flow: (sc.source.len() + k) as u32,
            clients: served,
            seed,
            bounded: sc.duration.is_some(),
        };
        let mut cfg = host_config(h, &path, &around)?;
        if h.adapter_count() > 1 || h.blast.is_some() {
            let reach = nets.reachable(&h.name, h.adapter_count());
            if h.adapter_count() > 1 {
                cfg.routes = routes(h, &reach, stations, &cfg);
            }
            blast_port(h, &reach, &mut cfg, &path)?;
        }
        cfg.stack.neighbors = everyone.clone();
        for o in cfg.adapters.iter_mut().filter_map(|a| a.offload.as_mut()) {
            o.engine.stack.neighbors = everyone.clone();
        }
        hosts.push(Part { name: h.name.clone(), plan: PartPlan::Host(Box::new(cfg)) });
    }
    // The k-th ideal host's surroundings: no adapters.
    let ideal_around = |k: usize, name: &str, mtu: u32| Surroundings {
        me: &stations[name],
        link_rates: Vec::new(),
        mtu,
        station: &lookup,
        flow: 0,
        clients: clients.get(name).map_or(&[][..], |c| c.as_slice()),
        seed: station_seed(sc.seed, sc.source.len() + sc.sink.len() + modelled.len() + k),
        bounded: sc.duration.is_some(),
    };
    // An ideal host's own sessions: its file requests, and serving its readers.
    let mut requests = Vec::new();
    for (k, &(i, p)) in ideal.iter().enumerate() {
        check_reached(&nets, p, &format!("host[{i}]"), stations)?;
        let around = ideal_around(k, &p.name, host_mtu(sc, p, &format!("host[{i}]"))?);
        let mut own = match &p.file_request {
            Some(f) => file_requests(f, &format!("host[{i}].file_request"), &around)?,
            None => Vec::new(),
        };
        if let Some(f) = &p.file_serve {
            own.extend(file_serves(f, &format!("host[{i}].file_serve"), &around)?);
        }
        requests.push(own);
    }
    // Every host's joined sessions from the hosts' own, before any is added.
    let mut own: Vec<Own> = hosts
        .iter()
        .map(|part| match &part.plan {
            PartPlan::Host(cfg) => (part.name.as_str(), cfg.ip, cfg.sessions.as_slice()),
            _ => unreachable!("hosts are host plans"),
        })
        .collect();
    own.extend(ideal.iter().zip(&requests).map(|(&(_, p), r)| (p.name.as_str(), stations[p.name.as_str()].ipv4, r.as_slice())));
    let joins: Vec<Vec<SessionConfig>> = sc.host.iter().map(|h| joined(h, &stations[h.name.as_str()], &own, &clients)).collect();
    for (&(i, h), part) in modelled.iter().zip(hosts.iter_mut()) {
        let PartPlan::Host(cfg) = &mut part.plan else { unreachable!("hosts are host plans") };
        cfg.sessions.extend(joins[i].iter().cloned());
        check_ports(&cfg.sessions, &format!("host[{i}]"))?;
        onto_engines(sc, h, &format!("host[{i}]"), cfg, stations)?;
        check_carried(h, cfg, &format!("host[{i}]"))?;
    }
    let mut parts = Vec::new();
    for ((k, &(i, p)), mut sessions) in ideal.iter().enumerate().zip(requests) {
        let path = format!("host[{i}]");
        let st = &stations[p.name.as_str()];
        sessions.extend(joins[i].iter().cloned());
        let around = ideal_around(k, &p.name, host_mtu(sc, p, &path)?);
        if let Some(t) = &p.ttcp {
            let socket = ScenarioError::field(&format!("{path}.tcp"), p.tcp.socket(AckPolicy::EverySecondSegment))?;
            sessions.push(ttcp_session(t, &format!("{path}.ttcp"), socket, &around)?);
        }
        check_ports(&sessions, &path)?;
        let stack = StackConfig { mac: st.mac, ip: st.ipv4, mtu: around.mtu as usize, neighbors: everyone.clone(), tso: false };
        let plan = IdealConfig { stack, seed: around.seed, sessions, warmup: p.warmup.0 };
        parts.push(Part { name: p.name.clone(), plan: PartPlan::Ideal(plan) });
    }
    parts.extend(hosts);
    // Last: what a host's settings say is wrong comes before what the run lacks.
    check_ends(sc)?;
    Ok(parts)
}
