//! The device side of the boundary between a host and its adapter, in the
//! shape of SimBricks' `nicbm::Device`: what reaches an adapter from outside
//! (a frame from the wire, one of its own timers) and what it hands back
//! through its context (frames to the wire, which it sends itself; receive
//! completions in host memory and sends done, each a cause of one of its
//! message-signalled interrupt vectors; events for its driver). An adapter
//! with several queues is one device: it steers each frame from the wire to
//! a queue itself and raises that queue's vector. Every adapter kind
//! implements it (`nic::RingAdapter`, `nic::MultiQueue`,
//! `nic::smart::Programmable`, `toe::Adapter`); the host hands frames and
//! timers to all of them through it alone, and runs for each queue the driver
//! its `Interface` asks for.

#[cfg(test)]
pub mod bench;
mod message;
pub mod rings;

pub use message::Message;

use std::sync::Arc;

use crate::bus::HostBus;
use crate::device::rings::Rings;
use crate::engine::Ctx;
use crate::observe::{Report, SharedTrace};
use crate::processor::Account;
use crate::stack::Stack;
use crate::time::{Duration, Time};
use crate::wire::Frame;

pub trait Device {
    /// Which of the host's drivers serves it: how its driver reaches it.
    fn interface(&self) -> Interface {
        Interface::Rings
    }
    /// A frame from the wire passed the MAC's address filter.
    fn frame_in(&mut self, frame: Box<Frame>, cx: &mut DeviceCx);
    /// One of its own timers (armed in its port's space) fell due: a timer it
    /// took back brings nothing.
    fn timer(&mut self, tag: u64, cx: &mut DeviceCx);
    /// Its processors, whatever its kind (none for a fixed-function one).
    fn processors(&mut self) -> Vec<&mut Account>;
    /// A register write of its driver reaches it (a ring adapter's tails).
    fn register_write(&mut self, _reg: Register, _cx: &mut DeviceCx) {}
    /// The host moved a frame it took out of queue `queue`'s packet memory
    /// (an adapter that is no bus master).
    fn moved_out(&mut self, _queue: usize, _frame: &Frame) {}
    /// Its queues, each a pair of descriptor rings with an interrupt vector
    /// of its own (one for every kind but a multi-queue ring adapter).
    fn queues(&self) -> usize {
        1
    }
    /// How far back in time its transfers may book the bus: a firmware's DMA
    /// loop or segmented send books ahead of time and out of order.
    fn books_back(&self) -> Duration {
        Duration::ZERO
    }
    /// Its figures at the run's end (the host sums a ring adapter's over its
    /// ring adapters); `host_busy` is the host processors' busy time.
    fn report(&self, _r: &mut Report, _end: Time, _host_busy: Duration) {}
    /// Its processor's figures, where it has one.
    fn report_processor(&self, _r: &mut Report, _end: Time) {}
    /// The figures of its queue `queue` alone, and of that queue's processor
    /// (a device of one queue gives all its figures).
    fn report_queue(&self, _queue: usize, r: &mut Report, end: Time, host_busy: Duration) {
        self.report(r, end, host_busy)
    }
    fn report_queue_processor(&self, _queue: usize, r: &mut Report, end: Time) {
        self.report_processor(r, end)
    }

    // An adapter whose driver works from an event ring in host memory (a
    // programmable adapter): the driver (`host::event_driver`) reads and
    // writes its buffers, descriptors and events there and rings its
    // doorbells by register writes.

    /// The run starts (the firmware's own workload begins).
    fn start(&mut self, _cx: &mut DeviceCx) {}
    /// The events its firmware wrote to the event ring that are now in host
    /// memory, oldest first.
    fn events(&mut self) -> Vec<Event> {
        Vec::new()
    }
    /// Host memory as its bridge maps it, where its model holds the bytes it
    /// moves (a programmable adapter's DMA moves real bytes): its driver's
    /// buffers, descriptors and event ring.
    fn host_memory(&mut self) -> Option<&mut crate::mem::Memory> {
        None
    }

    // An adapter that runs the host's TCP (an offload engine): its driver
    // speaks to it in socket-level messages.

