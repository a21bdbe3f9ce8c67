//! A host's tracks on the timeline: its buses, processors, adapters'
//! processors and private buses, and each adapter's frames in from the wire.

use crate::bus::HostBus;
use crate::host::adapters::Adapters;
use crate::host::config::AdapterSlot;
use crate::host::cpu::Cpu;
use crate::host::labels::label;
use crate::observe::{SharedTrace, TrackId};

/// Draw every part of host `name` into `t`; returns each adapter's wire track.
pub(super) fn trace_parts(
    t: &SharedTrace,
    name: &str,
    buses: &mut [HostBus],
    cpus: &mut [Cpu],
    (devices, adapters): (&mut Adapters, &[AdapterSlot]),
) -> Vec<TrackId> {
    let several_buses = buses.len() > 1;
    for (i, b) in buses.iter_mut().enumerate() {
        b.trace_into(t.clone(), &if several_buses { format!("{name} bus{i}") } else { name.to_string() });
    }
    for (i, c) in cpus.iter_mut().enumerate() {
        c.account.trace_into(t, name, &format!("cpu{i}"));
    }
    let wires = adapters.iter().filter(|a| a.queue == 0).count();
    let wire = |w: usize| if wires > 1 { format!("adapter{w}") } else { "adapter".into() };
    // A device of several queues is drawn as its adapter, each queue's processors in turn.
    for p in (0..adapters.len()).filter(|&p| adapters[p].queue == 0) {
        let label = match adapters[p].queues {
            1 => label(adapters, p).map_or("adapter".into(), |l| l.replace('_', " ")),
            _ => wire(adapters[p].wire),
        };
        let device = devices.device(p);
        device.trace_into(t, &format!("{name} {label}"));
        for (k, a) in device.processors().into_iter().enumerate() {
            a.trace_into(t, name, &format!("{label} cpu{k}"));
        }
    }
    (0..wires).map(|w| t.borrow_mut().track(name, &format!("{} wire (frames in)", wire(w)))).collect()
}
