//! The host as the boundary sees it: given its configuration and a device for
//! each adapter, it runs the driver each device's interface asks for, and
//! serves each vector an adapter of several queues raises by that queue's
//! port, whatever the devices are.

use super::*;
use crate::host::config::FrameSenderConfig;
use crate::processor::Account;
use crate::scenario::PartPlan;
use crate::wire::endpoint::{ipv4_headers, Addr};
use crate::wire::{Frame, L4};

/// A device that only says how its driver reaches it; with several queues,
/// it puts each frame from the wire in the receive ring of the queue its
/// last byte names, at once, and raises that queue's vector.
struct Probe {
    interface: Interface,
    queues: usize,
}

impl Probe {
    fn boxed(interface: Interface) -> Box<dyn Device> {
        Box::new(Probe { interface, queues: 1 })
    }
}

impl Device for Probe {
    fn interface(&self) -> Interface {
        self.interface
    }
    fn queues(&self) -> usize {
        self.queues
    }
    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx) {
        let q = *frame.bytes.last().expect("a frame") as usize % self.queues;
        cx.queue(q, |cx| {
            let now = cx.now();
            cx.rings[0].rx.complete(frame, now);
            cx.out.completions.push((now, 1));
        });
    }
    fn timer(&mut self, _tag: u64, _cx: &mut DeviceCx) {}
    fn processors(&mut self) -> Vec<&mut Account> {
        Vec::new()
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
    assert_eq!(m.ring_ports, vec![1], "only a ring driver polls rings");
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
fn every_adapter_needs_one_device_with_its_queues() {
    let Err(e) = Machine::new(host(2, 1), vec![Probe::boxed(Interface::Rings)], "h", None) else { panic!("built") };
    assert_eq!(e, "1 devices for 2 adapters");
    let Err(e) = Machine::new(host(1, 4), vec![Probe::boxed(Interface::Rings)], "h", None) else { panic!("built") };
    assert_eq!(e, "adapter 0 has 1 queues, and the host gives it 4");
}

#[test]
fn a_vector_an_adapter_raises_is_served_by_its_queues_port() {
    // Two adapters of two queues: ports 0 and 1 are the first's queues, 2 and 3 the second's.
    let devices: Vec<Box<dyn Device>> = (0..2).map(|_| Box::new(Probe { interface: Interface::Rings, queues: 2 }) as _).collect();
    let mut m = Machine::new(host(2, 2), devices, "h", None).expect("built");
    let (mut outbox, mut rng) = (Vec::new(), crate::engine::component_rng(1, "t"));
    let now = Time::ZERO + Duration::from_us(1);
    let mut ctx = Ctx::new(now, &mut outbox, &mut rng);
    let (a, b) = (Addr { mac: [2, 0, 0, 0, 0, 9], ip: [10, 0, 0, 9], port: 9 }, Addr { mac: m.cfg.mac, ip: m.cfg.ip, port: 9 });
    // A frame by the second adapter (wire 1) whose last byte names its second queue.
    let bytes = crate::wire::build(&ipv4_headers(a, b, 0, L4::Udp { src_port: 9, dst_port: 9 }), &[1; 18]).expect("builds");
    m.handle(1, Msg::Frame(Box::new(Frame { bytes, meta: Default::default() })), &mut ctx);
    let ready: Vec<bool> = (0..4).map(|p| m.adapters.rings_ref(p).rx.ready(now)).collect();
    assert_eq!(ready, vec![false, false, false, true], "in the ring of port 3 alone");
    let pending: Vec<u32> = m.ports.iter().map(|p| p.irq.count() + p.irq.raised as u32).collect();
    assert_eq!(pending, vec![0, 0, 0, 1], "port 3's vector, none other");
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
