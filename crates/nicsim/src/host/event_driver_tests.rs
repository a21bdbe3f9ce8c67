//! The event-ring driver on its own: what it writes into host memory and the
//! doorbells it rings, from the Malta study's hosts' settings, with no adapter.

use super::*;
use crate::nic::smart::hw::Hw;
use crate::scenario::PartPlan;
use crate::wire::ethernet::FCS;

/// The programmable adapter settings of host `name` in the Malta study's
/// host-to-host scenario (a frame sender, and a receiver whose stack takes
/// what arrives), and host memory as the adapter's bridge maps it.
fn malta(name: &str) -> (SmartConfig, Memory) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/papers/malta2001/host-to-host.toml");
    let plan = crate::scenario::load(&path).expect("the shipped scenario");
    let part = plan.parts.into_iter().find(|p| p.name == name).expect("the host");
    let PartPlan::Host(cfg) = part.plan else { unreachable!("a modelled host") };
    let smart = cfg.adapters[0].programmable.clone().expect("a programmable adapter");
    let mem = Hw::new(smart.adapter.clone()).mem;
    (smart, mem)
}

fn us(n: u64) -> Time {
    Time::ZERO + Duration::from_us(n)
}

fn read(mem: &Memory, addr: u64, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    mem.read(addr, &mut b).expect("mapped");
    b
}

/// Frame `n` of a sender: UDP, with its checksums, `size` bytes with FCS.
fn udp(n: u64, size: u32) -> Frame {
    let (a, b) = (
        crate::wire::endpoint::Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 5001 },
        crate::wire::endpoint::Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 80 },
    );
    Frame { bytes: crate::wire::endpoint::udp_frame(a, b, n, size, false), meta: Default::default() }
}

#[test]
fn a_send_call_writes_its_chunk_and_descriptor_and_rings_the_doorbell_at_its_end() {
    let (cfg, mut mem) = malta("sender");
    let mut d = EventDriver::new(&cfg, Some(SendCalls { per_call: 4, outstanding: 32 }));
    assert!(!d.stack_frames(), "the frame sender takes the adapter");
    d.start();
    let work = d.work(Vec::new());
    assert_eq!(work.len(), 32, "the sender's outstanding calls");
    let t = us(3);
    let (step, gro) = d.step(DriverWork::Send, (0..4).map(|n| udp(n, 1518)).collect(), t, &mut mem);
    assert_eq!((step.send_calls, step.frames_built, gro), (1, 4, None));
    let (addr, len, what) = parse_descriptor(&read(&mem, SEND_RING, 16));
    assert_eq!((addr, what), (APP, CHUNK | 4), "the descriptor points at a chunk of four");
    assert_eq!(step.copy_bytes, if cfg.host.zero_copy { 0 } else { len as u64 }, "copied unless the application's buffers are pinned");
    let chunk = read(&mem, addr, len as usize);
    let pieces = chunk::split(&chunk).expect("a chunk of frames");
    assert_eq!(pieces.len(), 4);
    assert!(pieces.iter().all(|r| r.len() == 1518 - FCS), "whole frames, without FCS");
    let first = &chunk[pieces[0].clone()];
    assert_eq!((&first[24..26], &first[40..42]), (&[0u8, 0][..], &[0u8, 0][..]), "IP and UDP checksums left to the adapter");
    assert!(d.step_end(us(5), &mut mem) == [Register::SendPosted { n: 0, made: t, issued: t }], "rung as the call ends");
    let (second, _) = d.step(DriverWork::Send, (4..6).map(|n| udp(n, 1518)).collect(), t, &mut mem);
    assert_eq!(second.frames_built, 2, "the count's last two frames");
    assert_eq!(parse_descriptor(&read(&mem, SEND_RING + SEND_SLOT, 16)).2, CHUNK | 2, "still a chunk");
    assert_eq!(d.step_end(t, &mut mem).len(), 1);
    let (third, _) = d.step(DriverWork::Send, Vec::new(), t, &mut mem);
    assert_eq!(third, DriverStep::default(), "nothing left to send");
    assert!(d.step_end(t, &mut mem).is_empty(), "and no doorbell");
}

#[test]
fn a_call_of_one_frame_writes_the_frame_alone() {
    let (cfg, mut mem) = malta("sender");
    let mut d = EventDriver::new(&cfg, Some(SendCalls { per_call: 1, outstanding: 1 }));
    let (step, _) = d.step(DriverWork::Send, vec![udp(0, 64)], us(1), &mut mem);
    assert_eq!(step.frames_built, 1);
    let (addr, len, what) = parse_descriptor(&read(&mem, SEND_RING, 16));
    assert_eq!((len, what), (60, 1), "the frame without FCS, no chunk");
    let frame = read(&mem, addr, 60);
    assert_eq!(&frame[..24], &udp(0, 64).bytes[..24], "as the sender built it up to its checksums");
}

