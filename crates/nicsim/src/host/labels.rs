//! How each queue of a host's adapters is named in its results and traces.

use crate::host::config::AdapterSlot;

/// How adapter `i` of `adapters` is named in results and traces: by its wire
/// port where the host has several, by its queue where its adapter has several
/// (`adapter1_queue3`); `None` for a host's only adapter with one queue.
pub fn label(adapters: &[AdapterSlot], i: usize) -> Option<String> {
    let a = &adapters[i];
    let wires = adapters.iter().filter(|a| a.queue == 0).count();
    match (wires > 1, a.queues > 1) {
        (true, true) => Some(format!("adapter{}_queue{}", a.wire, a.queue)),
        (true, false) => Some(format!("adapter{}", a.wire)),
        (false, true) => Some(format!("queue{}", a.queue)),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::NicConfig;

    fn slots(queues: u16) -> Vec<AdapterSlot> {
        (0..queues)
            .map(|q| AdapterSlot {
                nic: NicConfig::gigabit(),
                wire: 0,
                queue: q,
                queues,
                rss_key: crate::nic::rss::VERIFICATION_KEY,
                bus: 0,
                irq_cpu: q as usize,
                offload: None,
                programmable: None,
                device: None,
            })
            .collect()
    }

    #[test]
    fn a_queue_is_named_by_its_adapter_where_there_are_several() {
        let one = slots(1);
        assert_eq!(label(&one, 0), None);
        let four = slots(4);
        assert_eq!(label(&four, 2).as_deref(), Some("queue2"));
        let mut two = slots(2);
        two.extend(slots(1).into_iter().map(|a| AdapterSlot { wire: 1, ..a }));
        assert_eq!((label(&two, 1).as_deref(), label(&two, 2).as_deref()), (Some("adapter0_queue1"), Some("adapter1")));
    }
}
