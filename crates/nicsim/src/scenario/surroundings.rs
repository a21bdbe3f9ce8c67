//! What one host's checks need to know of the rest of the scenario.

use crate::scenario::plan::Station;
use crate::wire::endpoint::Addr;

/// What a host's checks need from the rest of the scenario.
pub struct Surroundings<'a> {
    pub me: &'a Station,
    /// The rate of the link each of the host's adapters is on, in port order.
    pub link_rates: Vec<u64>,
    pub mtu: u32,
    /// Station of a host, sink or tap by name, with its kind ("ideal" for an ideal host).
    pub station: &'a dyn Fn(&str) -> Option<(&'static str, &'a Station)>,
    pub flow: u32,
    /// The client sessions of the ideal hosts that read from this host.
    pub clients: &'a [Addr],
    /// Seeds the host's TCP initial sequence numbers.
    pub seed: u64,
    /// The scenario has a duration (a workload without an end may run).
    pub bounded: bool,
}
