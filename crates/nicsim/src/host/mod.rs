//! The host: processors and their costs, the driver, the protocol stack and the
//! applications; and the ideal hosts (`ideal = true`) that cost nothing.

mod adapters;
pub mod apps;
pub mod config;
pub mod cpu;
pub mod driver;
pub mod event_driver;
mod event_ring_steps;
mod frames_up;
mod gone_up;
mod gro;
mod handler_runs;
pub mod ideal;
mod labels;
mod latency;
pub mod machine;
mod offload;
mod offload_steps;
mod port;
mod processes;
mod processors;
mod report;
mod send_order;
mod send_queue;
pub mod sessions;
mod steps;
pub mod stream;
mod tag;
mod tally;
mod timers;
mod trace_tracks;
pub mod transfer;
mod xdp_steps;
