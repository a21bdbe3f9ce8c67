//! A run paced to the wall clock, for simulations that exchange frames with the
//! real world (a TAP device). Simulated time t is due at wall time start + t: the
//! run waits while it is ahead, and while it is behind it runs events as fast as
//! it can, measuring by how much it is late and saying so. Outside input is taken
//! when its file descriptor is readable and enters at the simulated time that
//! matches its arrival, or at the simulation's present if that is already later.

use std::os::fd::BorrowedFd;
use std::time::Instant;

use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use serde::Serialize;

use crate::engine::simulator::{ComponentId, SimError, Simulator, Stats};
use crate::time::{Duration, Time};

/// An event that runs this far ahead of its wall time still runs: waiting out a
/// few microseconds costs more in system calls than it buys in accuracy.
const LEAD: Duration = Duration::from_us(20);
/// While busy, outside input is looked at this often.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_micros(50);
/// How often a run that waits asks whether it should stop.
const ASK_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
/// Lag is said on standard error at most this often.
const SAY_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// How a paced run ends and when it counts an event as late.
pub struct Pacing<'a> {
    /// Without an end time: once frames have crossed, end after the simulation
    /// has had nothing to do and no input has come for this long.
    pub idle: Option<std::time::Duration>,
    /// An event run more than this after its wall time counts as late.
    pub late_after: Duration,
    /// Asked every tenth of a second; true ends the run (Ctrl-C).
    pub stop: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// Whether to say on standard error when the run falls behind.
    pub say: bool,
}

/// How well a paced run kept up with the wall clock.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PaceStats {
    pub wall_seconds: f64,
    /// Events run later than `late_after` behind their wall time.
    pub late_events: u64,
    /// The most an event ran behind its wall time, and the last event's lag (µs).
    pub max_lag_us: f64,
    pub end_lag_us: f64,
    /// Times outside input was taken.
    pub inputs: u64,
    /// Why the run ended: "duration", "idle" or "interrupted".
    pub ended_by: &'static str,
}

fn to_sim(wall: std::time::Duration) -> Time {
    Time(wall.as_nanos() as u64 * 1000)
}

/// Outside inputs and which of them are ready.
struct Inputs {
    ids: Vec<ComponentId>,
}

impl Inputs {
    /// Components whose input is readable after waiting at most `wait` (a
    /// component whose device failed stops offering a descriptor).
    fn ready(&self, sim: &Simulator, wait: std::time::Duration) -> Result<Vec<ComponentId>, String> {
        let open: Vec<(ComponentId, BorrowedFd)> = self.ids.iter().filter_map(|&id| Some((id, sim.slots[id].part.input_fd()?))).collect();
        let mut polls: Vec<PollFd> = open.iter().map(|(_, fd)| PollFd::new(*fd, PollFlags::POLLIN)).collect();
        if polls.is_empty() {
            std::thread::sleep(wait);
            return Ok(Vec::new());
        }
        match ppoll(&mut polls, Some(TimeSpec::from_duration(wait)), None) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => Ok(Vec::new()),
            Ok(_) => {
                Ok(open.iter().zip(&polls).filter(|(_, p)| p.revents().is_some_and(|r| !r.is_empty())).map(|((id, _), _)| *id).collect())
            }
            Err(e) => Err(format!("waiting for outside input: {e}")),
        }
    }
}

