//! The device of each of a host's adapters, made by the kind its
//! configuration describes: the one place that names the adapter kinds. The
//! host is handed the devices and reaches each through `Device` alone.

use crate::device::Device;
use crate::host::config::AdapterSlot;
use crate::nic::rss::Steering;
use crate::nic::smart::Programmable;
use crate::nic::{MultiQueue, RingAdapter};
use crate::toe::adapter::Adapter as OffloadAdapter;
use crate::toe::engine::Engine;

/// The devices of `slots`' adapters, in port order (one for each adapter,
/// whose slots are its queues): a slot's own factory where it has one (a
/// kind the configuration does not describe, such as a test adapter), else
/// the offload engine, programmable adapter or ring adapter it describes.
pub(crate) fn devices(slots: &[AdapterSlot]) -> Vec<Box<dyn Device>> {
    slots.iter().enumerate().filter(|(_, a)| a.queue == 0).map(|(i, a)| device(a, i)).collect()
}

fn device(a: &AdapterSlot, port: usize) -> Box<dyn Device> {
    if let Some(make) = &a.device {
        return (make.0)(port);
    }
    match (&a.offload, &a.programmable) {
        (Some(o), _) => Box::new(OffloadAdapter::new(Engine::new(o.engine.clone()), port).on_wire(a.wire)),
        (None, Some(c)) => Box::new(Programmable::new(c.clone(), port).on_wire(a.wire)),
        (None, None) if a.queues > 1 => Box::new(MultiQueue::new(&a.nic, Steering::spread(a.queues, a.rss_key), port, a.wire)),
        (None, None) => Box::new(RingAdapter::new(&a.nic, port).on_wire(a.wire)),
    }
}
