//! The address map: which space answers which address range.

use crate::mem::space::AddressSpace;

pub type SpaceId = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub base: u64,
    pub size: u64,
    pub space: SpaceId,
    /// Offset inside the space that `base` corresponds to (address translation).
    pub offset: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MemError {
    #[error("address {0:#x} is not mapped")]
    Unmapped(u64),
    #[error("access of {len} bytes at {addr:#x} crosses the end of its region")]
    CrossesRegion { addr: u64, len: usize },
    #[error("region at {base:#x} overlaps an existing one")]
    Overlap { base: u64 },
    #[error("{0}")]
    Space(String),
}

/// Sorted, non-overlapping regions.
#[derive(Debug, Default)]
pub struct AddressMap {
    regions: Vec<Region>,
}

impl AddressMap {
    pub fn add(&mut self, region: Region) -> Result<(), MemError> {
        let end = region.base.checked_add(region.size).ok_or(MemError::Overlap { base: region.base })?;
        if self.regions.iter().any(|r| region.base < r.base + r.size && r.base < end) {
            return Err(MemError::Overlap { base: region.base });
        }
        let at = self.regions.partition_point(|r| r.base < region.base);
        self.regions.insert(at, region);
        Ok(())
    }

    /// The space and the offset inside it that answer `len` bytes at `addr`.
    pub fn route(&self, addr: u64, len: usize) -> Result<(SpaceId, u64), MemError> {
        let i = self.regions.partition_point(|r| r.base <= addr);
        let r = i.checked_sub(1).map(|i| &self.regions[i]).filter(|r| addr < r.base + r.size).ok_or(MemError::Unmapped(addr))?;
        if addr + len as u64 > r.base + r.size {
            return Err(MemError::CrossesRegion { addr, len });
        }
        Ok((r.space, r.offset + (addr - r.base)))
    }
}

/// Address spaces together with the map that routes between them.
#[derive(Debug, Default)]
pub struct Memory {
    spaces: Vec<AddressSpace>,
    map: AddressMap,
}

impl Memory {
    pub fn add_space(&mut self, space: AddressSpace) -> SpaceId {
        self.spaces.push(space);
        self.spaces.len() - 1
    }
    /// Make `[base, base+size)` answer from `space` starting at `offset`.
    pub fn map(&mut self, base: u64, size: u64, space: SpaceId, offset: u64) -> Result<(), MemError> {
        self.map.add(Region { base, size, space, offset })
    }
    pub fn space(&self, id: SpaceId) -> &AddressSpace {
        &self.spaces[id]
    }
    /// Which space an access goes to: what a bridge decides per bus request.
    pub fn route(&self, addr: u64, len: usize) -> Result<(SpaceId, u64), MemError> {
        self.map.route(addr, len)
    }
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<SpaceId, MemError> {
        let (id, off) = self.map.route(addr, buf.len())?;
        self.spaces[id].read(off, buf).map_err(MemError::Space)?;
        Ok(id)
    }
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<SpaceId, MemError> {
        let (id, off) = self.map.route(addr, data.len())?;
        self.spaces[id].write(off, data).map_err(MemError::Space)?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_and_adapter() -> (Memory, SpaceId, SpaceId) {
        let mut m = Memory::default();
        let host = m.add_space(AddressSpace::new("host dram", 1 << 30));
        let nic = m.add_space(AddressSpace::new("adapter sram", 1 << 20));
        m.map(0, 1 << 30, host, 0).unwrap();
        m.map(0x8000_0000, 1 << 20, nic, 0).unwrap();
        (m, host, nic)
    }

    #[test]
    fn routes_by_address_to_the_right_space() {
        let (mut m, host, nic) = host_and_adapter();
        assert_eq!(m.write(0x1000, b"payload").unwrap(), host);
        assert_eq!(m.write(0x8000_0040, b"header").unwrap(), nic);
        let mut buf = [0u8; 6];
        assert_eq!(m.read(0x8000_0040, &mut buf).unwrap(), nic);
        assert_eq!(&buf, b"header");
        // The same offset in the other space was not touched.
        m.read(0x40, &mut buf).unwrap();
        assert_eq!(buf, [0; 6]);
        assert_eq!(m.space(nic).resident(), 4096);
    }

    #[test]
    fn unmapped_crossing_and_overlap_are_errors() {
        let (mut m, host, _) = host_and_adapter();
        assert_eq!(m.route(0x7000_0000, 4), Err(MemError::Unmapped(0x7000_0000)));
        assert_eq!(m.route(0x8000_0000 + (1 << 20) - 2, 4), Err(MemError::CrossesRegion { addr: 0x8000_0000 + (1 << 20) - 2, len: 4 }));
        assert_eq!(m.map(0x8000_1000, 16, host, 0), Err(MemError::Overlap { base: 0x8000_1000 }));
    }

    #[test]
    fn translation_offsets_apply() {
        let mut m = Memory::default();
        let s = m.add_space(AddressSpace::new("sram", 4096));
        m.map(0xf000_0000, 1024, s, 2048).unwrap();
        assert_eq!(m.route(0xf000_0010, 4).unwrap(), (s, 2064));
    }
}
