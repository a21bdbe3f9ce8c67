//! Host I/O buses. So far: conventional PCI/PCI-X transaction costs (data phases,
//! wait states, MWI and remainder writes, read round trips) and PCIe accounting (what
//! a DMA of a given size puts on each direction of the link). The timed, arbitrated
//! bus components come next.

pub mod pci;
pub mod pcie;
