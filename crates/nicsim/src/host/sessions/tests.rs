//! The sessions on their own: two hosts' sessions over a perfect wire (10 µs a
//! hop), no machine, no costs.

use std::sync::Arc;

use super::*;
use crate::stack::AckPolicy;

fn station(last: u8) -> StackConfig {
    let neighbors = [1u8, 2].map(|n| ([10, 0, 0, n], [2, 0, 0, 0, 0, n]));
    StackConfig {
        mac: [2, 0, 0, 0, 0, last],
        ip: [10, 0, 0, last],
        mtu: 1500,
        neighbors: Arc::new(neighbors.into_iter().collect()),
        tso: false,
    }
}

fn socket() -> SocketConfig {
    SocketConfig {
        rx_buffer: 65_535,
        tx_buffer: SEND_BUFFER,
        nagle: false,
        ack_delay: Some(Duration::from_ms(1)),
        ack_policy: AckPolicy::EverySecondSegment,
        min_rto: Duration::from_ms(200),
        cubic: false,
        byte_counting: false,
        tso_defer: false,
    }
}

fn session(role: Role, port: u16) -> SessionConfig {
    SessionConfig { role, port, socket: socket(), peer: None, ncp: false }
}

fn sessions(last: u8, list: Vec<SessionConfig>) -> Sessions {
    Sessions::new(&station(last), last as u64, list, vec![Some(false)], &[]).expect("sessions")
}

/// Run `a` and `b` against each other until `until`: each run's frames reach
/// the other 10 µs later, and each side's timers fire when due. Returns the
/// requests each side's `Work` counted.
fn exchange(a: &mut Sessions, b: &mut Sessions, until: Time) -> (u64, u64) {
    let hop = Duration::from_us(10);
    let mut now = Time::ZERO;
    let mut requests = (0, 0);
    let (wa, wb) = (a.start(now), b.start(now));
    let (mut to_b, mut to_a) = (wa.out, wb.out);
    requests.0 += wa.requests;
    requests.1 += wb.requests;
    while now < until {
        now += hop;
        let (arrive_b, arrive_a) = (std::mem::take(&mut to_b), std::mem::take(&mut to_a));
        for (_, f) in arrive_b {
            b.input(0, f);
        }
        for (_, f) in arrive_a {
            a.input(0, f);
        }
        for (side, s, out) in [(0, &mut *a, &mut to_b), (1, &mut *b, &mut to_a)] {
            let work = match s.next_timer(now) {
                Some(t) if t <= now => s.timer(now, true),
                _ => s.run(now, true, Work::default()),
            };
            if side == 0 {
                requests.0 += work.requests
            } else {
                requests.1 += work.requests
            }
            out.extend(work.out);
        }
    }
    requests
}

#[test]
fn a_file_session_reads_whole_answers_and_asks_again() {
    let ask = Role::Ask { ip: [10, 0, 0, 2], port: 80, request: 100, answer: 20_000, think: Duration::ZERO, start: Duration::ZERO };
    let mut client = sessions(1, vec![session(ask, 40_000)]);
    let mut server = sessions(2, vec![session(Role::Answer { request: 100, answer: 20_000 }, 80)]);
    exchange(&mut client, &mut server, Time::ZERO + Duration::from_ms(50));
    // A request and its answer (14 segments, within one window) take a hop each:
    // at most one exchange every 20 µs.
    assert!((2_000..=2_500).contains(&client.answers_read()), "answers read: {}", client.answers_read());
    assert!(server.requests_answered() >= client.answers_read(), "every answer read was a request answered");
    assert!(server.requests_answered() <= client.answers_read() + 1, "one answer at most on its way");
    assert_eq!((client.bad_payload(), server.bad_payload()), (0, 0), "every byte read is the pattern's");
}

#[test]
fn a_think_time_spaces_the_requests() {
    let think = Duration::from_ms(5);
    let ask = Role::Ask { ip: [10, 0, 0, 2], port: 80, request: 100, answer: 1_000, think, start: Duration::ZERO };
    let mut client = sessions(1, vec![session(ask, 40_000)]);
    let mut server = sessions(2, vec![session(Role::Answer { request: 100, answer: 1_000 }, 80)]);
    exchange(&mut client, &mut server, Time::ZERO + Duration::from_ms(52));
    // Each exchange takes well under a millisecond, then 5 ms of thinking: about 10 in 52 ms.
    assert!((9..=11).contains(&client.answers_read()), "answers read: {}", client.answers_read());
}

#[test]
fn a_ttcp_stream_arrives_whole_and_its_digests_agree() {
    let bytes = 300_000;
    let send = Role::Send { ip: [10, 0, 0, 2], port: 5001, message: 8192, bytes, seed: 7, start: Duration::ZERO };
    let mut sender = sessions(1, vec![session(send, 40_000)]);
    let mut receiver = sessions(2, vec![session(Role::Receive { message: 8192 }, 5001)]);
    let (writes, reads) = exchange(&mut sender, &mut receiver, Time::ZERO + Duration::from_ms(100));
    let (sent, _, _, _) = sender.ttcp().expect("a TTCP sender");
    let (got, _, _, _) = receiver.ttcp().expect("a TTCP receiver");
    assert_eq!(got.bytes, bytes, "every byte arrived");
    assert_eq!(got.digest48(), sent.digest48(), "in order and intact");
    assert_eq!(writes, bytes.div_ceil(8192), "one write call a message");
    assert!(reads >= bytes.div_ceil(8192), "at least one read call a message: {reads}");
}
