//! Checks a parsed scenario and turns it into a plan of configured parts. Every
//! error names the key path it is about; nothing runs until all of it is sound.

use std::collections::HashMap;

use crate::engine::{PortId, WIRE};
use crate::link::{Impairment, LinkConfig, Rate, SourceConfig, SwitchConfig, END_A, END_B};
use crate::scenario::checks::positive;
use crate::scenario::endless::{check_source_ends, check_switch_loops};
use crate::scenario::host_plans::hosts;
use crate::scenario::plan::{stations_of, Part, PartPlan, Plan, Station};
use crate::scenario::schema::{LinkSpec, Scenario};
use crate::scenario::source_validate::source_config;
use crate::scenario::tap_validate::tap_plans;
use crate::scenario::ScenarioError;
use crate::time::{Duration, Time};
use crate::wire::ethernet::wire_bytes;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// A part's index and, for a switch or a host with several adapters, its ports.
type Index<'a> = HashMap<&'a str, (usize, Option<u16>)>;

/// Resolve "name" or "name:port" (a switch's port, a host's adapter) to a part and port.
fn endpoint(text: &str, path: &str, index: &Index) -> Result<(usize, PortId), ScenarioError> {
    let (name, port) = match text.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (text, None),
    };
    let Some(&(part, switch_ports)) = index.get(name) else {
        return err(path, format!("no source, sink, host, tap or switch is named {name:?}"));
    };
    match (switch_ports, port) {
        (None, None) => Ok((part, WIRE)),
        (None, Some(_)) => err(path, format!("{name:?} has one port; write just its name")),
        (Some(n), None) => err(path, format!("{name:?} has ports 0 to {}; write \"{name}:PORT\"", n - 1)),
        (Some(n), Some(p)) => match p.parse::<u16>() {
            Ok(p) if p < n => Ok((part, p)),
            _ => err(path, format!("{name:?} has ports 0 to {}, got {p:?}", n - 1)),
        },
    }
}

fn link_config(l: &LinkSpec, path: &str) -> Result<(LinkConfig, Option<Impairment>), ScenarioError> {
    if l.tx_queue < 0 {
        return err(format!("{path}.tx_queue"), format!("must not be negative, got {}", l.tx_queue));
    }
    for (key, v) in [("loss", l.loss), ("reorder", l.reorder)] {
        if !(0.0..=1.0).contains(&v) {
            return err(format!("{path}.{key}"), format!("must be a fraction from 0 to 1, got {v}"));
        }
    }
    if l.loss + l.reorder > 1.0 {
        return err(format!("{path}.reorder"), format!("loss and reorder together must not exceed 1, got {}", l.loss + l.reorder));
    }
    if let Some((i, n)) = l.drop_a_to_b.iter().enumerate().find(|(_, n)| **n < 1) {
        return err(format!("{path}.drop_a_to_b[{i}]"), format!("frames are numbered from 1, got {n}"));
    }
    let cfg = LinkConfig { rate_bps: l.rate.0, propagation: l.propagation.0, tx_queue: l.tx_queue as usize };
    let impaired = l.loss > 0.0 || l.reorder > 0.0 || !l.drop_a_to_b.is_empty();
    let delay = l.reorder_delay.map_or_else(|| Duration::for_bits(3 * 1538 * 8, l.rate.0), |d| d.0);
    let mut drop_a_to_b: Vec<u64> = l.drop_a_to_b.iter().map(|n| *n as u64).collect();
    drop_a_to_b.sort_unstable();
    Ok((cfg, impaired.then_some(Impairment { loss: l.loss, reorder: l.reorder, reorder_delay: delay, drop_a_to_b })))
}

/// What a station's kind is called in messages.
fn noun(kind: &str) -> &str {
    if kind == "ideal" {
        "ideal host"
    } else {
        kind
    }
}

/// A part's name names it in results, traces and `name:port` endpoints.
fn check_name(path: &str, name: &str) -> Result<(), ScenarioError> {
    if name.is_empty() || name.contains(':') {
        return err(format!("{path}.name"), format!("must be non-empty and without ':', got {name:?}"));
    }
    if let Some(c) = name.chars().find(|&c| !printable(c)) {
        return err(format!("{path}.name"), format!("must be printable characters only, got {name:?} (U+{:04X})", c as u32));
    }
    Ok(())
}

