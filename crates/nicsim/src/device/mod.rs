//! The device side of the boundary between a host and its adapter, in the
//! shape of SimBricks' `nicbm::Device`: what reaches an adapter from outside
//! (a frame from the wire, one of its own timers) and what it hands back
//! through its context (frames to the wire, which it sends itself; receive
//! completions in host memory and sends done, each a cause of its interrupt;
//! events for its driver). Every adapter kind implements it (`nic::RingAdapter`,
//! `nic::smart::Programmable`, `toe::Adapter`); the host hands frames and
//! timers to all of them through it alone, and runs for each the driver its
//! `Interface` asks for.

#[cfg(test)]
pub mod bench;
mod message;
pub mod rings;

pub use message::Message;

use std::cell::Cell;
use std::rc::Rc;
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
    /// The host moved a frame it took out of the adapter's packet memory (an
    /// adapter that is no bus master).
    fn moved_out(&mut self, _frame: &Frame) {}
    /// The MAC its frames leave by, where the queues of one adapter share it
    /// (a ring adapter's transmit side).
    fn mac(&self) -> Option<Rc<Cell<Time>>> {
        None
    }
    /// Send through `mac`, the first queue's of the same adapter.
    fn share_mac(&mut self, _mac: Rc<Cell<Time>>) {}
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

    // An adapter whose driver works from an event ring (a programmable
    // adapter): the host runs the driver's steps on its polling processor.

    /// The run starts.
    fn start(&mut self, _cx: &mut DeviceCx) {}
    /// The work its events left for its driver, oldest first.
    fn driver_work(&mut self) -> Vec<DriverWork> {
        Vec::new()
    }
    /// Its driver's step for `work`: what it did, for the host to price.
    fn driver_step(&mut self, _work: DriverWork, _cx: &mut DeviceCx) -> DriverStep {
        DriverStep::default()
    }
    /// Its driver's last step ended at `end` (the doorbell it rings then).
    fn driver_step_end(&mut self, _end: Time, _cx: &mut DeviceCx) {}
    /// A frame of the host's stack goes out through its driver's send call.
    fn send(&mut self, _frame: Frame, _cx: &mut DeviceCx) {}
    /// Where the host's own stack sends through it: whether it cuts large
    /// sends into segments and sums their checksums (none: the stack does not).
    fn stack_segments(&self) -> Option<bool> {
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

/// Work an event-ring adapter's events leave for its driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverWork {
    /// The application's next send call.
    Send,
    /// A send's completion event: take it, then make the next send.
    SendDone,
    /// A filled receive buffer in this slot: take it up the stack.
    Receive(u64),
    /// The driver's GRO timeout passed: hand up what it holds.
    GroFlush,
}

/// What one driver step did, in work the host prices with its own costs, and
/// the frames it hands the host's stack.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverStep {
    /// The application's send calls.
    pub send_calls: u64,
    /// Frames the host built for a send.
    pub frames_built: u64,
    /// Events taken from the event ring.
    pub completions: u64,
    /// Filled receive buffers the driver took.
    pub buffers_taken: u64,
    /// Segments the driver's GRO took in.
    pub gro_segments: u64,
    /// Frames or merged segments that passed the host's protocol.
    pub protocol_passes: u64,
    pub copy_bytes: u64,
    /// Frames for the host's stack, in order.
    pub delivered: Vec<Vec<u8>>,
    /// Wire frames whose buffers the driver took: when each arrived and when
    /// it was in host memory.
    pub taken: Vec<(Time, Time)>,
    /// Wire frames that went up the protocol: when each arrived.
    pub went_up: Vec<Time>,
}

/// A register of a ring adapter that its driver writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Register {
    /// The receive tail: this many more buffers posted.
    RxTail(u32),
    /// The transmit tail: the descriptors filled so far are the adapter's.
    TxTail,
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
