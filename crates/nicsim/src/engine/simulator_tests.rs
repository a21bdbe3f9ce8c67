//! Tests of the simulator (`engine::simulator`): ordering, routing, inline
//! hand-overs and timers run at once.

use super::*;
use crate::time::Duration;

/// Sends a timer to itself `n` times, 10 ps apart, and records when they came.
struct Ticker {
    left: u32,
    seen: Vec<Time>,
}
impl Component for Ticker {
    fn kind(&self) -> &'static str {
        "ticker"
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.wake_after(Duration(10), 0);
    }
    fn handle(&mut self, _port: PortId, _msg: Msg, ctx: &mut Ctx) {
        self.seen.push(ctx.now());
        self.left -= 1;
        if self.left > 0 {
            ctx.wake_after(Duration(10), 0);
        }
        ctx.send_after(0, Duration(5), Msg::Timer(0));
    }
    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        r.count("ticks", self.seen.len() as u64);
        r
    }
}

struct Counter(u64);
impl Component for Counter {
    fn kind(&self) -> &'static str {
        "counter"
    }
    fn handle(&mut self, _port: PortId, _msg: Msg, _ctx: &mut Ctx) {
        self.0 += 1;
    }
    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        r.count("got", self.0);
        r
    }
}

/// A ticker that fires `ticks` times, wired to a counter.
fn ticker_into_counter(ticks: u32) -> Simulator {
    let mut sim = Simulator::new(1);
    let a = sim.add("a", Box::new(Ticker { left: ticks, seen: vec![] }));
    let b = sim.add("b", Box::new(Counter(0)));
    sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: b, port: 0 }).unwrap();
    sim
}

#[test]
fn runs_timers_and_routes_through_wiring() {
    let mut sim = ticker_into_counter(3);
    let stats = sim.run(None).unwrap();
    assert_eq!(stats.end, Time(35));
    assert_eq!(stats.events, 6);
    assert_eq!(sim.reports()[1].2.get("got"), Some(3.0));
}

/// Sends `n` frames of 1514 bytes on port 0 at start; records when frames arrive.
struct Bursts {
    n: u32,
    seen: std::rc::Rc<std::cell::RefCell<Vec<Time>>>,
    /// How it takes frames; one taking them last answers the first one
    /// when `answer`.
    inline: Inline,
    answer: bool,
}
impl Component for Bursts {
    fn kind(&self) -> &'static str {
        "bursts"
    }
    fn start(&mut self, ctx: &mut Ctx) {
        for _ in 0..self.n {
            ctx.send_at(0, Time(1_000), Msg::frame(crate::wire::Frame { bytes: vec![0; 1514], meta: Default::default() }));
        }
    }
    fn inline(&self) -> Inline {
        self.inline
    }
    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        if let Msg::Frame(_) = msg {
            self.seen.borrow_mut().push(ctx.now());
            if std::mem::take(&mut self.answer) {
                ctx.wake_after(Duration(1), 0);
            }
        }
    }
    fn report(&self, _end: Time) -> Report {
        Report::default()
    }
}

/// Three frames from a `Bursts` over a gigabit link into `sink`.
fn bursts_over_a_link(sink: Bursts) -> Simulator {
    use crate::link::{EthernetLink, LinkConfig};
    let mut sim = Simulator::new(1);
    let a = sim.add("a", Box::new(Bursts { n: 3, seen: Default::default(), inline: Inline::No, answer: false }));
    let cfg = LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::from_ns(500), tx_queue: 10 };
    let l = sim.add("l", Box::new(EthernetLink::new(cfg)));
    let b = sim.add("b", Box::new(sink));
    sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: l, port: 0 }).unwrap();
    sim.connect(Endpoint { component: l, port: 1 }, Endpoint { component: b, port: 0 }).unwrap();
    sim
}

/// Sent at 1 ns; each holds the wire 12.304 us; the last bit comes 12.208 us
/// after its start, plus 500 ns.
const ARRIVALS: [Time; 3] = [Time(12_709_000), Time(25_013_000), Time(37_317_000)];

