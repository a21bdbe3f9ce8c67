//! Checks a `[[source]]` table into a `SourceConfig`: the headers of its frames
//! (from its station to the one it sends to), their size and its rate.

use crate::link::{Fill, Pattern, Rate, SourceConfig};
use crate::scenario::checks::positive;
use crate::scenario::plan::{Station, RAW_ETHER_TYPE};
use crate::scenario::schema::{FillSpec, PatternSpec, Protocol, SourceSpec};
use crate::scenario::units::SourceRate;
use crate::scenario::ScenarioError;
use crate::wire::ethernet::{FCS, HEADER, MIN_FRAME, VLAN_TAG};
use crate::wire::{Headers, L3, L4};

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

fn headers_for(s: &SourceSpec, path: &str, flow: u32, from: &Station, to: &Station) -> Result<Headers, ScenarioError> {
    let vlan = match s.vlan {
        Some(v) if !(0..=4095).contains(&v) => return err(format!("{path}.vlan"), format!("must be 0 to 4095, got {v}")),
        v => v.map(|v| v as u16),
    };
    let l4 = match s.protocol {
        Protocol::Raw => None,
        Protocol::Udp => Some(L4::Udp { src_port: 10_000 + flow as u16, dst_port: 9 }),
    };
    let l3 = match (l4, s.ip_version) {
        (None, _) => L3::Raw { ether_type: RAW_ETHER_TYPE },
        (Some(l4), 4) => L3::Ipv4 { src: from.ipv4, dst: to.ipv4, ttl: 64, id: 0, l4 },
        (Some(l4), 6) => L3::Ipv6 { src: from.ipv6, dst: to.ipv6, hop_limit: 64, l4 },
        (_, v) => return err(format!("{path}.ip_version"), format!("must be 4 or 6, got {v}")),
    };
    Ok(Headers { dst_mac: to.mac, src_mac: from.mac, vlan, l3 })
}

fn payload_len(s: &SourceSpec, path: &str, headers: &Headers, mtu: u32) -> Result<usize, ScenarioError> {
    let tag = if headers.vlan.is_some() { VLAN_TAG } else { 0 };
    let max_frame = mtu as usize + HEADER + FCS + tag;
    let (frame, key) = match (s.frame_size, s.payload_size) {
        (Some(_), Some(_)) => return err(path, "give frame_size or payload_size, not both"),
        (None, None) => return err(path, "give frame_size or payload_size"),
        (Some(f), None) => (f, "frame_size"),
        (None, Some(p)) => {
            if p < 0 {
                return err(format!("{path}.payload_size"), format!("must not be negative, got {p}"));
            }
            ((headers.header_len() + p as usize + FCS).max(MIN_FRAME) as i64, "payload_size")
        }
    };
    let key_path = format!("{path}.{key}");
    if frame < MIN_FRAME as i64 {
        return err(key_path, format!("frame of {frame} bytes is below the Ethernet minimum of {MIN_FRAME}"));
    }
    if frame > max_frame as i64 {
        return err(key_path, format!("frame of {frame} bytes is above the {max_frame} bytes that an MTU of {mtu} allows"));
    }
    match s.payload_size {
        Some(p) => Ok(p as usize),
        None => {
            let room = frame as usize - FCS;
            room.checked_sub(headers.header_len()).ok_or_else(|| {
                ScenarioError::new(
                    key_path,
                    format!("{frame} bytes cannot hold the {} bytes of headers (and FCS)", headers.header_len() + FCS),
                )
            })
        }
    }
}

pub fn source_config(s: &SourceSpec, path: &str, flow: u32, from: &Station, to: &Station, mtu: u32) -> Result<SourceConfig, ScenarioError> {
    let headers = headers_for(s, path, flow, from, to)?;
    let payload_len = payload_len(s, path, &headers, mtu)?;
    let count = s.count.map(|c| positive(format!("{path}.count"), c)).transpose()?;
    let rate = match s.rate {
        SourceRate::Line => Rate::Line,
        SourceRate::Bits(b) => Rate::BitsPerSecond(b),
        SourceRate::Frames(f) => Rate::FramesPerSecond(f),
    };
    let ports = match (&headers.l3, s.source_ports) {
        (_, n) if n < 1 => return err(format!("{path}.source_ports"), format!("must be at least 1, got {n}")),
        (L3::Raw { .. }, n) if n > 1 => {
            return err(format!("{path}.source_ports"), "applies to UDP or TCP frames; raw frames have no ports")
        }
        (L3::Ipv4 { l4, .. } | L3::Ipv6 { l4, .. }, n) => {
            let first = match l4 {
                L4::Udp { src_port, .. } => *src_port,
                L4::Tcp(t) => t.src_port,
            } as i64;
            if first + n - 1 > 65_535 {
                return err(
                    format!("{path}.source_ports"),
                    format!("ports from {first} run past 65535 with {n} of them: at most {}", 65_536 - first),
                );
            }
            n as u16
        }
        _ => 1,
    };
    if rate == Rate::Line && s.pattern == PatternSpec::Poisson {
        return err(format!("{path}.pattern"), "a line-rate source sends back to back; give a rate for Poisson arrivals");
    }
    Ok(SourceConfig {
        headers,
        payload_len,
        rate,
        pattern: if s.pattern == PatternSpec::Poisson { Pattern::Poisson } else { Pattern::Constant },
        fill: if s.fill == FillSpec::Random { Fill::Random } else { Fill::Counter },
        count,
        start: s.start.0,
        flow,
        ports,
        link_bps: 0, // set when its link is known
        until: None,
    })
}
