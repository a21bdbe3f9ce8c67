//! GRO as a driver stage: which frames queued for the stack go up with a
//! segment as one merge, and the one frame they make. The rule, and the
//! building of the merged frame, are the adapters' (`nic::firmware::merge`,
//! `nic::firmware::gro`); what is driver-side is when: a merge is held while
//! the poll's queue has its segments (Linux's GRO, flushed as its poll ends),
//! not for a timeout, and the merges of several flows are held at once, so
//! other flows' segments may come between.

use std::collections::VecDeque;

use crate::host::cpu::Item;
use crate::host::gone_up::GoneUp;
use crate::nic::firmware::gro;
use crate::nic::firmware::merge::{Flow, Meets, Merge};
use crate::wire::{Frame, FrameMeta};

/// The flows whose merges Linux's GRO holds at once (`MAX_GRO_SKBS` in
/// net/core/dev.c: one list a NAPI context, 2.6.29 to 4.18).
pub const GRO_FLOWS: usize = 8;

/// The frames queued behind frame `order` of adapter `p` (`first`) that join
/// its merge, taken out of `queue` with their places in the ring. Other
/// adapters' frames may come between (another GRO context), and this adapter's
/// other flows, as long as no more than `GRO_FLOWS` merges would be held at
/// once: with more, this one, the oldest, would be flushed. The merge ends at
/// anything queued that is not a frame (the poll goes on in another step) and
/// at a frame of this adapter queued elsewhere: a gap in its order here, but
/// for frames that went up ahead (`gone_up`, taken by an earlier merge).
pub fn take_merge(queue: &mut VecDeque<Item>, p: usize, (order, gone_up): (u64, &GoneUp), first: &Frame) -> Vec<(u64, Box<Frame>)> {
    let mut merged = Vec::new();
    // Parsed only once a frame of the adapter waits behind it.
    let mut merge = None;
    let mut held: Vec<Flow> = Vec::new();
    let (mut i, mut expect) = (0, order + 1);
    while let Some(Item::Frame(q, next, f)) = queue.get(i) {
        if *q != p {
            i += 1;
            continue;
        }
        while gone_up.has(expect) {
            expect += 1;
        }
        if *next != expect {
            break;
        }
        expect += 1;
        let Some(m) = merge.get_or_insert_with(|| Merge::start(&first.bytes)) else { break };
        match m.meet(&f.bytes) {
            Meets::Joins { ends } => {
                let Some(Item::Frame(_, o, f)) = queue.remove(i) else { unreachable!("looked at") };
                merged.push((o, f));
                if ends {
                    break;
                }
            }
            Meets::Ends => break,
            Meets::Holds(flow) => {
                if !held.contains(&flow) {
                    held.push(flow);
                    if held.len() >= GRO_FLOWS {
                        break;
                    }
                }
                i += 1;
            }
            Meets::Passes => i += 1,
        }
    }
    merged
}

