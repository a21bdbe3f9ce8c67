//! The device side of the boundary between a host and its adapter, in the
//! shape of SimBricks' `nicbm::Device`: what reaches an adapter from outside
//! (a frame from the wire, one of its own timers) and what it hands back
//! through its context (frames to the wire, which it sends itself; receive
//! completions in host memory and sends done, each a cause of its interrupt;
//! events for its driver). Every adapter kind implements it (`nic::RingAdapter`,
//! `nic::smart::Programmable`, `toe::Adapter`), and the host hands frames and
//! timers to all of them through it alone.

use crate::bus::HostBus;
use crate::engine::Ctx;
use crate::processor::Account;
use crate::time::Time;
use crate::wire::Frame;

pub trait Device {
    /// A frame from the wire passed the MAC's address filter.
    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx);
    /// One of its own timers (armed in its port's space) fell due: a timer it
    /// took back brings nothing.
    fn timer(&mut self, tag: u64, cx: &mut DeviceCx);
    /// Its processors, whatever its kind (none for a fixed-function one).
    fn processors(&mut self) -> Vec<&mut Account>;
}

/// A device's view of the host while it handles one input: the engine (for
/// its timers and the frames it sends), the bus it sits on, and what it tells
/// its host.
pub struct DeviceCx<'a, 'c> {
    pub ctx: &'a mut Ctx<'c>,
    pub bus: &'a mut HostBus,
    pub out: &'a mut DeviceOut,
}

impl DeviceCx<'_, '_> {
    pub fn now(&self) -> Time {
        self.ctx.now()
    }
}

/// What a device tells its host after one input; the host applies it and
/// empties it.
#[derive(Debug, Default)]
pub struct DeviceOut {
    /// Completions that became visible in host memory: when, and how many (each
    /// a cause of its interrupt).
    pub completions: Vec<(Time, u32)>,
    /// Receive buffers it has left after them, where it counts them (a cause of
    /// its interrupt when they run low).
    pub buffers_left: Option<u32>,
    /// Sends it finished whose completion interrupts.
    pub sends_done: u32,
    /// It took sends from its transmit ring: the driver may queue more.
    pub took_sends: bool,
    /// It left work for its driver (an event ring's entries).
    pub driver_work: bool,
}

/// A device alone, driven as its host would drive it: inputs at given times,
/// then its own timers in time order.
#[cfg(test)]
pub mod bench {
    use super::*;
    use crate::engine::{component_rng, Msg, Outgoing, SimRng};

    pub struct Bench {
        pub bus: HostBus,
        pub out: DeviceOut,
        outbox: Vec<Outgoing>,
        rng: SimRng,
        /// Frames the device sent: when each leaves, on which port, its length.
        pub sent: Vec<(Time, usize, usize)>,
        /// Everything it told the host, input by input.
        pub said: Vec<(Time, DeviceOut)>,
    }

    impl Bench {
        pub fn new(bus: HostBus) -> Self {
            Bench { bus, out: DeviceOut::default(), outbox: Vec::new(), rng: component_rng(1, "bench"), sent: Vec::new(), said: Vec::new() }
        }

        /// Give the device an input at `now`.
        pub fn at<D: ?Sized>(&mut self, now: Time, dev: &mut D, f: impl FnOnce(&mut D, &mut DeviceCx)) {
            let mut ctx = Ctx::new(now, &mut self.outbox, &mut self.rng);
            f(dev, &mut DeviceCx { ctx: &mut ctx, bus: &mut self.bus, out: &mut self.out });
            self.said.push((now, std::mem::take(&mut self.out)));
        }

        /// Fire its timers, earliest first, until none is left; frames it
        /// sends are kept in `sent`.
        pub fn run(&mut self, dev: &mut dyn Device) {
            loop {
                for o in std::mem::take(&mut self.outbox) {
                    match o.msg {
                        Msg::Frame(f) => self.sent.push((o.at, o.port.expect("a frame leaves by a port") as usize, f.len())),
                        Msg::Timer(tag) => self.outbox.push(Outgoing { at: o.at, port: None, msg: Msg::Timer(tag) }),
                    }
                }
                let Some(i) = (0..self.outbox.len()).min_by_key(|&i| self.outbox[i].at) else { return };
                let o = self.outbox.remove(i);
                let Msg::Timer(tag) = o.msg else { unreachable!("only timers are kept") };
                self.at(o.at, dev, |d, cx| d.timer(tag, cx));
            }
        }

        /// All completions it reported, in order.
        pub fn completions(&self) -> Vec<(Time, u32)> {
            self.said.iter().flat_map(|(_, o)| o.completions.iter().copied()).collect()
        }
    }
}
