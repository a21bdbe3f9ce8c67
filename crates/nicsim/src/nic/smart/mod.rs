//! The programmable adapter (the Malta 2001 dissertation's Alteon Tigon; docs/model.md, "The programmable adapter"): embedded
//! processors, adapter memory, DMA engines each way and a bridge that routes bus
//! requests by address, running the firmware of `nic::firmware` on real bytes,
//! driven by its host through rings, doorbells and an event ring.
//! `Programmable` is one such adapter of a host.

pub mod config;
pub mod hw;
pub mod layout;
mod node;
mod recv;
mod send;
pub mod settings;
mod staging;

pub use node::{Due, Programmable};
