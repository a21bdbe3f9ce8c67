//! A host's end-of-run results: its applications, adapters (summed, and each
//! one when there are several), processors and buses.

use crate::host::cpu::Activity;
use crate::host::labels::label;
use crate::host::machine::Machine;
use crate::host::port::Driver;
use crate::host::transfer::{self, Transfer, Wires};
use crate::observe::{Report, Value};
use crate::time::{Duration, Time};

/// `from`'s entries into `into`, each name with `prefix`.
fn prefixed(into: &mut Report, prefix: &str, from: &Report) {
    for (name, value) in from.entries() {
        match value {
            Value::Count(n) => into.count(&format!("{prefix}{name}"), *n),
            Value::Real(x) => into.real(&format!("{prefix}{name}"), *x),
        };
    }
}

impl Machine {
    /// The run ends at `end`: buses and processors count only what lies within it.
    pub(super) fn ends_at(&mut self, end: Time) {
        ends_at(self, end);
    }

    /// The host's figures for a run that ended at `end`.
    pub(super) fn figures(&self, end: Time) -> Report {
        report(self, end)
    }
}

fn ends_at(m: &mut Machine, end: Time) {
    for b in &mut m.buses {
        b.ends_at(end);
    }
    for c in &mut m.procs.cpus {
        c.account.ends_at(end);
    }
    for a in m.adapters.devices().flat_map(|d| d.processors()) {
        a.ends_at(end);
    }
}

fn report(m: &Machine, end: Time) -> Report {
    let mut r = Report::default();
    let seconds = end.since(Time::ZERO + m.cfg.warmup).as_secs_f64();
    let whole = end.as_secs_f64();
    let per_s = |n: u64| if whole > 0.0 { n as f64 / whole } else { 0.0 };
    if let Some(s) = &m.apps.sessions {
        s.report(&mut r, seconds, end);
    }
    if let Some(s) = &m.apps.sink {
        s.report(&mut r, seconds);
    }
    if let Some(b) = &m.apps.blast {
        b.report(&mut r, "blast", seconds);
    }
    if let Some(b) = &m.apps.send {
        b.report(&mut r, "send", seconds);
    }
    // An engine's figures are the host's, unless another engine's or the
    // host's own stack's would share their names.
    let engines = m.ports.iter().filter(|p| p.offload().is_some()).count();
    for (i, p) in m.ports.iter().enumerate() {
        let Some(o) = p.offload() else { continue };
        let mut e = Report::default();
        o.report(m.adapters.device_ref(i), &mut e, end);
        e.count("engine_interrupts", p.irq.raised);
        let prefix = if engines > 1 || m.apps.sessions.is_some() { format!("adapter{}_", m.cfg.adapters[i].wire) } else { String::new() };
        prefixed(&mut r, &prefix, &e);
    }
    if let Some(w) = &m.wires {
        transfer_report(m, &mut r, w, end);
    }
    // An offload engine's or programmable adapter's ring is not used: their figures are their own.
    let rings: Vec<(usize, &crate::host::port::Port)> = m.ports.iter().enumerate().filter(|(_, p)| p.ring_ref().is_some()).collect();
    let host_busy = m.procs.cpus.iter().map(|c| c.account.busy()).fold(Duration::ZERO, |a, b| a + b);
    for (i, p) in m.ports.iter().enumerate() {
        let Driver::Events(driver) = &p.driver else { continue };
        let mut a = Report::default();
        m.adapters.device_ref(i).report(&mut a, end, host_busy);
        driver.report(&mut a, host_busy);
        let prefix = label(&m.cfg.adapters, i).map_or(String::new(), |name| format!("{name}_"));
        prefixed(&mut r, &prefix, &a);
    }
    let adapters: Vec<Report> = rings
        .iter()
        .map(|&(i, p)| {
            let mut a = Report::default();
            m.adapters.device_ref(i).report_queue(m.adapters.queue(i), &mut a, end, host_busy);
            a.count("interrupts", p.irq.raised);
            a
        })
        .collect();
    if !adapters.is_empty() {
        let total = Report::summed(&adapters);
        for (name, v) in total.entries() {
            r.count(name, v.as_f64() as u64);
        }
        let (frames, lost) = (total.get("rx_frames").unwrap_or(0.0), total.get("rx_fifo_overruns").unwrap_or(0.0));
        r.real("rx_frames_per_s", per_s(frames as u64));
        r.real("rx_loss", if frames + lost > 0.0 { lost / (frames + lost) } else { 0.0 });
        r.real("interrupts_per_s", per_s(total.get("interrupts").unwrap_or(0.0) as u64));
    }
    m.tally.report(&mut r, whole, m.cfg.driver.gro);
    if !rings.is_empty() {
        // What the driver took from the rings, whatever became of each frame;
        // and the frames whose way ended here: an XDP verdict that is not PASS
        // (nor a hand-over to another processor's stack), or the sink at the
        // end of the stack.
        let rate = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        r.real("rx_taken_per_s", rate(m.tally.latency.taken_frames()));
        let v = &m.tally.xdp_measured;
        let sunk = m.apps.sink.as_ref().map_or(0, |s| s.frames);
        r.real("rx_handled_per_s", rate(v.drop + v.tx + v.redirect - v.to_cpu + v.aborted + sunk));
    }
    if m.cfg.driver.xdp.is_some() {
        m.tally.xdp.report(&mut r, "xdp_");
        m.tally.xdp_measured.report_rates(&mut r, "xdp_", seconds);
        r.count("xdp_socket_frames", m.tally.socket_frames);
        r.count("xdp_socket_bytes", m.tally.socket_bytes);
        r.real("xdp_socket_frames_per_s", per_s(m.tally.socket_frames));
    }
    if m.cfg.ddio.is_some() {
        // After the warm-up, as the frames taken.
        let taken = m.tally.latency.taken_frames();
        r.count("ddio_misses", m.tally.ddio_misses);
        r.real("ddio_miss_share", if taken > 0 { m.tally.ddio_misses as f64 / taken as f64 } else { 0.0 });
    }
    // Only work handed to another processor wakes one.
    if m.cfg.driver.xdp.is_some() || m.cfg.app_cpu.is_some() {
        r.count("wakeups", m.procs.wakeups);
    }
    let total_cpu: f64 = m.procs.cpus.iter().map(|c| c.account.utilization(end)).sum();
    r.real("cpu_utilization", total_cpu / m.procs.cpus.len() as f64);
    m.tally.handler.report(&mut r);
    let (busy, runs) =
        m.procs.cpus.iter().map(|c| c.account.runs(Activity::Deferred)).fold((Duration::ZERO, 0), |(b, n), (b2, n2)| (b + b2, n + n2));
    r.real("mean_deferred_run_us", busy.as_secs_f64() * 1e6 / runs.max(1) as f64);
    for (i, c) in m.procs.cpus.iter().enumerate() {
        c.account.report(&mut r, &format!("cpu{i}"), end);
    }
    if m.ports.len() > 1 {
        for (a, &(i, _)) in adapters.iter().zip(&rings) {
            let name = label(&m.cfg.adapters, i).map_or(String::new(), |l| l + "_");
            prefixed(&mut r, &name, a);
            let mut pr = Report::default();
            m.adapters.device_ref(i).report_queue_processor(m.adapters.queue(i), &mut pr, end);
            prefixed(&mut r, &name, &pr);
        }
    } else if let Some(&(i, _)) = rings.first() {
        m.adapters.device_ref(i).report_processor(&mut r, end);
    }
    if m.buses.len() > 1 {
        for (i, b) in m.buses.iter().enumerate() {
            let mut br = Report::default();
            b.report(&mut br, end);
            prefixed(&mut r, &format!("bus{i}_"), &br);
        }
    } else {
        m.buses[0].report(&mut r, end);
    }
    r
}

