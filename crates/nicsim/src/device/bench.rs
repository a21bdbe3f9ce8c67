//! A device alone, driven as its host would drive it (for tests): inputs at
//! given times, then its own timers in time order.

use crate::bus::HostBus;
use crate::device::rings::Rings;
use crate::device::{Device, DeviceCx, DeviceOut};
use crate::engine::{component_rng, Ctx, Msg, Outgoing, SimRng};
use crate::time::Time;

pub struct Bench {
    pub bus: HostBus,
    /// Its queues' rings (one pair a queue).
    pub rings: Vec<Rings>,
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
        Bench {
            bus,
            rings: vec![Rings::new(256)],
            out: DeviceOut::default(),
            outbox: Vec::new(),
            rng: component_rng(1, "bench"),
            sent: Vec::new(),
            said: Vec::new(),
        }
    }

    /// A bench for a device of `n` queues.
    pub fn queues(mut self, n: usize) -> Self {
        self.rings = (0..n).map(|_| Rings::new(256)).collect();
        self
    }

    /// Give the device an input at `now`.
    pub fn at<D: ?Sized>(&mut self, now: Time, dev: &mut D, f: impl FnOnce(&mut D, &mut DeviceCx)) {
        let mut ctx = Ctx::new(now, &mut self.outbox, &mut self.rng);
        f(dev, &mut DeviceCx { ctx: &mut ctx, bus: &mut self.bus, rings: &mut self.rings, out: &mut self.out });
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
