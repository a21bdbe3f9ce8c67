//! A host's tracks on the timeline: its buses, processors, adapters'
//! processors and private buses, and each adapter's frames in from the wire.

use crate::bus::HostBus;
use crate::host::cpu::Cpu;
use crate::host::port::Port;
use crate::observe::{SharedTrace, TrackId};

/// Draw every part of host `name` into `t`; returns each adapter's wire track.
pub(super) fn trace_parts(t: &SharedTrace, name: &str, buses: &mut [HostBus], cpus: &mut [Cpu], ports: &mut [Port]) -> Vec<TrackId> {
    let several_buses = buses.len() > 1;
    for (i, b) in buses.iter_mut().enumerate() {
        b.trace_into(t.clone(), &if several_buses { format!("{name} bus{i}") } else { name.to_string() });
    }
    for (i, c) in cpus.iter_mut().enumerate() {
        c.account.trace_into(t, name, &format!("cpu{i}"));
    }
    let adapter = |i: usize| if ports.len() > 1 { format!("adapter{i}") } else { "adapter".into() };
    let labels: Vec<String> = (0..ports.len()).map(adapter).collect();
    for (p, label) in ports.iter_mut().zip(&labels) {
        p.device().trace_into(t, &format!("{name} {label}"));
        for (k, a) in p.device().processors().into_iter().enumerate() {
            a.trace_into(t, name, &format!("{label} cpu{k}"));
        }
    }
    labels.iter().map(|label| t.borrow_mut().track(name, &format!("{label} wire (frames in)"))).collect()
}
