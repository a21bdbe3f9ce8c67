//! Wire formats: frames as real bytes, built and parsed through etherparse under a
//! small wrapper of ours, and the Internet checksum.

pub mod arp;
mod build;
pub mod checksum;
pub mod endpoint;
pub mod ethernet;
mod frame;
pub mod ncp;
pub mod spare;
mod view;

pub use build::{build, Headers, TcpFields, L3, L4};
pub use frame::{Frame, FrameMeta};
pub use view::{verify_checksums, ChecksumError, Transport, View};

#[cfg(test)]
mod tests;
