//! A new adapter kind joins a host by implementing `nicsim::device::Device`
//! alone: this one has no wire and hands every frame its driver sends back to
//! the same host, through the descriptor rings in host memory, as soon as a
//! receive buffer is posted. It runs under every driver policy, with nothing in
//! the host changed.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use nicsim::device::{Device, DeviceCx, DeviceFactory, Register};
use nicsim::observe::Report;
use nicsim::processor::Account;
use nicsim::scenario::PartPlan;
use nicsim::time::{Duration, Time};
use nicsim::wire::Frame;
use nicsim::{run, RunOptions, RunResult};

#[derive(Default)]
struct Loopback {
    /// Receive buffers the driver has posted and no frame has taken.
    posted: u32,
    /// Frames fetched from the transmit ring, waiting for a receive buffer.
    waiting: VecDeque<Frame>,
    sent: u64,
    looped: u64,
    from_wire: u64,
}

impl Loopback {
    /// Frames that have a buffer go into it, visible now.
    fn deliver(&mut self, cx: &mut DeviceCx) {
        let now = cx.now();
        let mut n = 0;
        while self.posted > 0 {
            let Some(mut frame) = self.waiting.pop_front() else { break };
            frame.meta.arrived = now;
            cx.rings[0].rx.complete(Box::new(frame), now);
            self.posted -= 1;
            n += 1;
        }
        if n > 0 {
            self.looped += n as u64;
            cx.out.completions.push((now, n));
        }
        cx.out.buffers_left = Some(self.posted);
    }
}

impl Device for Loopback {
    /// It has no MAC: what the wire brings is lost.
    fn frame_in(&mut self, _frame: Box<Frame>, _cx: &mut DeviceCx) {
        self.from_wire += 1;
    }

    fn timer(&mut self, _tag: u64, _cx: &mut DeviceCx) {}

    fn processors(&mut self) -> Vec<&mut Account> {
        Vec::new()
    }

    fn register_write(&mut self, reg: Register, cx: &mut DeviceCx) {
        match reg {
            Register::RxTail { n, .. } => self.posted += n,
            Register::TxTail { .. } => {
                let mut n = 0;
                while let Some(frame) = cx.rings[0].tx.fetch() {
                    self.waiting.push_back(frame);
                    n += 1;
                }
                self.sent += n as u64;
                cx.rings[0].tx.written_back(cx.now(), n);
                cx.out.took_sends = true;
            }
            // An event-ring adapter's doorbells: a ring adapter has none.
            _ => {}
        }
        self.deliver(cx);
    }

    fn report(&self, r: &mut Report, _end: Time, _host_busy: Duration) {
        r.count("loopback_sent", self.sent).count("loopback_looped", self.looped).count("loopback_from_wire", self.from_wire);
    }
}

/// The 40 GbE host of `scenarios/modern` with the loopback adapter in place of
/// its own, under driver policy `mode`.
fn looped(mode: &str) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/modern/40g-kernel.toml");
    let sets: Vec<String> =
        [format!("host[0].driver.mode={mode}"), "duration=1ms".into(), "host[0].warmup=0us".into()].into_iter().collect();
    let mut plan = nicsim::scenario::load_with(&path, &sets).unwrap_or_else(|e| panic!("{mode}: {e}"));
    let host = plan.parts.iter_mut().find(|p| p.name == "server").expect("the host");
    let PartPlan::Host(cfg) = &mut host.plan else { panic!("a modelled host") };
    cfg.adapters[0].device = Some(DeviceFactory(Arc::new(|_port| Box::new(Loopback::default()))));
    run(&plan, &RunOptions::default()).unwrap_or_else(|e| panic!("{mode}: {e}"))
}

fn metric(r: &RunResult, key: &str) -> f64 {
    r.component("server").expect("server").metrics.get(key).unwrap_or_else(|| panic!("no {key}"))
}

#[test]
fn a_loopback_adapter_returns_every_frame_sent_under_every_driver_policy() {
    for mode in ["handler", "napi", "poll", "os-poll"] {
        let r = looped(mode);
        let (sent, looped, sunk) = (metric(&r, "loopback_sent"), metric(&r, "loopback_looped"), metric(&r, "sink_frames"));
        assert!(sent > 1000.0, "{mode}: the host sent {sent} frames in 1 ms");
        // Frames wait only for a buffer and for the driver: the 512-buffer
        // ring holds what it has not taken yet.
        assert!(looped <= sent && sent - looped <= 512.0, "{mode}: {sent} sent, {looped} looped back");
        assert!(sunk <= looped && looped - sunk <= 512.0, "{mode}: {looped} looped back, {sunk} reached the host's sink");
        assert!(metric(&r, "loopback_from_wire") > 0.0, "{mode}: the tester's flood reached the adapter and went nowhere");
        // The policy is the driver's: interrupts where it takes them, none where it polls.
        let interrupts = metric(&r, "interrupts");
        match mode {
            "poll" | "os-poll" => assert_eq!(interrupts, 0.0, "{mode} polls"),
            _ => assert!(interrupts > 0.0, "{mode}: the completions interrupt"),
        }
    }
}