#[test]
fn the_stacks_frames_wait_for_a_free_send_slot_and_take_it_as_a_completion_ends() {
    let (cfg, mut mem) = malta("receiver");
    let mut d = EventDriver::new(&cfg, None);
    assert!(d.stack_frames(), "no sender: the host's stack sends through it");
    let frame = |n: u16| Frame { bytes: vec![n as u8; 60], meta: Default::default() };
    for n in 0..SEND_SLOTS {
        assert!(matches!(d.send_frame(frame(n as u16), Time::ZERO, &mut mem), Some(Register::SendPosted { n: m, .. }) if m == n));
    }
    assert_eq!(d.send_frame(frame(99), Time::ZERO, &mut mem), None, "every slot in flight: it waits");
    let work = d.work(vec![Event::SendDone(0)]);
    assert_eq!(work, [DriverWork::SendDone]);
    let (step, _) = d.step(DriverWork::SendDone, Vec::new(), us(1), &mut mem);
    assert_eq!(step.completions, 1);
    let rung = d.step_end(us(2), &mut mem);
    assert!(matches!(rung[..], [Register::SendPosted { n, issued, .. }] if n == SEND_SLOTS && issued == us(2)));
    let slot = SEND_SLOTS % SEND_SLOTS;
    assert_eq!(read(&mem, APP + slot * chunk::MAX_CHUNK as u64, 60), vec![99u8; 60], "the waiting frame in the freed slot");
}

#[test]
fn a_filled_buffer_goes_up_the_stack_and_buffers_are_posted_back_in_batches() {
    let (cfg, mut mem) = malta("receiver");
    let batch = cfg.host.repost_batch as u64;
    let mut d = EventDriver::new(&cfg, None);
    let bytes = crate::wire::endpoint::udp_frame(
        crate::wire::endpoint::Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: 9 },
        crate::wire::endpoint::Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 9 },
        0,
        1518,
        false,
    );
    for slot in 0..batch {
        mem.write(RX_BUFFERS + slot * RX_SLOT, &bytes).expect("mapped");
        mem.write(RX_EVENTS + slot * 16, &rx_event(bytes.len() as u32, 1, 1)).expect("mapped");
        let (arrived, seen) = (us(slot), us(slot + 10));
        let work = d.work(vec![Event::Received { slot, seen, arrived: vec![arrived] }]);
        let [w] = &work[..] else { panic!("one piece of work: {work:?}") };
        let (step, _) = d.step(w.clone(), Vec::new(), seen, &mut mem);
        assert_eq!(step.delivered, [(bytes.clone(), 0)], "the frame, read from host memory, for the stack, as it came");
        assert_eq!((step.taken, step.went_up), (vec![(arrived, seen)], vec![arrived]));
        assert_eq!((step.completions, step.buffers_taken), (1, 1));
        let rung = d.step_end(seen, &mut mem);
        if slot + 1 < batch {
            assert!(rung.is_empty(), "buffer {slot} waits for its batch");
        } else {
            assert_eq!(rung, [Register::BuffersPosted(batch)]);
        }
    }
    // Beside its adapter's figures, which say frames came.
    let mut r = Report::default();
    r.count("rx_frames", batch);
    d.report(&mut r, Duration::ZERO);
    assert_eq!(r.get("rx_host_buffers"), Some(batch as f64));
    assert_eq!(r.get("rx_payload_bytes"), Some((batch * (1518 - 4 - 42)) as f64));
}

#[test]
fn its_receive_figures_stand_where_frames_came_and_none_went_up() {
    let (cfg, _) = malta("receiver");
    let d = EventDriver::new(&cfg, None);
    let mut quiet = Report::default();
    d.report(&mut quiet, Duration::ZERO);
    assert_eq!(quiet.get("rx_delivered_frames"), None, "no frame reached the adapter: nothing to say");
    // The adapter received frames (an offloaded XDP program dropped them all).
    let mut r = Report::default();
    r.count("rx_frames", 1000);
    d.report(&mut r, Duration::ZERO);
    assert_eq!((r.get("rx_delivered_frames"), r.get("rx_goodput_mbps")), (Some(0.0), Some(0.0)));
}

#[test]
fn a_segment_the_adapter_merged_goes_up_with_the_size_of_its_wire_segments() {
    // The adapter's LRO merged three segments (1,000, 1,000 and 500 bytes) into
    // one buffer; its event says so, and the stack is told 3 segments' worth
    // (Linux's gso_size, which mlx5 also divides out of an LRO segment).
    let (cfg, mut mem) = malta("receiver");
    let mut d = EventDriver::new(&cfg, None);
    let data: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
    let segs = crate::nic::firmware::tso::segment(&crate::nic::firmware::testing::template(5001, 100, 1000, 1, false, false), &data, 1000);
    let merged = crate::nic::firmware::gro::merged(&segs[0], segs[1..].iter().map(|s| s.as_slice()));
    let [one] = &merged[..] else { panic!("one merge") };
    mem.write(RX_BUFFERS, &one.bytes).expect("mapped");
    mem.write(RX_EVENTS, &rx_event(one.bytes.len() as u32, 1, 3)).expect("mapped");
    let work = d.work(vec![Event::Received { slot: 0, seen: us(5), arrived: vec![us(1), us(2), us(3)] }]);
    let [w] = &work[..] else { panic!("one piece of work: {work:?}") };
    let (step, _) = d.step(w.clone(), Vec::new(), us(5), &mut mem);
    let [(bytes, gso)] = &step.delivered[..] else { panic!("one frame up: {}", step.delivered.len()) };
    assert_eq!((bytes, *gso), (&one.bytes, 834), "2,500 bytes over 3 segments, rounded up");
    let mut tally = crate::stack::tally::Tally::default();
    tally.inbound(bytes, *gso);
    assert_eq!(tally.data_in, 3, "the stack counts the wire's segments");
}