#[test]
fn a_link_takes_frames_inline_at_their_send_time() {
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut sim = bursts_over_a_link(Bursts { n: 0, seen: seen.clone(), inline: Inline::No, answer: false });
    let stats = sim.run(None).unwrap();
    assert_eq!(stats.events, 3, "the three arrivals: the link took the frames without events");
    assert_eq!(*seen.borrow(), ARRIVALS);
    assert_eq!(stats.end, ARRIVALS[2]);
}

#[test]
fn a_sink_takes_frames_inline_when_they_are_due_by_the_end() {
    for (limit, taken) in [(None, 3), (Some(ARRIVALS[1]), 2), (Some(Time(ARRIVALS[0].0 - 1)), 0)] {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut sim = bursts_over_a_link(Bursts { n: 0, seen: seen.clone(), inline: Inline::Last, answer: false });
        let stats = sim.run(limit).unwrap();
        assert_eq!(stats.events, 0, "neither the link nor the sink took an event");
        assert_eq!(*seen.borrow(), ARRIVALS[..taken], "limit {limit:?}");
        // Without a limit the run still lasts until the last arrival.
        assert_eq!(stats.end, limit.unwrap_or(ARRIVALS[2]));
    }
}

#[test]
fn a_component_taking_frames_last_may_not_answer_them() {
    let sink = Bursts { n: 0, seen: Default::default(), inline: Inline::Last, answer: true };
    let err = bursts_over_a_link(sink).run(None).unwrap_err();
    assert_eq!((err.component.as_str(), err.time), ("b", ARRIVALS[0]));
    assert!(err.message.contains("in answer to a frame"), "{}", err.message);
}

type Log = std::rc::Rc<std::cell::RefCell<Vec<(&'static str, u64)>>>;

/// Wakes every `period` ps, `n` times, and logs each wake-up with its name;
/// with `echo`, each wake-up also sends a message out of port 0 that
/// arrives half a period later.
struct Clock {
    name: &'static str,
    period: u64,
    n: u32,
    log: Log,
    echo: bool,
}

/// Logs what arrives.
struct Logger(&'static str, Log);
impl Component for Logger {
    fn kind(&self) -> &'static str {
        "logger"
    }
    fn handle(&mut self, _port: PortId, _msg: Msg, ctx: &mut Ctx) {
        self.1.borrow_mut().push((self.0, ctx.now().0));
    }
    fn report(&self, _end: Time) -> Report {
        Report::default()
    }
}
impl Component for Clock {
    fn kind(&self) -> &'static str {
        "clock"
    }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.wake_after(Duration(self.period), 0);
    }
    fn handle(&mut self, _port: PortId, _msg: Msg, ctx: &mut Ctx) {
        self.log.borrow_mut().push((self.name, ctx.now().0));
        if self.echo {
            ctx.send_after(0, Duration(self.period / 2), Msg::Timer(0));
        }
        self.n -= 1;
        if self.n > 0 {
            ctx.wake_after(Duration(self.period), 0);
        }
    }
    fn report(&self, _end: Time) -> Report {
        Report::default()
    }
}

#[test]
fn a_timer_due_before_anything_else_runs_at_once_in_queue_order() {
    for (limit, last) in [(None, 90), (Some(Time(75)), 70)] {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut sim = Simulator::new(1);
        sim.add("a", Box::new(Clock { name: "a", period: 10, n: 9, log: log.clone(), echo: false }));
        sim.add("b", Box::new(Clock { name: "b", period: 15, n: 4, log: log.clone(), echo: false }));
        let stats = sim.run(limit).unwrap();
        // At 30 and 60 b's wake-up was queued first; after 60 a runs alone,
        // each wake-up the next event.
        let mut want = vec![("a", 10), ("b", 15), ("a", 20), ("b", 30), ("a", 30), ("a", 40), ("b", 45), ("a", 50)];
        want.extend([("b", 60), ("a", 60), ("a", 70), ("a", 80), ("a", 90)].into_iter().filter(|w| w.1 <= last));
        assert_eq!(*log.borrow(), want, "limit {limit:?}");
        assert_eq!(stats.events, want.len() as u64, "each wake-up counts as an event");
        assert_eq!(stats.end, limit.unwrap_or(Time(90)));
    }
}

