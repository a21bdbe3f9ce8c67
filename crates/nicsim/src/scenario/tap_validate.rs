//! Checks `[[tap]]` tables into plans for TAP bridges. The device is opened only
//! when the scenario is assembled, so checking a scenario needs no privileges.

use std::collections::HashMap;

use crate::link::TapConfig;
use crate::scenario::plan::{Part, PartPlan, Station, TapPlan};
use crate::scenario::schema::Scenario;
use crate::scenario::ScenarioError;
use crate::wire::ethernet::{HEADER, VLAN_TAG};

/// Linux's limit on an interface name, less the terminating zero.
const IFNAMSIZ: usize = 15;

pub fn tap_plans(sc: &Scenario, stations: &HashMap<&str, Station>) -> Result<Vec<Part>, ScenarioError> {
    let mut parts = Vec::new();
    for (i, t) in sc.tap.iter().enumerate() {
        let path = format!("tap[{i}]");
        let d = &t.device;
        if d.is_empty() || d.len() > IFNAMSIZ || d.contains(|c: char| c == '/' || c == ':' || c.is_whitespace() || c.is_control()) {
            let why = format!("must be an interface name of 1 to {IFNAMSIZ} bytes without '/', ':' or spaces, got {d:?}");
            return Err(ScenarioError::new(format!("{path}.device"), why));
        }
        if let Some(j) = sc.tap[..i].iter().position(|o| o.device == *d) {
            return Err(ScenarioError::new(format!("{path}.device"), format!("{d:?} is already the device of tap[{j}]")));
        }
        let idle = std::time::Duration::from_nanos(t.idle.0.ps() / 1000);
        if idle.is_zero() {
            return Err(ScenarioError::new(format!("{path}.idle"), "must be positive"));
        }
        if !sc.link.iter().any(|l| l.a == t.name || l.b == t.name) {
            return Err(ScenarioError::new(path, format!("tap {:?} is not connected to any link", t.name)));
        }
        let [a, b, c, d] = stations[t.name.as_str()].ipv4;
        let cfg = TapConfig {
            device: t.device.clone(),
            max_frame: sc.mtu as usize + HEADER + VLAN_TAG,
            linux_address: format!("{a}.{b}.{c}.{d}/24"),
        };
        parts.push(Part { name: t.name.clone(), plan: PartPlan::Tap(TapPlan { cfg, idle }) });
    }
    Ok(parts)
}
