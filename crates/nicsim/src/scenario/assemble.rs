//! Builds a simulator from a plan: one component per part, ports wired per link,
//! and the chosen links wrapped in a pcap capture. TAP devices are opened, and
//! hosts' adapters made, here.

use std::cell::RefCell;
use std::rc::Rc;

use crate::engine::{Component, Endpoint, PortId, Simulator};
use crate::host::ideal::IdealHost;
use crate::host::machine::Machine;
use crate::link::Captured;
use crate::link::{EthernetLink, Impaired, Sink, Source, Switch, TapBridge, TapDevice, END_A, END_B};
use crate::observe::{CaptureFile, LinkInterface, SharedTrace};
use crate::scenario::devices::devices;
use crate::scenario::plan::{PartPlan, Plan};

/// Assemble `plan`. Links named in `capture` (all links, if it is empty) are
/// wrapped to record into `pcap` when one is given; hosts draw their timelines
/// into `trace` when one is given.
pub fn assemble(
    plan: &Plan,
    seed: u64,
    pcap: Option<(&Rc<RefCell<CaptureFile>>, &[String])>,
    trace: Option<&SharedTrace>,
) -> Result<Simulator, String> {
    let mut sim = Simulator::new(seed);
    for (i, part) in plan.parts.iter().enumerate() {
        let component: Box<dyn Component> = match &part.plan {
            PartPlan::Source(cfg) => Box::new(Source::new(cfg.clone()).map_err(|e| format!("{}: {e}", part.name))?),
            PartPlan::Sink(mac, ip, announce) => Box::new(Sink::station(*mac, *ip, *announce)),
            PartPlan::Ideal(cfg) => Box::new(IdealHost::new(cfg.clone()).map_err(|e| format!("{}: {e}", part.name))?),
            PartPlan::Host(cfg) => {
                let devices = devices(&cfg.adapters);
                Box::new(Machine::new((**cfg).clone(), devices, &part.name, trace.cloned()).map_err(|e| format!("{}: {e}", part.name))?)
            }
            PartPlan::Tap(tap) => {
                let device = TapDevice::open(&tap.cfg.device)
                    .map_err(|e| format!("tap {:?}: cannot open TAP device {:?}: {e}", part.name, tap.cfg.device))?;
                Box::new(TapBridge::new(tap.cfg.clone(), Box::new(device)))
            }
            PartPlan::Switch(cfg) => Box::new(Switch::new(cfg.clone())),
            PartPlan::Link(cfg, impairment) => {
                let mut link: Box<dyn Component> = Box::new(EthernetLink::new(cfg.clone()));
                if let Some(imp) = impairment {
                    link = Box::new(Impaired::new(link, imp.clone()));
                }
                match pcap {
                    Some((file, names)) if names.is_empty() || names.contains(&part.name) => {
                        let interface = file.borrow_mut().add_link(link_interface(plan, i, &part.name, cfg.rate_bps))?;
                        Box::new(Captured::new(link, file.clone(), interface))
                    }
                    _ => link,
                }
            }
        };
        sim.add(&part.name, component);
    }
    for ((a, pa), (b, pb)) in &plan.wires {
        sim.connect(Endpoint { component: *a, port: *pa }, Endpoint { component: *b, port: *pb })?;
    }
    Ok(sim)
}

/// Link `i` of `plan` as a capture interface: its ends as the scenario names
/// them (a switch's port, or an adapter past the first, after a colon).
fn link_interface<'a>(plan: &Plan, i: usize, name: &'a str, rate_bps: u64) -> LinkInterface<'a> {
    let end = |port: PortId| {
        let Some((_, (part, at))) = plan.wires.iter().find(|(link, _)| *link == (i, port)) else { return "?".to_string() };
        let other = &plan.parts[*part];
        if *at > 0 || matches!(other.plan, PartPlan::Switch(_)) {
            format!("{}:{at}", other.name)
        } else {
            other.name.clone()
        }
    };
    LinkInterface { name, a: end(END_A), b: end(END_B), rate_bps }
}