/// Whether `c` shows as itself: not a control character (a newline splits a
/// results table), nor one of Unicode's invisible format characters (zero-width
/// spaces and joiners, direction marks, line separators).
fn printable(c: char) -> bool {
    !c.is_control()
        && !matches!(c, '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// Every part's path and name (`source[0]`, `"gen"`), stations, switches and
/// links in that order.
pub fn part_names(sc: &Scenario) -> Vec<(String, &str)> {
    let stations = stations_of(sc).into_iter().map(|(_, path, name)| (path, name.as_str()));
    let switches = sc.switch.iter().enumerate().map(|(i, s)| (format!("switch[{i}]"), s.name.as_str()));
    stations.chain(switches).chain(sc.link.iter().enumerate().map(|(i, l)| (format!("link[{i}]"), l.name.as_str()))).collect()
}

/// A source (the `i`-th part, sources first) offers no more than its link
/// carries: "line" is back to back.
fn check_offered(src: &SourceConfig, i: usize, link_bps: u64) -> Result<(), ScenarioError> {
    let wire_bits = 8.0 * wire_bytes(src.headers.header_len() + src.payload_len) as f64;
    let offered = match src.rate {
        Rate::Line => return Ok(()),
        Rate::BitsPerSecond(bps) => bps as f64,
        Rate::FramesPerSecond(fps) => fps * wire_bits,
    };
    if offered > link_bps as f64 * (1.0 + 1e-9) {
        let (offered, line) = (offered / 1e6, link_bps as f64 / 1e6);
        return err(
            format!("source[{i}].rate"),
            format!("offers {offered:.0} Mb/s on the wire, above its link's {line:.0} Mb/s: use \"line\" for frames back to back"),
        );
    }
    Ok(())
}

pub fn validate(sc: &Scenario) -> Result<Plan, ScenarioError> {
    if let Some(sweep) = &sc.sweep {
        crate::scenario::sweep_validate::check_sweep(sweep)?;
    }
    if !(68..=65_000).contains(&sc.mtu) {
        return err("mtu", format!("must be 68 to 65000 bytes, got {}", sc.mtu));
    }
    // Names first, so that references can be checked.
    let mut index: Index = HashMap::new();
    let mut paths: HashMap<&str, String> = HashMap::new();
    let adapters = |kind: &str, name: &str| match kind {
        "host" => sc.host.iter().find(|h| h.name == name).map(|h| h.adapter_count()).filter(|n| *n > 1),
        _ => None,
    };
    let stations = stations_of(sc);
    let named = stations.iter().map(|(kind, path, name)| (*kind, path.clone(), *name, adapters(kind, name)));
    let named = named.chain(sc.switch.iter().enumerate().map(|(i, s)| ("switch", format!("switch[{i}]"), &s.name, Some(s.ports))));
    for (part, (table, path, name, ports)) in named.enumerate() {
        check_name(&path, name)?;
        if let Some(other) = paths.get(name.as_str()) {
            return err(format!("{path}.name"), format!("{name:?} is already the name of {other}"));
        }
        let (key, most) = if table == "host" { ("adapter", 64) } else { ("ports", 4096) };
        let ports = match ports {
            Some(p) if !(2..=most).contains(&p) => {
                return err(format!("{path}.{key}"), format!("must make 2 to {most} ports in all, got {p}"))
            }
            p => p.map(|p| p as u16),
        };
        index.insert(name, (part, ports));
        paths.insert(name, path);
    }
    // Stations are numbered 1.. in 16 bits (their MAC and address).
    let most = usize::from(u16::MAX);
    if let Some((_, path, _)) = stations.get(most) {
        return err(path.clone(), "is station 65,536: a scenario holds at most 65,535 sources, sinks, hosts and taps");
    }
    let numbered: HashMap<&str, Station> =
        stations.iter().enumerate().map(|(i, (_, _, n))| (n.as_str(), Station::numbered(i as u16 + 1))).collect();

    // Every link's ends exist before anything that follows the links is checked
    // (which host reaches which): a misspelt end is reported as itself.
    for (i, l) in sc.link.iter().enumerate() {
        for (end, text) in [("a", &l.a), ("b", &l.b)] {
            endpoint(text, &format!("link[{i}].{end}"), &index)?;
        }
    }

    let mut parts = Vec::new();
    for (i, s) in sc.source.iter().enumerate() {
        let path = format!("source[{i}]");
        let receivers = sc.sink.iter().map(|k| &k.name).chain(sc.host.iter().map(|h| &h.name));
        if !receivers.into_iter().any(|n| *n == s.to) {
            return err(format!("{path}.to"), format!("no sink or host is named {:?}", s.to));
        }
        let mut cfg = source_config(s, &path, i as u32, &numbered[s.name.as_str()], &numbered[s.to.as_str()], sc.mtu)?;
        cfg.until = sc.duration.map(|d| Time::ZERO + d.0);
        if cfg.count.is_none() && sc.duration.is_none() {
            return err("duration", format!("needed: {path} ({:?}) has no count and would run for ever", s.name));
        }
        parts.push(Part { name: s.name.clone(), plan: PartPlan::Source(cfg) });
    }
    parts.extend(sc.sink.iter().map(|s| {
        let st = &numbered[s.name.as_str()];
        Part { name: s.name.clone(), plan: PartPlan::Sink(st.mac, st.ipv4, s.announce) }
    }));
    parts.extend(hosts(sc, &numbered)?);
    parts.extend(tap_plans(sc, &numbered)?);
    for (i, s) in sc.switch.iter().enumerate() {
        let path = format!("switch[{i}]");
        let queue_frames = positive(format!("{path}.queue_frames"), s.queue_frames)? as usize;
        let cfg = SwitchConfig { ports: s.ports as u16, queue_frames, latency: s.latency.0, port_rates: vec![0; s.ports as usize] };
        parts.push(Part { name: s.name.clone(), plan: PartPlan::Switch(cfg) });
    }

    let mut wires = Vec::new();
    let mut used: HashMap<(usize, PortId), String> = HashMap::new();
    // Every part's paths by name, in part order: looked up once a link.
    let mut named: HashMap<&str, Vec<String>> = HashMap::new();
    for (p, n) in part_names(sc) {
        named.entry(n).or_default().push(p);
    }
    for (i, l) in sc.link.iter().enumerate() {
        let path = format!("link[{i}]");
        check_name(&path, &l.name)?;
        if let Some(other) = named[l.name.as_str()].iter().find(|p| **p != path) {
            return err(format!("{path}.name"), format!("{:?} is already the name of {other}", l.name));
        }
        let (cfg, impairment) = link_config(l, &path)?;
        let me = parts.len();
        parts.push(Part { name: l.name.clone(), plan: PartPlan::Link(cfg, impairment) });
        for (end, text, port) in [("a", &l.a, END_A), ("b", &l.b, END_B)] {
            let end_path = format!("{path}.{end}");
            let target = endpoint(text, &end_path, &index)?;
            if let Some(other) = used.insert(target, end_path.clone()) {
                return err(end_path, format!("{text:?} is already connected by {other}"));
            }
            // Sources and switches book the wire themselves: they learn its rate.
            match parts.get_mut(target.0).map(|p| &mut p.plan) {
                Some(PartPlan::Switch(sw)) => {
                    if let Some(rate) = sw.port_rates.get_mut(target.1 as usize) {
                        *rate = l.rate.0;
                    }
                }
                Some(PartPlan::Source(src)) => {
                    src.link_bps = l.rate.0;
                    check_offered(src, target.0, l.rate.0)?;
                }
                _ => {}
            }
            wires.push(((me, port), target));
        }
    }
    for (i, (kind, path, name)) in stations.iter().enumerate() {
        for port in 0..index[name.as_str()].1.unwrap_or(1) {
            if !used.contains_key(&(i, port)) {
                let what = if index[name.as_str()].1.is_some() {
                    format!("adapter {port} of {} {name:?}", noun(kind))
                } else {
                    format!("{} {name:?}", noun(kind))
                };
                return err(path.clone(), format!("{what} is not connected to any link"));
            }
        }
    }
    if sc.duration.is_none() {
        check_switch_loops(sc)?;
        // Sources come first among the parts, in their own order.
        for (i, part) in parts.iter().enumerate() {
            if let PartPlan::Source(src) = &part.plan {
                check_source_ends(src, &format!("source[{i}]"))?;
            }
        }
    }
    Ok(Plan { name: sc.name.clone().unwrap_or_else(|| "scenario".into()), seed: sc.seed, duration: sc.duration.map(|d| d.0), parts, wires })
}
