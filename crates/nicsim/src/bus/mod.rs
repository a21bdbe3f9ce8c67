//! Host I/O buses. So far: PCIe transaction-layer accounting (what a DMA of a given
//! size costs on the link in each direction); the timed bus components come next.

pub mod pcie;
