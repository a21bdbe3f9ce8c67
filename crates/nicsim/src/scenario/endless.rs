//! A scenario without a `duration` ends when its traffic drains; one whose
//! traffic cannot drain is refused: switches cabled in a loop flood frames round
//! it for ever, and a source whose count outlasts the simulator's clock
//! (picoseconds in 64 bits, 213 days) never finishes.

use std::collections::HashMap;

use crate::link::{Rate, SourceConfig};
use crate::scenario::schema::Scenario;
use crate::scenario::ScenarioError;
use crate::time::Time;
use crate::wire::ethernet::wire_bytes;

/// The first link that closes a loop of switches (two ports of one switch
/// cabled together, two links between the same switches, a ring) is refused.
pub fn check_switch_loops(sc: &Scenario) -> Result<(), ScenarioError> {
    let switches: HashMap<&str, usize> = sc.switch.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
    let on_switch = |end: &str| end.split_once(':').and_then(|(name, _)| switches.get(name).copied());
    // Union-find over switches: a link between two already joined closes a loop.
    let mut parent: Vec<usize> = (0..sc.switch.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, l) in sc.link.iter().enumerate() {
        let (Some(a), Some(b)) = (on_switch(&l.a), on_switch(&l.b)) else { continue };
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra == rb {
            return Err(ScenarioError::new(
                "duration",
                format!(
                    "needed: link[{i}] ({:?}) closes a loop of switches, round which flooded frames never drain; set a duration or break the loop",
                    l.name
                ),
            ));
        }
        parent[ra] = rb;
    }
    Ok(())
}

/// A source `path` with a count must be able to send it within the
/// simulator's clock, at its rate or its link's.
pub fn check_source_ends(src: &SourceConfig, path: &str) -> Result<(), ScenarioError> {
    let Some(count) = src.count else { return Ok(()) };
    let bits = 8.0 * wire_bytes(src.headers.header_len() + src.payload_len) as f64;
    let bps = match src.rate {
        Rate::Line => src.link_bps as f64,
        Rate::BitsPerSecond(b) => b as f64,
        Rate::FramesPerSecond(f) => f * bits,
    };
    let seconds = src.start.0 as f64 * 1e-12 + count as f64 * bits / bps;
    let most = Time::MAX.as_secs_f64();
    if seconds > most {
        let days = |s: f64| s / 86_400.0;
        return Err(ScenarioError::new(
            format!("{path}.count"),
            format!(
                "{count} frames take {:.3e} days to send, past the {:.0} days of the simulator's clock; set a duration or a smaller count",
                days(seconds),
                days(most)
            ),
        ));
    }
    Ok(())
}
