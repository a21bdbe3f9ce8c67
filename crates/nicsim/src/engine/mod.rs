//! The discrete-event engine: an event queue with a total order, components that
//! exchange typed messages through ports wired at assembly, and one seeded RNG each.

mod component;
mod paced;
mod queue;
mod rng;
mod simulator;
pub mod timers;

pub use component::{Component, Ctx, Inline, Msg, Outgoing, PortId, WIRE};
pub use paced::{PaceStats, Pacing};
pub use queue::{EventQueue, Scheduled};
pub use rng::{component_rng, SimRng};
pub use simulator::{ComponentId, Endpoint, SimError, Simulator, Stats, SELF_PORT};
