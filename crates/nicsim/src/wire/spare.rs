//! Frames kept for reuse: a source makes a frame a few nanoseconds of wall time
//! apart and a sink drops one as often, and allocating and freeing a boxed
//! frame and its bytes each time was a tenth of a link flood. A sink gives back
//! what it has counted; a source takes one and writes its bytes over the old.
//! Per thread (runs of a sweep share nothing) and bounded, so a run that only
//! takes or only gives costs what it did.

use std::cell::RefCell;

use crate::wire::{Frame, FrameMeta};

/// Frames kept at most: more than a line-rate source of 64-byte frames has in
/// flight at once, in the wire, a FIFO and a ring a host drains every 50 us.
const KEEP: usize = 4096;
/// The largest buffer kept (a jumbo frame's): a sink handed 64 KB sends would
/// otherwise hold 16 MB for a source that writes 64-byte frames.
const KEEP_BYTES: usize = 9_216;
/// The bytes of all buffers kept, at most.
const KEEP_TOTAL: usize = 1 << 20;

#[derive(Default)]
struct Kept {
    #[allow(clippy::vec_box, reason = "the boxes are what is kept: a message carries a boxed frame")]
    frames: Vec<Box<Frame>>,
    /// Their buffers' capacity, in all.
    bytes: usize,
}

thread_local! {
    static SPARE: RefCell<Kept> = RefCell::new(Kept::default());
}

/// Keep `frame` for a later `take`.
pub fn give(frame: Box<Frame>) {
    SPARE.with_borrow_mut(|s| {
        let cap = frame.bytes.capacity();
        if s.frames.len() < KEEP && cap <= KEEP_BYTES && s.bytes + cap <= KEEP_TOTAL {
            s.bytes += cap;
            s.frames.push(frame);
        }
    });
}

/// A boxed frame with `meta` whose bytes `fill` writes into an empty buffer
/// (a kept one where there is one). Inlined, so that `meta` is written from
/// where its maker has it: passed in memory, its fields were read back wide
/// right after their narrow stores, which stalls.
#[inline(always)]
pub fn take(meta: FrameMeta, fill: impl FnOnce(&mut Vec<u8>)) -> Box<Frame> {
    let mut frame = kept().unwrap_or_else(|| Box::new(Frame { bytes: Vec::new(), meta }));
    frame.bytes.clear();
    frame.meta = meta;
    fill(&mut frame.bytes);
    frame
}

/// The frame last given back, if one is kept.
fn kept() -> Option<Box<Frame>> {
    SPARE.with_borrow_mut(|s| {
        let f = s.frames.pop()?;
        s.bytes -= f.bytes.capacity();
        Some(f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_given_back_is_taken_again_with_new_bytes_and_meta() {
        let meta = |seq| FrameMeta { seq, ..FrameMeta::default() };
        let first = take(meta(1), |b| b.extend_from_slice(&[1; 100]));
        let at = first.bytes.as_ptr();
        give(first);
        let second = take(meta(2), |b| b.extend_from_slice(&[2; 60]));
        assert_eq!(second.bytes.as_ptr(), at, "the kept buffer is reused");
        assert_eq!((second.bytes.as_slice(), second.meta.seq), (&[2u8; 60][..], 2), "nothing of the old frame is left");
    }

    #[test]
    fn a_buffer_larger_than_a_jumbo_frame_is_not_kept() {
        let big = take(FrameMeta::default(), |b| b.extend_from_slice(&[0; 65_536]));
        let at = big.bytes.as_ptr();
        give(big);
        let next = take(FrameMeta::default(), |b| b.push(1));
        assert_ne!(next.bytes.as_ptr(), at);
        assert!(next.bytes.capacity() < 65_536);
    }

    #[test]
    fn the_buffers_kept_hold_at_most_a_mebibyte() {
        let frames: Vec<_> = (0..400).map(|_| take(FrameMeta::default(), |b| b.extend_from_slice(&[0; 9_000]))).collect();
        frames.into_iter().for_each(give);
        let (n, bytes) = SPARE.with_borrow(|s| (s.frames.len(), s.bytes));
        assert!(bytes <= KEEP_TOTAL && bytes + 9_000 > KEEP_TOTAL, "kept {n} frames, {bytes} bytes");
        assert_eq!(bytes, SPARE.with_borrow(|s| s.frames.iter().map(|f| f.bytes.capacity()).sum::<usize>()));
    }
}