    /// A message of its driver reaches it (written to its memory, the doorbell rung).
    fn message(&mut self, _m: Message, _cx: &mut DeviceCx) {}
    /// The oldest message it left for its driver, if any.
    fn take_message(&mut self) -> Option<Message> {
        None
    }
    /// Its TCP figures count the frames of local port `port` alone (one
    /// connection's of several it carries).
    fn watch(&mut self, _port: u16) {}
    /// The TCP stack it runs for the host.
    fn stack(&self) -> Option<&Stack> {
        None
    }
    /// The cycles its processors have run.
    fn cycles(&self) -> u64 {
        0
    }
    /// Draw its own buses into `t`, under `label`.
    fn trace_into(&mut self, _t: &SharedTrace, _label: &str) {}
}

/// The three ways a driver reaches its adapter; the host runs the driver a
/// device's interface asks for, whatever the device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    /// Descriptor rings in host memory, tail registers and an interrupt (a
    /// bus master, an adapter the host moves frames for, a test adapter).
    Rings,
    /// An event ring its driver works through in steps on a polling processor
    /// (a programmable adapter's firmware).
    Events,
    /// Socket-level messages: the adapter runs the host's TCP (an offload engine).
    Messages,
}

/// An entry of an event ring, as its driver finds it in host memory (the
/// entry's bytes say the rest: `nic::smart::layout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Send `n` is done: its buffer is free.
    SendDone(u64),
    /// Receive buffer `slot` is filled. Beside the bytes, for the host's
    /// figures: when the entry was in host memory, and when each wire frame in
    /// the buffer arrived.
    Received { slot: u64, seen: Time, arrived: Vec<Time> },
}

/// A register of an adapter that its driver writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Register {
    /// A ring adapter's receive tail of queue `queue`: `n` more buffers posted.
    RxTail { queue: u16, n: u32 },
    /// A ring adapter's transmit tail of queue `queue`: the descriptors filled
    /// so far are the adapter's.
    TxTail { queue: u16 },
    /// An event-ring adapter's send doorbell: send `n`'s descriptor is
    /// written. Beside the write, for the figures: when the host made the
    /// send's bytes and when it issued the send.
    SendPosted { n: u64, made: Time, issued: Time },
    /// An event-ring adapter's receive doorbell: this many more buffers posted.
    BuffersPosted(u64),
}

/// Makes the device of a host's port `i` (the host calls it once a run): the
/// scenario's assembly makes one for each adapter kind it describes, and a
/// new kind (a test adapter) joins a host by giving its own.
#[derive(Clone)]
pub struct DeviceFactory(pub Arc<dyn Fn(usize) -> Box<dyn Device> + Send + Sync>);

impl std::fmt::Debug for DeviceFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceFactory")
    }
}

impl PartialEq for DeviceFactory {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A device's view of the host while it handles one input: the engine (for
/// its timers and the frames it sends), the bus it sits on, and what it tells
/// its host.
pub struct DeviceCx<'a, 'c> {
    pub ctx: &'a mut Ctx<'c>,
    pub bus: &'a mut HostBus,
    /// Its descriptor rings in host memory, which it reaches by DMA: a pair
    /// for each of its queues.
    pub rings: &'a mut [Rings],
    pub out: &'a mut DeviceOut,
}

impl DeviceCx<'_, '_> {
    pub fn now(&self) -> Time {
        self.ctx.now()
    }

    /// The same input handed to its queue `queue` alone: that queue's rings,
    /// and what it tells the host raising the queue's vector.
    #[inline]
    pub fn queue<R>(&mut self, queue: usize, f: impl FnOnce(&mut DeviceCx) -> R) -> R {
        self.out.vector = queue as u16;
        f(&mut DeviceCx { ctx: self.ctx, bus: self.bus, rings: &mut self.rings[queue..=queue], out: self.out })
    }
}

/// What a device tells its host after one input; the host applies it and
/// empties it.
#[derive(Debug, Default)]
pub struct DeviceOut {
    /// The message-signalled vector (its queue's) the rest raises: one input
    /// reaches one queue.
    pub vector: u16,
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
    /// Its driver has work to look at (an event ring's entries, or its own).
    pub driver_work: bool,
}
