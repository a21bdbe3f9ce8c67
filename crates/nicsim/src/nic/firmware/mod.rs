//! Adapter firmware as real code on real bytes: each module takes and gives frame
//! bytes and knows nothing of time. The timed adapter (`nic::smart`) charges the
//! embedded processor, memory and buses for running them.

pub mod chunk;
pub mod coalesce;
pub mod csum;
pub mod gro;
pub mod headers;
pub mod merge;
#[cfg(test)]
pub(crate) mod testing;
pub mod tso;