/// The TTCP transfer's figures, from the offload engine that carries it or
/// from the host's own stack.
fn transfer_report(m: &Machine, r: &mut Report, wires: &Wires, end: Time) {
    let host_busy = m.procs.cpus.iter().map(|c| c.account.busy()).fold(Duration::ZERO, |a, b| a + b);
    let interrupts = m.ports.iter().map(|p| p.irq.raised).sum();
    let offload = m.ports.iter().enumerate().find_map(|(i, p)| p.offload().and_then(|o| Some((i, o, o.ttcp.as_ref()?))));
    let (port, transfer) = match (offload, m.apps.sessions.as_ref().and_then(|s| s.ttcp())) {
        (Some((i, _, t)), _) => (
            i,
            Transfer {
                sender: t.app.sender(),
                tally: m
                    .adapters
                    .device_ref(i)
                    .stack()
                    .map(|s| s.watched.as_ref().unwrap_or(&s.tally))
                    .expect("an offload engine runs a stack"),
                bytes: t.app.stream.bytes,
                host_busy,
                interrupts,
                adapter_cycles: Some(m.adapters.device_ref(i).cycles()),
                messages: t.calls,
                line_rate_bps: 0,
            },
        ),
        (None, Some((stream, sender, tally, _))) => (
            0,
            Transfer {
                sender,
                tally,
                bytes: stream.bytes,
                host_busy,
                interrupts,
                adapter_cycles: None,
                messages: stream.bytes.div_ceil(stream.message as u64),
                line_rate_bps: 0,
            },
        ),
        (None, None) => return,
    };
    let line_rate_bps = m.cfg.adapters[port].nic.link_rate_bps;
    transfer::report(r, &Transfer { line_rate_bps, ..transfer }, wires, end);
}
