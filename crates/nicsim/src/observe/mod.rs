//! Observation: per-component reports, pcap capture of links, and timelines.

mod partial;
mod pcap;
mod report;
mod trace;
mod waits;

pub use pcap::{CaptureFile, LinkInterface};
pub use report::{Report, Value};
pub use trace::{SharedTrace, Trace, TrackId};
pub use waits::Waits;
