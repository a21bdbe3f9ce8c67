//! Memory that holds real bytes: address spaces (host DRAM, adapter memory) and an
//! address map that routes each access by its address to the space behind it, the
//! way the adapter's bridge decides between embedded memory and the host bus.

mod dma_count;
mod map;
mod space;

pub use dma_count::DmaCount;
pub use map::{AddressMap, MemError, Memory, Region, SpaceId};
pub use space::AddressSpace;
