//! TCP offload (BRIEF.md mechanism 7, experiment 2): one real TCP (smoltcp) that
//! runs on the host or on the adapter's processor, the socket-level message
//! interface between them, the adapter's run-to-completion executive, and the
//! TTCP-style bulk transfer that compares the three designs.

mod adapter_side;
pub mod config;
pub mod engine;
pub mod exec;
mod host_side;
pub mod node;
mod report;
pub mod ttcp;

pub use config::{AdapterConfig, Design, FastPathConfig, HostCosts, Role, TcpHostConfig, TtcpConfig};
pub use node::TcpHost;