#[test]
fn a_timer_waits_for_what_its_component_sent_before_it() {
    let log = Log::default();
    let mut sim = Simulator::new(1);
    let a = sim.add("a", Box::new(Clock { name: "a", period: 10, n: 3, log: log.clone(), echo: true }));
    let e = sim.add("echo", Box::new(Logger("echo", log.clone())));
    sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: e, port: 0 }).unwrap();
    assert_eq!(sim.run(None).unwrap().events, 6);
    assert_eq!(*log.borrow(), [("a", 10), ("echo", 15), ("a", 20), ("echo", 25), ("a", 30), ("echo", 35)]);
}

#[test]
fn stops_at_the_limit() {
    let mut sim = ticker_into_counter(100);
    let stats = sim.run(Some(Time(50))).unwrap();
    assert_eq!(stats.end, Time(50));
    assert_eq!(sim.reports()[0].2.get("ticks"), Some(5.0));
}

#[test]
fn unwired_port_is_an_error_naming_the_component() {
    let mut sim = Simulator::new(1);
    sim.add("lonely", Box::new(Ticker { left: 1, seen: vec![] }));
    let err = sim.run(None).unwrap_err();
    assert_eq!(err.component, "lonely");
    assert_eq!(err.time, Time(10));
}

#[test]
fn a_link_whose_far_end_is_unwired_is_an_error_naming_the_link() {
    use crate::link::{EthernetLink, LinkConfig};
    let mut sim = Simulator::new(1);
    let a = sim.add("a", Box::new(Bursts { n: 1, seen: Default::default(), inline: Inline::No, answer: false }));
    let cfg = LinkConfig { rate_bps: 1_000_000_000, propagation: Duration::ZERO, tx_queue: 10 };
    let l = sim.add("dangling", Box::new(EthernetLink::new(cfg)));
    sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: l, port: 0 }).unwrap();
    let err = sim.run(None).unwrap_err();
    assert_eq!(err.component, "dangling");
    assert!(err.message.contains("port 1"), "{}", err.message);
}

#[test]
fn a_port_takes_one_wire() {
    let mut sim = Simulator::new(1);
    let a = sim.add("a", Box::new(Counter(0)));
    let b = sim.add("b", Box::new(Counter(0)));
    let c = sim.add("c", Box::new(Counter(0)));
    sim.connect(Endpoint { component: a, port: 0 }, Endpoint { component: b, port: 0 }).unwrap();
    assert!(sim.connect(Endpoint { component: c, port: 0 }, Endpoint { component: a, port: 0 }).is_err());
}

#[test]
fn a_watcher_looks_every_so_many_events_and_changes_nothing() {
    let ticks = 3 * WATCH_EVERY as u32;
    let plain = ticker_into_counter(ticks).run(None).unwrap();
    let mut looks = Vec::new();
    let mut sim = ticker_into_counter(ticks);
    let watched = sim.run_watched(None, &mut |now, events| {
        looks.push((now, events));
        false
    });
    let watched = watched.unwrap().expect("a watcher that never stops lets the run end");
    assert_eq!((watched.end, watched.events), (plain.end, plain.events));
    assert_eq!(sim.reports()[1].2.get("got"), Some(ticks as f64));
    // Two events a tick (its timer, the counter's message): a look every WATCH_EVERY of them.
    assert_eq!(looks.len() as u64, plain.events / WATCH_EVERY);
    assert!(looks.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 - w[0].1 == WATCH_EVERY), "{looks:?}");
}

#[test]
fn a_watcher_that_says_stop_ends_the_run_unfinished() {
    let mut sim = ticker_into_counter(10 * WATCH_EVERY as u32);
    let stopped = sim.run_watched(None, &mut |_, events| events >= 2 * WATCH_EVERY).unwrap();
    assert!(stopped.is_none(), "no stats for an unfinished run");
    // It stopped at the look that said so, after 2 * WATCH_EVERY events: a tick
    // every 10 ps and the counter's message 5 ps after each.
    assert_eq!(sim.now(), Time(WATCH_EVERY * 10 + 5));
}
