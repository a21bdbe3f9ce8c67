//! nicsim: a discrete-event model of a host, its I/O bus and an intelligent
//! Ethernet adapter, in which real frames flow byte for byte and every step costs
//! simulated time.
//!
//! The layers, bottom up:
//!
//! - [`time`]: simulated time as integer picoseconds, and exact clocks.
//! - [`engine`]: the event queue in (time, sequence) order, components that talk
//!   only through messages on wired ports, and one seeded RNG per component; and a
//!   run paced to the wall clock for scenarios bridged to real Linux.
//! - [`wire`]: Ethernet, 802.1Q, IPv4, IPv6, UDP and TCP as real bytes (etherparse
//!   underneath), Ethernet framing arithmetic, and the Internet checksum.
//! - [`mem`]: address spaces holding real bytes and the address map that routes an
//!   access to host or adapter memory.
//! - [`bus`]: PCI transaction costs and PCIe TLP/DLLP accounting per DMA.
//! - [`link`]: full-duplex Ethernet links at an exact line rate, store-and-forward
//!   switches, traffic sources and sinks, and a TAP bridge to the kernel that
//!   counts what arrives at the edge by class.
//! - [`observe`]: per-component reports and pcap capture as a link wrapper.
//! - [`scenario`]: TOML scenarios, checked with key-path errors, and their assembly.
//! - [`run`](mod@run): one run of a checked scenario into a serialisable result.

pub mod bench;
pub mod bus;
pub mod device;
pub mod engine;
pub mod host;
pub mod link;
pub mod mem;
pub mod nic;
pub mod observe;
pub mod processor;
pub mod run;
pub mod scenario;
pub mod settings;
pub mod stack;
pub mod time;
pub mod toe;
pub(crate) mod units;
pub mod wire;
pub mod xdp;

pub use run::{run, Progress, ProgressReport, RunError, RunOptions, RunResult, StopCheck};
