//! What a host bus was busy with: transactions, bytes, bus time and wait states
//! per purpose, and each direction's time, counted within the run (an adapter
//! with a backlog books its transfers ahead, some past the run's end).

use crate::bus::purpose::{Purpose, PURPOSES};
use crate::observe::Report;
use crate::time::{Duration, Time};

#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    transactions: u64,
    bytes: u64,
    busy: Duration,
    /// Of `busy`, what lies within the run, going (up, down).
    in_run: [Duration; 2],
    wait_clocks: u64,
}

#[derive(Debug)]
pub(super) struct Occupancy {
    tally: [Tally; PURPOSES.len()],
    /// Each direction's (up, down) bus time within the run.
    in_run: [Duration; 2],
    run_end: Time,
}

impl Default for Occupancy {
    fn default() -> Self {
        Occupancy { tally: Default::default(), in_run: [Duration::ZERO; 2], run_end: Time::MAX }
    }
}

/// One booking: `busy` bus time spread from `start` to `end`, going up (device
/// to host) or down; `part` when it is the second half of a transaction
/// already counted (a read's completions).
pub(super) struct Booking {
    pub up: bool,
    pub purpose: Purpose,
    pub start: Time,
    pub end: Time,
    pub busy: Duration,
    pub bytes: u64,
    pub wait: u64,
    pub part: bool,
}

impl Occupancy {
    /// The run ends at `end`.
    pub fn ends_at(&mut self, end: Time) {
        self.run_end = end;
    }

    pub fn count(&mut self, b: Booking) {
        let in_run = within(b.start, b.end, b.busy, self.run_end);
        let dir = usize::from(!b.up);
        self.in_run[dir] = self.in_run[dir] + in_run;
        let t = &mut self.tally[b.purpose as usize];
        t.transactions += u64::from(!b.part);
        t.bytes += b.bytes;
        t.busy = t.busy + b.busy;
        t.in_run[dir] = t.in_run[dir] + in_run;
        t.wait_clocks += b.wait;
    }

    /// Overall (one shared bus, or each PCIe direction) and by purpose, with
    /// transaction counts; wait states on PCI. A purpose's share is of the
    /// bus's time, or of each PCIe direction's (a read's request goes up, its
    /// data down, each direction's shares adding up to its utilization).
    pub fn report(&self, r: &mut Report, end: Time, pci: bool) {
        let frac = |d: Duration| if end.ps() == 0 { 0.0 } else { d.ps() as f64 / end.ps() as f64 };
        let dirs: &[(&str, Duration)] =
            if pci { &[("bus", self.in_run[0])] } else { &[("bus_up", self.in_run[0]), ("bus_down", self.in_run[1])] };
        for (name, in_run) in dirs {
            let busy = frac(*in_run);
            r.real(&format!("{name}_utilization"), busy);
            r.real(&format!("{name}_idle"), 1.0 - busy);
        }
        for (p, name) in PURPOSES {
            let t = &self.tally[p as usize];
            if t.transactions > 0 {
                r.count(&format!("bus_{name}_transactions"), t.transactions);
                if pci {
                    r.real(&format!("bus_{name}_share"), frac(t.in_run[0] + t.in_run[1]));
                } else {
                    r.real(&format!("bus_up_{name}_share"), frac(t.in_run[0]));
                    r.real(&format!("bus_down_{name}_share"), frac(t.in_run[1]));
                }
                r.real(&format!("bus_{name}_mean_ns"), t.busy.ps() as f64 / 1e3 / t.transactions as f64);
                if pci {
                    r.real(&format!("bus_{name}_wait_clocks_mean"), t.wait_clocks as f64 / t.transactions as f64);
                }
            }
        }
        if pci {
            r.count("bus_wait_clocks", self.tally.iter().map(|t| t.wait_clocks).sum());
        }
    }
}

/// Of `busy` bus time spread from `start` to `end`, what lies before `run_end`
/// (in proportion, for a transfer split into pieces around other traffic).
fn within(start: Time, end: Time, busy: Duration, run_end: Time) -> Duration {
    if end <= run_end {
        busy
    } else if start >= run_end {
        Duration::ZERO
    } else {
        Duration((busy.ps() as u128 * run_end.since(start).ps() as u128 / end.since(start).ps() as u128) as u64)
    }
}