impl Simulator {
    /// Run paced to the wall clock until `until`, until idle, or until stopped.
    pub fn run_paced(&mut self, until: Option<Time>, pacing: &Pacing) -> Result<(Stats, PaceStats), SimError> {
        let inputs = Inputs { ids: (0..self.slots.len()).filter(|&id| self.slots[id].part.input_fd().is_some()).collect() };
        let limit = until.unwrap_or(Time::MAX);
        let origin = Instant::now();
        let mut stats = PaceStats::default();
        let mut looked = origin;
        let mut asked = origin;
        let mut said = None::<Instant>;
        let mut quiet_since = None::<Instant>;
        let mut crossed = false;
        self.start()?;
        let fail = |sim: &Simulator, message: String| SimError { component: "wall clock".into(), time: sim.now, message };
        loop {
            let wall = Instant::now();
            let due = to_sim(wall - origin);
            let next = self.queue.peek_time().filter(|t| *t <= limit);
            let busy = next.is_some_and(|t| t <= due + LEAD);
            if busy && wall - looked < LOOK_EVERY {
                let t = next.expect("busy means an event");
                let lag = due.since(t.min(due));
                stats.end_lag_us = lag.as_secs_f64() * 1e6;
                stats.max_lag_us = stats.max_lag_us.max(stats.end_lag_us);
                if lag > pacing.late_after {
                    stats.late_events += 1;
                    if pacing.say && said.is_none_or(|s: Instant| wall - s >= SAY_EVERY) {
                        eprintln!("nicsim: {:.1} ms behind the wall clock at simulated {t}", lag.as_secs_f64() * 1e3);
                        said = Some(wall);
                    }
                }
                self.next_event()?;
                quiet_since = None;
                continue;
            }
            // Not busy, or time to look: wait for input until the next event is due.
            let wait = match next {
                _ if busy => std::time::Duration::ZERO,
                Some(t) => std::time::Duration::from_nanos(t.since(due).ps().div_ceil(1000)).min(ASK_EVERY),
                None => ASK_EVERY,
            };
            let ready = inputs.ready(self, wait).map_err(|m| fail(self, m))?;
            looked = Instant::now();
            let arrived = to_sim(looked - origin).min(next.unwrap_or(Time::MAX)).min(limit);
            for id in &ready {
                self.take_input(*id, arrived)?;
                stats.inputs += 1;
                crossed = true;
            }
            if looked - asked >= ASK_EVERY {
                asked = looked;
                if pacing.stop.is_some_and(|stop| stop()) {
                    stats.ended_by = "interrupted";
                    break;
                }
            }
            let empty = self.queue.peek_time().is_none_or(|t| t > limit);
            if empty && ready.is_empty() {
                if to_sim(looked - origin) >= limit {
                    stats.ended_by = "duration";
                    break;
                }
                let since = *quiet_since.get_or_insert(looked);
                if crossed && until.is_none() && pacing.idle.is_some_and(|idle| looked - since >= idle) {
                    stats.ended_by = "idle";
                    break;
                }
            } else if !ready.is_empty() {
                quiet_since = None;
            }
        }
        let wall = origin.elapsed();
        stats.wall_seconds = wall.as_secs_f64();
        let end = until.filter(|_| stats.ended_by == "duration").unwrap_or(self.now.max(to_sim(wall).min(limit)));
        Ok((self.finish(end)?, stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Component, Ctx, Msg, PortId};
    use crate::observe::Report;
    use std::io::{PipeReader, Read, Write};
    use std::os::fd::AsFd;

    /// Takes bytes from a pipe as outside input and notes when each came in.
    struct Listener {
        pipe: PipeReader,
        came: Vec<Time>,
    }
    impl Component for Listener {
        fn kind(&self) -> &'static str {
            "listener"
        }
        fn handle(&mut self, _: PortId, _: Msg, _: &mut Ctx) {}
        fn input_fd(&self) -> Option<BorrowedFd<'_>> {
            Some(self.pipe.as_fd())
        }
        fn take_input(&mut self, ctx: &mut Ctx) {
            let mut b = [0];
            self.pipe.read_exact(&mut b).unwrap();
            self.came.push(ctx.now());
            ctx.wake_after(Duration::from_us(1), 0);
        }
        fn report(&self, _: Time) -> Report {
            let mut r = Report::default();
            r.count("inputs", self.came.len() as u64);
            r.count("first_ps", self.came.first().map_or(0, |t| t.ps()));
            r
        }
    }

    fn pacing(stop: Option<&(dyn Fn() -> bool + Sync)>) -> Pacing<'_> {
        Pacing { idle: Some(std::time::Duration::from_millis(10)), late_after: Duration::from_ms(1), stop, say: false }
    }

    #[test]
    fn outside_input_enters_no_earlier_than_it_arrived_and_the_run_ends_at_its_duration() {
        let (pipe, mut writer) = std::io::pipe().unwrap();
        let mut sim = Simulator::new(1);
        sim.add("l", Box::new(Listener { pipe, came: vec![] }));
        let feeder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            writer.write_all(&[1]).unwrap();
            writer // kept open: a closed pipe would read as ready for ever
        });
        let (stats, paced) = sim.run_paced(Some(Time::ZERO + Duration::from_ms(60)), &pacing(None)).unwrap();
        drop(feeder.join().unwrap());
        assert_eq!(paced.ended_by, "duration", "a duration wins over idleness");
        assert_eq!(stats.end, Time::ZERO + Duration::from_ms(60));
        let r = &sim.reports()[0].2;
        assert_eq!(r.get("inputs"), Some(1.0));
        assert!(r.get("first_ps").unwrap() >= Duration::from_ms(30).ps() as f64, "stamped at its wall arrival");
        assert_eq!(stats.events, 1, "the wake-up it asked for ran");
    }

    #[test]
    fn a_stop_request_ends_a_run_that_would_wait_for_ever() {
        let (pipe, _writer) = std::io::pipe().unwrap();
        let mut sim = Simulator::new(1);
        sim.add("l", Box::new(Listener { pipe, came: vec![] }));
        let stop = || true;
        let (_, paced) = sim.run_paced(None, &pacing(Some(&stop))).unwrap();
        assert_eq!(paced.ended_by, "interrupted");
    }
}
