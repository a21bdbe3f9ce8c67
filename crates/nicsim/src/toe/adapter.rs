//! The offload engine as a device: frames from the wire into its memory, its
//! processor's runs and its stack's timer, on timers of its own. What a run
//! makes goes to the wire, and as messages to the host: one completion each,
//! a cause of its interrupt. Messages from the host reach it by `hand`.

use std::collections::VecDeque;

use crate::device::{Device, DeviceCx, Interface, Message};
use crate::engine::timers::{part_space, Earliest, Timers};
use crate::engine::{Msg, PortId};
use crate::observe::{Report, SharedTrace};
use crate::processor::Account;
use crate::stack::tally::Tally;
use crate::stack::Stack;
use crate::time::{Duration, Time};
use crate::toe::engine::Engine;
use crate::toe::work::Work;
use crate::wire::{Frame, FrameMeta};

pub struct Adapter {
    pub engine: Engine,
    /// Messages for the host that its handler has not taken yet.
    events: VecDeque<Message>,
    /// Frames from the wire on their way into its memory, in order.
    arriving: VecDeque<(Time, Box<Frame>)>,
    /// Its own timers (`engine::timers::part_space` of its port).
    timers: Timers<EngineDue>,
    /// Its stack's timer in flight.
    stack_timer: Earliest,
    /// Its port on the wire.
    wire: PortId,
}

/// What falls due at an offload engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EngineDue {
    /// A received frame is in its memory.
    Arrive,
    /// Its run ends.
    RunEnd,
    /// Its stack's timer.
    Timer,
}

impl Adapter {
    /// The offload engine of port `port`.
    pub fn new(engine: Engine, port: usize) -> Adapter {
        Adapter {
            engine,
            events: VecDeque::new(),
            arriving: VecDeque::new(),
            timers: Timers::new(part_space(port)),
            stack_timer: Earliest::default(),
            wire: port as PortId,
        }
    }

    /// It sits on wire port `wire` (not its place among the host's adapters
    /// when an adapter before it has several queues).
    pub fn on_wire(mut self, wire: usize) -> Self {
        self.wire = wire as PortId;
        self
    }

    /// Work for its processor (a message from the host, a frame, its timer):
    /// a free processor starts a run.
    fn hand(&mut self, w: Work, cx: &mut DeviceCx) {
        if self.engine.push(w) {
            self.start_run(cx);
        }
    }

    fn start_run(&mut self, cx: &mut DeviceCx) {
        let end = self.engine.start_run(cx.now(), cx.bus);
        self.timers.arm(cx.ctx, end, EngineDue::RunEnd);
    }

    /// The frames now in its memory go to its processor.
    fn arrived(&mut self, cx: &mut DeviceCx) {
        let now = cx.now();
        while let Some((_, frame)) = self.arriving.pop_front_if(|(at, _)| *at <= now) {
            self.hand(Work::Frame(frame), cx);
        }
    }

    /// A run ended: its frames go to the MAC, its messages to the host, and the
    /// next run starts if work waits.
    fn run_end(&mut self, cx: &mut DeviceCx) {
        let now = cx.now();
        let (out, more) = self.engine.end_run();
        for bytes in out.frames {
            let at = self.engine.transmit(now, bytes.len());
            let meta = FrameMeta { created: now, ..FrameMeta::default() };
            cx.ctx.send_at(self.wire, at, Msg::frame(Frame { bytes, meta }));
        }
        let n = out.to_host.len() as u32;
        self.events.extend(out.to_host);
        if n > 0 {
            cx.out.completions.push((now, n));
        }
        if more {
            self.start_run(cx);
        }
        if let Some(t) = self.engine.next_timer(now) {
            self.stack_timer.set(&mut self.timers, cx.ctx, t, now, EngineDue::Timer);
        }
    }
}

impl Device for Adapter {
    fn interface(&self) -> Interface {
        Interface::Messages
    }

    fn watch(&mut self, port: u16) {
        self.engine.stack.watched = Some(Tally::of_port(port));
    }

    /// The MAC writes it to adapter memory, then the processor takes it.
    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx) {
        let at = self.engine.receive(cx.now(), frame.len());
        self.arriving.push_back((at, frame));
        self.timers.arm(cx.ctx, at, EngineDue::Arrive);
    }

    fn timer(&mut self, tag: u64, cx: &mut DeviceCx) {
        match self.timers.fire(tag) {
            Some(EngineDue::Arrive) => self.arrived(cx),
            Some(EngineDue::RunEnd) => self.run_end(cx),
            Some(EngineDue::Timer) => {
                self.stack_timer.fired();
                self.hand(Work::Timer, cx);
            }
            None => {}
        }
    }

    fn processors(&mut self) -> Vec<&mut Account> {
        vec![&mut self.engine.processor.account]
    }

    /// Its TCP counts, each connection's progress and its processor's time.
    fn report(&self, r: &mut Report, end: Time, _host_busy: Duration) {
        let t = &self.engine.stack.tally;
        r.count("tcp_retransmits", t.retransmits).count("tcp_out_of_order", t.out_of_order).count("tcp_connections", t.connections);
        r.count("tcp_data_out", t.data_out)
            .count("tcp_data_in", t.data_in)
            .count("tcp_acks_out", t.acks_out)
            .count("tcp_acks_in", t.acks_in);
        self.engine.stack.report_progress(r, end);
        self.engine.processor.account.report(r, "adapter_cpu0", end);
    }

    fn message(&mut self, m: Message, cx: &mut DeviceCx) {
        self.hand(Work::Host(m), cx);
    }

    fn take_message(&mut self) -> Option<Message> {
        self.events.pop_front()
    }

    fn stack(&self) -> Option<&Stack> {
        Some(&self.engine.stack)
    }

    fn cycles(&self) -> u64 {
        self.engine.processor.account.cycles()
    }

    fn trace_into(&mut self, t: &SharedTrace, label: &str) {
        self.engine.private_bus.trace_into(t.clone(), label);
    }
}
