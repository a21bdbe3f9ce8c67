//! Frames kept for reuse: a source makes a frame a few nanoseconds of wall time
//! apart and a sink drops one as often, and allocating and freeing a boxed
//! frame and its bytes each time was a tenth of a link flood. A sink gives back
//! what it has counted; a source takes one and writes its bytes over the old.
//! Per thread (runs of a sweep share nothing) and bounded, so a run that only
//! takes or only gives costs what it did. A run keeps frames of its own in
//! front of the thread's (a `Magazine`, bounded alike), reaching the thread's
//! only when it runs out and when the run is dropped: reaching a thread-local
//! from a shared library, as the Python package is, costs a call into the
//! dynamic loader each time.

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
    static SPARE: RefCell<Kept> = const { RefCell::new(Kept { frames: Vec::new(), bytes: 0 }) };
}

/// Keep `frame` for a later `take`.
pub fn give(frame: Box<Frame>) {
    SPARE.with_borrow_mut(|s| s.keep(frame));
}

impl Kept {
    /// Keep `frame` if it is within the bounds (else it is freed).
    #[inline]
    fn keep(&mut self, frame: Box<Frame>) {
        let cap = frame.bytes.capacity();
        if self.frames.len() < KEEP && cap <= KEEP_BYTES && self.bytes + cap <= KEEP_TOTAL {
            self.bytes += cap;
            self.frames.push(frame);
        }
    }

    /// The frame last given back, if one is kept.
    #[inline]
    fn pop(&mut self) -> Option<Box<Frame>> {
        let f = self.frames.pop()?;
        self.bytes -= f.bytes.capacity();
        Some(f)
    }
}

/// A boxed frame with `meta` whose bytes `fill` writes into an empty buffer
/// (a kept one where there is one). Inlined, so that `meta` is written from
/// where its maker has it: passed in memory, its fields were read back wide
/// right after their narrow stores, which stalls.
#[inline(always)]
pub fn take(meta: FrameMeta, fill: impl FnOnce(&mut Vec<u8>)) -> Box<Frame> {
    reuse(SPARE.with_borrow_mut(Kept::pop), meta, fill)
}

/// `kept`, or a new frame, with `meta` and the bytes `fill` writes.
#[inline(always)]
fn reuse(kept: Option<Box<Frame>>, meta: FrameMeta, fill: impl FnOnce(&mut Vec<u8>)) -> Box<Frame> {
    let mut frame = kept.unwrap_or_else(|| Box::new(Frame { bytes: Vec::new(), meta }));
    frame.bytes.clear();
    frame.meta = meta;
    fill(&mut frame.bytes);
    frame
}

/// Frames a magazine takes from the thread's pool at once when it runs out.
const BATCH: usize = 32;

/// A run's own spare frames, in front of the thread's pool and bounded as it
/// is: taken and given without reaching the pool but when it runs out, and
/// handed to the pool when the run is dropped.
#[derive(Default)]
pub struct Magazine(Kept);

impl Magazine {
    /// As `take`, from the magazine.
    #[inline(always)]
    pub fn take(&mut self, meta: FrameMeta, fill: impl FnOnce(&mut Vec<u8>)) -> Box<Frame> {
        if self.0.frames.is_empty() {
            self.load();
        }
        reuse(self.0.pop(), meta, fill)
    }

    /// As `give`, to the magazine.
    #[inline]
    pub fn give(&mut self, frame: Box<Frame>) {
        self.0.keep(frame);
    }

    /// Take up to a batch from the pool, the last given back first.
    #[cold]
    fn load(&mut self) {
        SPARE.with_borrow_mut(|s| {
            for _ in 0..BATCH {
                let Some(f) = s.pop() else { break };
                self.0.keep(f);
            }
        });
    }
}

impl Drop for Magazine {
    fn drop(&mut self) {
        // Freed instead when the thread's pool is gone (the thread is ending).
        let frames = self.0.frames.drain(..);
        let _ = SPARE.try_with(|s| frames.for_each(|f| s.borrow_mut().keep(f)));
    }
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
    fn a_run_takes_the_threads_frames_when_it_has_none_and_hands_its_own_back_when_dropped() {
        let first = take(FrameMeta::default(), |b| b.extend_from_slice(&[1; 100]));
        let at = first.bytes.as_ptr();
        give(first);
        let mut run = Magazine::default();
        let taken = run.take(FrameMeta::default(), |b| b.push(2));
        assert_eq!(taken.bytes.as_ptr(), at, "the thread's spare frame is reused");
        run.give(taken);
        assert_eq!(SPARE.with_borrow(|s| s.frames.len()), 0, "given to the run, not to the thread");
        drop(run);
        let again = take(FrameMeta::default(), |b| b.push(3));
        assert_eq!(again.bytes.as_ptr(), at, "handed back to the thread with the run");
    }

    #[test]
    fn a_run_keeps_frames_within_the_threads_bounds() {
        let mut run = Magazine::default();
        for _ in 0..400 {
            let f = run.take(FrameMeta::default(), |b| b.extend_from_slice(&[0; 9_000]));
            run.give(take(FrameMeta::default(), |b| b.extend_from_slice(&[0; 9_000])));
            run.give(f);
        }
        assert!(run.0.bytes <= KEEP_TOTAL && run.0.frames.len() * 9_000 <= KEEP_TOTAL, "kept {} bytes", run.0.bytes);
        run.give(take(FrameMeta::default(), |b| b.extend_from_slice(&[0; 65_536])));
        assert!(run.0.frames.iter().all(|f| f.bytes.capacity() <= KEEP_BYTES), "no buffer larger than a jumbo frame");
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
