//! Which stations each adapter of a host reaches: across links and switches,
//! not through other hosts. A host with several adapters sends to a station it
//! has not heard from yet (a connection it opens) by the first that reaches it.

use std::collections::{HashMap, HashSet};

use crate::scenario::host_schema::HostSpec;
use crate::scenario::plan::Station;
use crate::scenario::schema::Scenario;
use crate::scenario::ScenarioError;

/// The networks of a scenario: link ends joined by links and switches, not
/// through stations. Worked out once, so that asking what each host reaches
/// costs the size of its network, not of the scenario.
pub(super) struct Networks<'a> {
    /// Each station end's network (`NAME`, or `NAME:I` for adapter I of several).
    network: HashMap<&'a str, usize>,
    /// Each network's station ends, with the station each belongs to.
    members: Vec<Vec<(&'a str, &'a str)>>,
    /// Each station's networks (one an adapter).
    of_station: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Networks<'a> {
    pub fn new(sc: &'a Scenario) -> Self {
        let switches: HashSet<&str> = sc.switch.iter().map(|s| s.name.as_str()).collect();
        // A switch's ports are one node; a station's end is its own.
        let node = |end: &'a str| -> &'a str {
            let base = end.split_once(':').map_or(end, |(n, _)| n);
            if switches.contains(base) {
                base
            } else {
                end
            }
        };
        // Union-find over the nodes, in the order links name them.
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut parent: Vec<usize> = Vec::new();
        let mut nodes: Vec<&str> = Vec::new();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for l in &sc.link {
            let [a, b] = [node(&l.a), node(&l.b)].map(|n| {
                *index.entry(n).or_insert_with(|| {
                    parent.push(parent.len());
                    nodes.push(n);
                    parent.len() - 1
                })
            });
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            parent[ra.max(rb)] = ra.min(rb);
        }
        let (mut network, mut numbers, mut members) = (HashMap::new(), HashMap::new(), Vec::new());
        let mut of_station: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, &n) in nodes.iter().enumerate() {
            if switches.contains(n) {
                continue;
            }
            let r = root(&mut parent, i);
            let k = *numbers.entry(r).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            network.insert(n, k);
            let station = n.split_once(':').map_or(n, |(s, _)| s);
            members[k].push((n, station));
            of_station.entry(station).or_default().push(k);
        }
        Networks { network, members, of_station }
    }

    /// Each of host `name`'s `ports` adapters as links name it, with its network (`None`: not linked).
    fn ends(&self, name: &str, ports: i64) -> impl Iterator<Item = (String, Option<usize>)> + '_ {
        let name = name.to_string();
        (0..ports.max(1)).map(move |i| {
            let end = if ports > 1 { format!("{name}:{i}") } else { name.clone() };
            let k = self.network.get(end.as_str()).copied();
            (end, k)
        })
    }

    /// Whether one of host `name`'s `ports` adapters reaches `station`.
    pub fn reaches(&self, name: &str, ports: i64, station: &str) -> bool {
        let theirs = self.of_station.get(station).map_or(&[][..], |v| v.as_slice());
        self.ends(name, ports).filter_map(|(_, k)| k).any(|k| theirs.contains(&k))
    }

    /// The station names reachable from each of host `name`'s `ports` adapters.
    pub fn reachable(&self, name: &str, ports: i64) -> Vec<Vec<&'a str>> {
        self.ends(name, ports)
            .map(|(end, k)| match k {
                Some(k) => self.members[k].iter().filter(|(e, _)| *e != end).map(|&(_, station)| station).collect(),
                None => Vec::new(),
            })
            .collect()
    }
}

/// Each station a host's applications name (the hosts it asks for files, the
/// file server it reads from, its TTCP receiver, its blast's sink) is on a
/// network one of its adapters reaches: else the sessions would wait for ever
/// and the run would say nothing. Names that are no station are left to the
/// checks that say so.
pub(super) fn check_reached(nets: &Networks, h: &HostSpec, path: &str, stations: &HashMap<&str, Station>) -> Result<(), ScenarioError> {
    let mut named: Vec<(String, &str)> = Vec::new();
    if let Some(f) = &h.file_request {
        named.extend(f.peers.iter().enumerate().map(|(k, p)| (format!("{path}.file_request.peers[{k}]"), p.as_str())));
    }
    if let Some(r) = &h.file_read {
        named.push((format!("{path}.file_read.from"), &r.from));
    }
    if let Some(to) = h.ttcp.as_ref().and_then(|t| t.to.as_deref()) {
        named.push((format!("{path}.ttcp.to"), to));
    }
    if let Some(b) = &h.blast {
        named.push((format!("{path}.blast.to"), &b.to));
    }
    named.retain(|(_, name)| stations.contains_key(name) && *name != h.name);
    match named.into_iter().find(|(_, name)| !nets.reaches(&h.name, h.adapter_count(), name)) {
        Some((key, name)) => Err(ScenarioError::new(
            key,
            format!("{name:?} is on no network that {:?} reaches: link them, or name a station it reaches", h.name),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_adapter_reaches_what_is_behind_its_switches_and_not_through_other_hosts() {
        let link = |a: &str, b: &str| format!("[[link]]\nname = \"{a}-{b}\"\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Gbps\"\n");
        let text = [
            "[[switch]]\nname = \"a\"\nports = 2\n[[switch]]\nname = \"b\"\nports = 3\n[[switch]]\nname = \"c\"\nports = 2\n".to_string(),
            link("h:0", "a:0"),
            link("x", "a:1"),
            link("h:1", "b:0"),
            link("b:1", "c:0"),
            link("y", "c:1"),
            link("b:2", "g:0"),
            link("g:1", "z"),
        ]
        .concat();
        let sc = crate::scenario::parse(&text).expect("a scenario");
        let found = Networks::new(&sc).reachable("h", 2);
        assert_eq!(found[0], ["x"]);
        let nets = Networks::new(&sc);
        assert!(nets.reaches("h", 2, "y") && nets.reaches("y", 1, "h") && !nets.reaches("h", 2, "z"), "z is behind host g");
        assert!(!nets.reaches("x", 1, "y"), "x reaches h's first adapter, not what its second reaches");
        assert_eq!(Networks::new(&sc).reachable("x", 1), [["h"]], "a station reaches the host's adapter on its network");
        let mut b = found[1].clone();
        b.sort();
        assert_eq!(b, ["g", "y"], "host g is reached, not what is behind it");
    }
}
