//! One address space: a sparse array of bytes that reads as zero until written.

use rustc_hash::FxHashMap;

const PAGE: u64 = 4096;

#[derive(Debug)]
pub struct AddressSpace {
    name: String,
    size: u64,
    /// Fx, not SipHash: page numbers come from the model, not from an attacker,
    /// and SipHash was 4% of a direct-segmentation run's time.
    pages: FxHashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl AddressSpace {
    pub fn new(name: &str, size: u64) -> Self {
        AddressSpace { name: name.to_string(), size, pages: FxHashMap::default() }
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn size(&self) -> u64 {
        self.size
    }
    /// Bytes of backing store actually allocated (touched pages).
    pub fn resident(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }

    fn check(&self, offset: u64, len: usize) -> Result<(), String> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(format!("{}: access of {len} bytes at {offset:#x} runs past its end ({:#x})", self.name, self.size)),
        }
    }

    /// Visit the page-sized pieces of `[offset, offset+len)`.
    fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (u64, usize, std::ops::Range<usize>)> {
        let mut at = offset;
        let end = offset + len as u64;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let page = at / PAGE;
            let start = (at % PAGE) as usize;
            let n = ((PAGE - at % PAGE).min(end - at)) as usize;
            let done = (at - offset) as usize;
            at += n as u64;
            Some((page, start, done..done + n))
        })
    }

    pub fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        self.check(offset, buf.len())?;
        for (page, start, range) in Self::pieces(offset, buf.len()) {
            let dst = &mut buf[range];
            match self.pages.get(&page) {
                Some(p) => dst.copy_from_slice(&p[start..start + dst.len()]),
                None => dst.fill(0),
            }
        }
        Ok(())
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), String> {
        self.check(offset, data.len())?;
        for (page, start, range) in Self::pieces(offset, data.len()) {
            let p = self.pages.entry(page).or_insert_with(|| Box::new([0; PAGE as usize]));
            p[start..start + range.len()].copy_from_slice(&data[range]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn reads_back_what_was_written(offset in 0u64..20_000, data in proptest::collection::vec(any::<u8>(), 0..10_000)) {
            let mut s = AddressSpace::new("dram", 64 * 1024);
            s.write(offset, &data).unwrap();
            let mut back = vec![0xaa; data.len()];
            s.read(offset, &mut back).unwrap();
            prop_assert_eq!(back, data);
        }
    }

    #[test]
    fn unwritten_memory_reads_zero_and_bounds_are_checked() {
        let mut s = AddressSpace::new("sram", 8192);
        let mut buf = [1u8; 16];
        s.read(4090, &mut buf).unwrap();
        assert_eq!(buf, [0; 16]);
        assert!(s.write(8190, &[1, 2, 3]).unwrap_err().contains("sram"));
        assert_eq!(s.resident(), 0);
    }
}
