//! Which queue of an adapter takes a frame from the wire: with one queue, that
//! one; with several, the queue receive-side scaling names (the Toeplitz hash
//! of the frame's addresses and ports under the adapter's key, looked up in
//! an indirection table that names the queues in turn). A frame with no IP
//! header goes to the first queue.

use crate::host::config::AdapterSlot;
use crate::nic::rss::{input, toeplitz, Indirection};

/// One wire port's queues: the first one's place among the host's adapters,
/// and the table when there are several.
pub struct Steer {
    pub first: usize,
    table: Option<Indirection>,
    key: [u8; 40],
}

impl Steer {
    /// The steering of each wire port of a host with `adapters` (each queue of
    /// a multi-queue adapter one of them, in order).
    pub fn of(adapters: &[AdapterSlot]) -> Vec<Steer> {
        let mut wires: Vec<Steer> = Vec::new();
        for (i, a) in adapters.iter().enumerate() {
            if a.queue == 0 {
                debug_assert_eq!(a.wire, wires.len(), "wire ports in order");
                let table = (a.queues > 1).then(|| Indirection::spread(a.queues));
                wires.push(Steer { first: i, table, key: a.rss_key });
            }
        }
        wires
    }

    /// The adapter (queue) that takes `frame`.
    #[inline]
    pub fn queue(&self, frame: &[u8]) -> usize {
        let Some(table) = &self.table else { return self.first };
        let q = input(frame).map_or(0, |i| table.queue(toeplitz(&self.key, &i)) as usize);
        self.first + q
    }
}

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
    use crate::wire::endpoint::{ipv4_headers, Addr};
    use crate::wire::{build, L4};

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

    fn udp(src_port: u16) -> Vec<u8> {
        let (a, b) = (
            Addr { mac: [2, 0, 0, 0, 0, 1], ip: [10, 0, 0, 1], port: src_port },
            Addr { mac: [2, 0, 0, 0, 0, 2], ip: [10, 0, 0, 2], port: 9 },
        );
        build(&ipv4_headers(a, b, 0, L4::Udp { src_port, dst_port: 9 }), &[0; 18]).expect("builds")
    }

    #[test]
    fn one_queue_takes_everything_and_a_flow_stays_on_its_queue() {
        let one = Steer::of(&slots(1));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].queue(&udp(10_000)), 0);
        let four = Steer::of(&slots(4));
        let q = four[0].queue(&udp(10_007));
        assert!((0..4).all(|_| four[0].queue(&udp(10_007)) == q), "a flow's frames keep to one queue");
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

    #[test]
    fn flows_spread_over_every_queue_and_other_frames_go_to_the_first() {
        let s = Steer::of(&slots(4));
        let queues: std::collections::HashSet<usize> = (0..64).map(|p| s[0].queue(&udp(10_000 + p))).collect();
        assert_eq!(queues.len(), 4, "64 flows reach all four queues");
        let arp = [[0xff; 6].as_slice(), &[2, 0, 0, 0, 0, 1], &[0x08, 0x06], &[0; 46]].concat();
        assert_eq!(s[0].queue(&arp), 0);
    }
}
