//! TCP offload (BRIEF.md mechanism 7, experiment 2): the offload engine, an
//! adapter whose processor runs the whole TCP (smoltcp) behind a socket-level
//! message interface (`engine`); its run-to-completion executive (`exec`); and
//! the TTCP application whose calls become messages to it (`ttcp`).

pub mod config;
pub mod engine;
pub mod exec;
pub mod ttcp;

pub use config::{AdapterConfig, Role, TtcpConfig};
