//! Observation: per-component reports, pcap capture of links, and (later) timelines.

mod pcap;
mod report;

pub use pcap::{CaptureFile, Captured};
pub use report::{Report, Value};
