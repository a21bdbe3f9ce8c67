//! Checks a TCP offload engine's table (`[host.adapter.toe]`). Unset costs take
//! the HP 2001 study's values (`toe::firmware_costs`).

use crate::scenario::bus_validate::bus_config;
use crate::scenario::checks::within;
use crate::scenario::tcp_schema::OffloadSpec;
use crate::scenario::ScenarioError;
use crate::toe::AdapterConfig;

/// The i960RN board's secondary bus: 32-bit PCI without memory write and
/// invalidate, the other keys at the bus defaults.
const I960_PRIVATE_BUS: &str = "kind = \"pci\"\nwidth = 32\nmwi = false";

fn cycles(path: &str, key: &str, v: i64) -> Result<u64, ScenarioError> {
    within(format!("{path}.{key}"), v, 0, 1 << 40)
}

/// A TCP offload engine's processor and host interface (`ap`: the table's path).
pub(crate) fn offload_adapter(a: &OffloadSpec, ap: &str) -> Result<AdapterConfig, ScenarioError> {
    Ok(AdapterConfig {
        clock: a.clock.0,
        packet_cycles: cycles(ap, "packet_cycles", a.packet_cycles)?,
        rx_packet_cycles: cycles(ap, "rx_packet_cycles", a.rx_packet_cycles)?,
        ack_cycles: cycles(ap, "ack_cycles", a.ack_cycles)?,
        message_cycles: cycles(ap, "message_cycles", a.message_cycles)?,
        inline_max: within(format!("{ap}.inline_max"), a.inline_max, 0, 65_536)? as u32,
        queue_depth: within(format!("{ap}.queue_depth"), a.queue_depth, 1, 4096)? as u32,
        private_bus: match &a.private_bus {
            Some(b) => bus_config(b, &format!("{ap}.private_bus"))?,
            None => bus_config(&toml::from_str(I960_PRIVATE_BUS).expect("a bus table"), "")?,
        },
    })
}
