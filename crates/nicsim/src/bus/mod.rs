//! Host I/O buses: conventional PCI/PCI-X transaction costs (data phases, wait
//! states, MWI and remainder writes, read round trips), PCIe accounting (what a
//! DMA of a given size puts on each direction of the link), and the timed bus that
//! masters book, built on a calendar of busy intervals.

pub mod calendar;
pub mod chunked;
pub mod host_bus;
pub mod intervals;
mod occupancy;
pub mod pci;
pub mod pcie;
pub mod pcie_profile;
pub mod purpose;
pub mod rhythm;
pub mod settings;

pub use host_bus::{BusConfig, Fill, HostBus};
pub use purpose::Purpose;
