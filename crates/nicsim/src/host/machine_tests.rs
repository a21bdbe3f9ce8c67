//! The host as the boundary sees it: given its configuration and a device in
//! each slot, it runs the driver each device's interface asks for, and lets the
//! queues of one adapter share its MAC, whatever the devices are.

use std::cell::Cell;
use std::rc::Rc;

use super::*;
use crate::host::config::FrameSenderConfig;
use crate::processor::Account;
use crate::scenario::PartPlan;
use crate::wire::Frame;

/// A device that only says how its driver reaches it, and keeps the MAC it
/// was given.
struct Probe {
    interface: Interface,
    mac: Rc<Cell<Time>>,
}

impl Probe {
    fn boxed(interface: Interface) -> Box<dyn Device> {
        Box::new(Probe { interface, mac: Rc::new(Cell::new(Time::ZERO)) })
    }
}

impl Device for Probe {
    fn interface(&self) -> Interface {
        self.interface
    }
    fn frame_in(&mut self, _frame: Box<Frame>, _cx: &mut DeviceCx) {}
    fn timer(&mut self, _tag: u64, _cx: &mut DeviceCx) {}
    fn processors(&mut self) -> Vec<&mut Account> {
        Vec::new()
    }
    fn mac(&self) -> Option<Rc<Cell<Time>>> {
        Some(self.mac.clone())
    }
    fn share_mac(&mut self, mac: Rc<Cell<Time>>) {
        self.mac = mac;
    }
}

/// The host every test starts from; `host` adds its adapters and their floods.
const HOST: &str = r#"
name = "t"
duration = "1ms"
[[host]]
name = "h"
cpus = 4
clock = "1GHz"
sink = true
[host.costs]
interrupt_entry = 1000
interrupt_exit = 500
rx_frame = 300
protocol_segment = 700
tx_frame = 1000
[host.bus]
kind = "pcie"
"#;

/// The configuration of a host with `adapters` ring adapters of `queues`
/// queues each, flooded by one source per adapter.
fn host(adapters: usize, queues: u32) -> HostConfig {
    let mut text = String::from(HOST);
    for _ in 0..adapters {
        text += &format!("[[host.adapter]]\nqueues = {queues}\nrx_fifo = 65536\n");
    }
    for i in 0..adapters {
        let end = if adapters == 1 { "h".to_string() } else { format!("h:{i}") };
        text += &format!("[[source]]\nname = \"s{i}\"\nto = \"h\"\nframe_size = 64\n");
        text += &format!("[[link]]\nname = \"w{i}\"\na = \"s{i}\"\nb = \"{end}\"\nrate = \"1Gbps\"\n");
    }
    let plan = crate::scenario::validate(&crate::scenario::parse(&text).expect("parses")).expect("valid");
    let part = plan.parts.into_iter().find(|p| p.name == "h").expect("the host");
    let PartPlan::Host(cfg) = part.plan else { unreachable!("a modelled host") };
    *cfg
}

/// The host of a shipped scenario (path from the repository's root).
fn shipped_host(path: &str, name: &str) -> HostConfig {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path);
    let plan = crate::scenario::load(&path).expect("the shipped scenario");
    let part = plan.parts.into_iter().find(|p| p.name == name).expect("the host");
    let PartPlan::Host(cfg) = part.plan else { unreachable!("a modelled host") };
    *cfg
}

#[test]
fn each_adapter_gets_the_driver_its_interface_asks_for() {
    // Port 0 is a programmable adapter, port 1 a ring adapter.
    let cfg = shipped_host("scenarios/combinations/ring-and-programmable.toml", "server");
    let m = Machine::new(cfg, vec![Probe::boxed(Interface::Events), Probe::boxed(Interface::Rings)], "h", None).expect("built");
    assert!(m.ports[1].ring_ref().is_some() && !m.ports[1].events());
    assert!(m.ports[0].events() && m.ports[0].ring_ref().is_none());
    assert_eq!(m.rings, vec![1], "only a ring driver polls rings");
    assert_eq!(m.ports[0].stack_segments(), Some(true), "the host's stack sends through the event ring, the adapter segmenting");
}

#[test]
fn a_device_that_speaks_in_messages_needs_sockets_on_the_host() {
    let Err(e) = Machine::new(host(1, 1), vec![Probe::boxed(Interface::Messages)], "h", None) else { panic!("built") };
    assert!(e.contains("adapter 0") && e.contains("messages"), "{e}");
}

#[test]
fn a_device_with_an_event_ring_needs_its_drivers_settings() {
    let Err(e) = Machine::new(host(2, 1), vec![Probe::boxed(Interface::Rings), Probe::boxed(Interface::Events)], "h", None) else {
        panic!("built")
    };
    assert!(e.contains("adapter 1") && e.contains("event ring"), "{e}");
}

#[test]
fn every_slot_needs_one_device() {
    let Err(e) = Machine::new(host(2, 1), vec![Probe::boxed(Interface::Rings)], "h", None) else { panic!("built") };
    assert_eq!(e, "1 devices for 2 adapter slots");
}

#[test]
fn the_queues_of_one_adapter_send_through_its_first_queues_mac() {
    let devices = (0..4).map(|_| Probe::boxed(Interface::Rings)).collect();
    let mut m = Machine::new(host(2, 2), devices, "h", None).expect("built");
    let mac = |m: &mut Machine, p: usize| m.ports[p].device.mac().expect("a MAC");
    let (a0, a1, b0, b1) = (mac(&mut m, 0), mac(&mut m, 1), mac(&mut m, 2), mac(&mut m, 3));
    assert!(Rc::ptr_eq(&a0, &a1) && Rc::ptr_eq(&b0, &b1), "each adapter's queues share one MAC");
    assert!(!Rc::ptr_eq(&a0, &b0), "two adapters do not");
}

#[test]
fn a_frame_sender_is_a_process_through_a_ring_and_send_calls_through_an_event_ring() {
    // The Malta sender's frame workload, through its programmable adapter.
    let cfg = shipped_host("scenarios/papers/malta2001/send.toml", "host");
    let send = cfg.send.clone().expect("the frame workload's sender");
    let m = Machine::new(cfg.clone(), vec![Probe::boxed(Interface::Events)], "h", None).expect("built");
    let Driver::Events(d) = &m.ports[0].driver else { panic!("an event-ring driver") };
    assert_eq!((d.per_call(), d.stack_frames()), (send.burst, false), "its calls, and the stack kept off the adapter");
    assert!(!m.procs.run_queue(send.cpu as usize).sender, "no sender process: its calls follow completions");
    // The same sender as a blast through a ring adapter is a process on its processor.
    let mut ring = host(1, 1);
    ring.blast = Some(FrameSenderConfig { port: 0, cpu: 2, ..send });
    let m = Machine::new(ring, vec![Probe::boxed(Interface::Rings)], "h", None).expect("built");
    assert!(m.procs.run_queue(2).sender && !m.procs.run_queue(0).sender);
}
