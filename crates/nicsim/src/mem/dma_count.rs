//! The bytes of received frames a host's devices have written to its memory,
//! one count for all its buses: how far DMA has moved through the last-level
//! cache's share for it (DDIO), so that the driver can tell whether a frame it
//! takes is still there.

use std::cell::Cell;
use std::rc::Rc;

#[derive(Clone, Debug, Default)]
pub struct DmaCount(Rc<Cell<u64>>);

impl DmaCount {
    /// `bytes` more written; the count with them.
    pub fn add(&self, bytes: u64) -> u64 {
        let n = self.0.get() + bytes;
        self.0.set(n);
        n
    }

    pub fn get(&self) -> u64 {
        self.0.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_share_one_count() {
        let (a, b) = (DmaCount::default(), DmaCount::default());
        let shared = a.clone();
        assert_eq!((a.add(64), shared.add(100), b.add(8)), (64, 164, 8));
        assert_eq!((a.get(), b.get()), (164, 8));
    }
}
