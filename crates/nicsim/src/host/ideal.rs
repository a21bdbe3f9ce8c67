//! An ideal host (`ideal = true`): its processors, bus and adapter cost nothing,
//! so none is modelled, and it runs the same TCP sessions as a modelled host's
//! (`host::sessions`) at zero cost. It answers the
//! requests of a host's file requester (a file server holding its files in
//! memory, as the clients of the IBM study did), and it may itself read blocks
//! from a host's file server, asking for the next one `think` after the last
//! byte of the previous (a NetWare client of the Novell study). Its only costs
//! are its link's and its think time.

use crate::engine::{Component, Ctx, Msg, PortId, WIRE};
use crate::host::sessions::{SessionConfig, Sessions, Work};
use crate::observe::Report;
use crate::stack::{Stack, StackConfig};
use crate::time::{Duration, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct IdealConfig {
    pub stack: StackConfig,
    pub seed: u64,
    pub sessions: Vec<SessionConfig>,
    /// Application throughput is measured from this time on.
    pub warmup: Duration,
}

pub struct IdealHost {
    sessions: Sessions,
    armed: Option<Time>,
    foreign: u64,
    warmup: Time,
    ended: Time,
}

impl IdealHost {
    pub fn new(cfg: IdealConfig) -> Result<Self, String> {
        Ok(IdealHost {
            sessions: Sessions::new(&cfg.stack, cfg.seed, cfg.sessions, vec![Some(false)], &[])?,
            armed: None,
            foreign: 0,
            warmup: Time::ZERO + cfg.warmup,
            ended: Time::ZERO,
        })
    }

    fn send(&mut self, work: Work, ctx: &mut Ctx) {
        for (_, f) in work.out {
            ctx.send_after(WIRE, Duration::ZERO, Msg::Frame(f));
        }
        if let Some(t) = self.sessions.next_timer(ctx.now()) {
            if self.armed.is_none_or(|a| t < a || a < ctx.now()) {
                self.armed = Some(t);
                ctx.wake_after(t.since(ctx.now()), 0);
            }
        }
    }
}

impl Component for IdealHost {
    fn kind(&self) -> &'static str {
        "host"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let work = self.sessions.start(ctx.now());
        self.send(work, ctx);
    }

    fn handle(&mut self, _port: PortId, msg: Msg, ctx: &mut Ctx) {
        let work = match msg {
            Msg::Frame(f) => {
                if !self.sessions.claims(&f.bytes) {
                    self.foreign += 1;
                    return;
                }
                self.sessions.input(0, f);
                self.sessions.run(ctx.now(), ctx.now() >= self.warmup, Work::default())
            }
            Msg::Timer(_) if self.armed == Some(ctx.now()) => {
                self.armed = None;
                self.sessions.timer(ctx.now(), ctx.now() >= self.warmup)
            }
            _ => return,
        };
        self.send(work, ctx);
    }

    fn finish(&mut self, end: Time) -> Result<(), String> {
        self.ended = end;
        Ok(())
    }

    fn report(&self, end: Time) -> Report {
        let mut r = Report::default();
        self.sessions.report(&mut r, end.since(self.warmup).as_secs_f64(), end);
        r.count("frames_not_for_us", self.foreign);
        r
    }
    fn text(&self) -> Vec<(&'static str, String)> {
        let mut text = self.sessions.text();
        text.extend(Stack::stall_text([self.sessions.stack()], self.ended));
        text
    }
}
