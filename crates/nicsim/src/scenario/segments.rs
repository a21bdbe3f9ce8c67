//! `[host.segments]`: the topology of the Novell 1995 AppNote's tests written once. Each
//! of the host's adapters gets its own switch with `clients` ideal hosts on it
//! (which read from the host when it has a `file_serve` table), so that the number of
//! adapters can be swept with one key. The generated parts are named
//! `HOST-segI` (the switch), `HOST-segI-uplink`, `HOST-segI-clientJ` and
//! `HOST-segI-clientJ-link`.

use crate::scenario::checks::within;
use crate::scenario::host_schema::{FileReadSpec, HostSpec};
use crate::scenario::schema::{LinkSpec, Scenario, SwitchSpec};
use crate::scenario::units::TimeSpan;
use crate::scenario::ScenarioError;
use crate::time::Duration;

pub fn expand(sc: &mut Scenario) -> Result<(), ScenarioError> {
    let mut switches = Vec::new();
    let mut links = Vec::new();
    let mut clients_made = Vec::new();
    for (i, h) in sc.host.iter().enumerate() {
        let Some(seg) = &h.segments else { continue };
        let path = format!("host[{i}].segments");
        let named = |end: &str| end == h.name || end.split_once(':').is_some_and(|(n, _)| n == h.name);
        if let Some(j) = sc.link.iter().position(|l| named(&l.a) || named(&l.b)) {
            return err(&path, format!("link[{j}] also connects {:?}: wire a host by hand or by segments, not both", h.name));
        }
        let clients = within(format!("{path}.clients"), seg.clients, 1, 4095)?;
        let adapters = h.adapter_count().max(1);
        if adapters > 64 {
            return err(&format!("host[{i}].adapter"), format!("must make 2 to 64 ports in all, got {adapters}"));
        }
        for a in 0..adapters {
            let switch = format!("{}-seg{a}", h.name);
            let me = if adapters > 1 { format!("{}:{a}", h.name) } else { h.name.clone() };
            let link = |name: String, a: String, b: String| LinkSpec {
                name,
                a,
                b,
                rate: seg.rate,
                propagation: zero(),
                tx_queue: 1000,
                loss: 0.0,
                reorder: 0.0,
                reorder_delay: None,
                drop_a_to_b: Vec::new(),
            };
            links.push(link(format!("{switch}-uplink"), me, format!("{switch}:0")));
            for c in 0..clients {
                let client = format!("{switch}-client{c}");
                links.push(link(format!("{client}-link"), client.clone(), format!("{switch}:{}", c + 1)));
                let read = h.file_serve.as_ref().map(|_| FileReadSpec { from: h.name.clone(), sessions: seg.sessions, think: seg.think });
                clients_made.push(HostSpec::ideal(client, read));
            }
            switches.push(SwitchSpec { name: switch, ports: clients as i64 + 1, queue_frames: seg.queue_frames, latency: seg.latency });
        }
    }
    sc.switch.extend(switches);
    sc.link.extend(links);
    sc.host.extend(clients_made);
    Ok(())
}

fn zero() -> TimeSpan {
    TimeSpan(Duration::ZERO)
}

fn err(path: &str, message: String) -> Result<(), ScenarioError> {
    Err(ScenarioError::new(path, message))
}
