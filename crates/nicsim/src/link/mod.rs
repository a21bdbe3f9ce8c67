//! The network outside the host: full-duplex Ethernet links, store-and-forward
//! switches, traffic sources and sinks, and a TAP device to the real world.

mod captured;
mod edge;
mod ethernet;
mod impair;
mod sink;
mod source;
mod stamp;
mod switch;
mod tap;

pub use captured::Captured;
pub use edge::{classify, EdgeClass, EdgeCounts};
pub use ethernet::{EthernetLink, LinkConfig, END_A, END_B};
pub use impair::{Impaired, Impairment};
pub use sink::Sink;
pub use source::{Fill, Pattern, Rate, Source, SourceConfig};
pub use stamp::Stamp;
pub use switch::{Switch, SwitchConfig};
pub use tap::{FrameDevice, TapBridge, TapConfig, TapDevice};