/// The frame that `first` and the segments `take_merge` took with it make
/// (one, by the rule they were taken by), for the stack. It carries the
/// first's facts (its arrival) and, as Linux's GRO sets `gso_size`, the size
/// of the segments it was merged from, so the stack counts the wire's.
#[allow(clippy::vec_box, reason = "frames travel boxed from the wire")]
pub fn merged(first: &Frame, taken: &mut Vec<Box<Frame>>) -> Vec<Box<Frame>> {
    let rest = taken.iter().map(|f| f.bytes.as_slice());
    let out = gro::merged(&first.bytes, rest)
        .into_iter()
        .map(|o| Box::new(Frame { bytes: o.bytes, meta: FrameMeta { gso: o.gso, ..first.meta } }))
        .collect();
    taken.clear();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::firmware::testing::template;
    use crate::nic::firmware::tso;
    use crate::wire::FrameMeta;

    /// Flow `port`'s full segments, `n` of them.
    fn flow(port: u16, n: usize) -> Vec<Vec<u8>> {
        tso::segment(&template(port, 100, 1000, 1, false, false), &vec![7u8; 1460 * n], 1460)
    }

    fn frame(b: &[u8]) -> Box<Frame> {
        Box::new(Frame { bytes: b.to_vec(), meta: FrameMeta::default() })
    }

    /// The frames queued in this order, adapter 0's, numbered in ring order from 0.
    fn queue(frames: &[&Vec<u8>]) -> VecDeque<Item> {
        frames.iter().enumerate().map(|(o, b)| Item::Frame(0, o as u64, frame(b))).collect()
    }

    /// Take the merge of the queue's first frame; the ring places taken and left.
    fn take(mut q: VecDeque<Item>) -> (Vec<u64>, Vec<u64>) {
        let Some(Item::Frame(p, order, first)) = q.pop_front() else { panic!("a frame first") };
        take_after(q, p, order, &first, &GoneUp::default())
    }

    /// As `take`, for a queue whose frames before `order` and those `gone` went up.
    fn take_after(mut q: VecDeque<Item>, p: usize, order: u64, first: &Frame, gone: &GoneUp) -> (Vec<u64>, Vec<u64>) {
        let taken = take_merge(&mut q, p, (order, gone), first).into_iter().map(|(o, _)| o).collect();
        let left = q.iter().map(|i| if let Item::Frame(_, o, _) = i { *o } else { u64::MAX }).collect();
        (taken, left)
    }

    #[test]
    fn a_flow_merges_across_another_flows_segments_which_stay_in_order() {
        let (a, b) = (flow(5001, 3), flow(5002, 2));
        let (taken, left) = take(queue(&[&a[0], &b[0], &a[1], &b[1], &a[2]]));
        assert_eq!(taken, [2, 4], "the flow's later segments go up with its first");
        assert_eq!(left, [1, 3], "the other flow's wait, in their order");
        // The other flow's merge then passes over the places taken ahead.
        let mut gone = GoneUp::default();
        for o in [0, 2, 4] {
            gone.went_up(o);
        }
        let rest = VecDeque::from([Item::Frame(0, 3, frame(&b[1]))]);
        assert_eq!(take_after(rest, 0, 1, &frame(&b[0]), &gone).0, [3]);
    }

    #[test]
    fn a_merges_segments_go_up_as_one_frame_that_counts_as_the_wires() {
        let a = flow(5001, 3);
        let mut q = queue(&[&a[0], &a[1], &a[2]]);
        let Some(Item::Frame(p, order, first)) = q.pop_front() else { panic!("a frame first") };
        let mut taken: Vec<Box<Frame>> = take_merge(&mut q, p, (order, &GoneUp::default()), &first).into_iter().map(|(_, f)| f).collect();
        let up = merged(&first, &mut taken);
        assert!(taken.is_empty());
        let [one] = &up[..] else { panic!("one frame: {}", up.len()) };
        assert_eq!(one.meta.gso, 1460, "the size of the segments it was merged from");
        assert_eq!(tso::reassemble(std::slice::from_ref(&one.bytes)).expect("valid"), tso::reassemble(&a).expect("valid"));
        let mut tally = crate::stack::tally::Tally::default();
        tally.inbound(&one.bytes, one.meta.gso);
        assert_eq!((tally.data_in, tally.payload_in), (3, 3 * 1460), "three segments on the wire");
    }

    #[test]
    fn a_merge_is_flushed_once_more_flows_than_gro_holds_come_between() {
        let a = flow(5001, 2);
        let others: Vec<Vec<u8>> = (0..GRO_FLOWS as u16).map(|k| flow(6000 + k, 1).remove(0)).collect();
        let mut frames = vec![&a[0]];
        frames.extend(others[..GRO_FLOWS - 1].iter());
        frames.push(&a[1]);
        assert_eq!(take(queue(&frames)).0, [GRO_FLOWS as u64], "seven others and this one: eight held");
        let mut frames = vec![&a[0]];
        frames.extend(others.iter());
        frames.push(&a[1]);
        assert!(take(queue(&frames)).0.is_empty(), "an eighth other flow flushes the oldest, this one");
    }

    #[test]
    fn a_merge_ends_at_other_work_queued_and_at_a_gap_in_the_adapters_order() {
        let a = flow(5001, 3);
        let mut q = queue(&[&a[0], &a[1], &a[2]]);
        q.insert(2, Item::Poll(0, 64));
        assert_eq!(take(q).0, [1], "the poll's next piece is another step");
        let mut q = queue(&[&a[0], &a[1], &a[2]]);
        q.remove(1);
        assert!(take(q).0.is_empty(), "frame 1 is queued elsewhere");
    }
}
