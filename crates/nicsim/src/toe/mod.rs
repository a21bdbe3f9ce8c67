//! TCP offload (Ang, HPL-2001-8, the HP 2001 study): the offload engine, an
//! adapter whose processor runs the whole TCP (smoltcp) behind a socket-level
//! message interface (`engine`), run to completion (`processor::run`), and the
//! messages it takes and gives (`work`).
//! The host's side is `host::offload`.

pub mod adapter;
pub mod config;
pub mod engine;
pub mod firmware_costs;
pub mod settings;
pub mod work;

pub use config::AdapterConfig;
