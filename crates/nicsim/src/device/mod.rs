//! The device side of the boundary between a host and its adapter, in the
//! shape of SimBricks' `nicbm::Device`: what reaches an adapter from outside
//! (a frame from the wire, one of its own timers) and what it hands back
//! through its context (frames to the wire, which it sends itself; receive
//! completions in host memory and sends done, each a cause of its interrupt;
//! events for its driver). Every adapter kind implements it (`nic::RingAdapter`,
//! `nic::smart::Programmable`, `toe::Adapter`), and the host hands frames and
//! timers to all of them through it alone.

#[cfg(test)]
pub mod bench;
pub mod rings;

use crate::bus::HostBus;
use crate::device::rings::Rings;
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
    /// Its descriptor rings in host memory, which it reaches by DMA.
    pub rings: &'a mut Rings,
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
