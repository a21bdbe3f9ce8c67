//! TCP offload (BRIEF.md mechanism 7, experiment 2): the offload engine, an
//! adapter whose processor runs the whole TCP (smoltcp) behind a socket-level
//! message interface (`engine`), and its run-to-completion executive (`exec`).
//! The host's side is `host::offload`.

pub mod config;
pub mod engine;
pub mod exec;

pub use config::AdapterConfig;
