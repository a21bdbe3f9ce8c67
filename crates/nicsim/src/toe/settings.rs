//! An offload engine's settings (`[host.adapter.toe]`): the table as serde
//! reads it and its check into the engine's `AdapterConfig`, whose errors name
//! the key. Unset costs take the HP 2001 study's values (`firmware_costs`,
//! docs/model.md).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::bus::settings::BusSpec;
use crate::settings::{defaults, defaults_of_an_empty_table, within};
use crate::time::Clock;
use crate::toe::firmware_costs::{hp_firmware_cycles, HP_ACK_CYCLES};
use crate::toe::AdapterConfig;
use crate::units::Frequency;

defaults! {
    packet_cycles: i64 = hp_firmware_cycles().packet as i64;
    rx_packet_cycles: i64 = hp_firmware_cycles().rx_packet as i64;
    message_cycles: i64 = hp_firmware_cycles().message as i64;
    ack_cycles: i64 = HP_ACK_CYCLES as i64;
    bytes_512: i64 = 512;
    messages_32: i64 = 32;
    hundred_mhz: Frequency = Frequency(Clock::from_mhz(100));
}

/// The i960RN board's secondary bus: 32-bit PCI without memory write and
/// invalidate, the other keys at the bus defaults.
const I960_PRIVATE_BUS: &str = "kind = \"pci\"\nwidth = 32\nmwi = false";

/// The offloading adapter (the HP study's i960RN).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffloadSpec {
    /// The adapter processor's clock.
    #[serde(default = "hundred_mhz")]
    pub clock: Frequency,
    /// Firmware cycles per data segment sent (calibrated).
    #[serde(default = "packet_cycles")]
    pub packet_cycles: i64,
    /// Firmware cycles per data segment received (calibrated).
    #[serde(default = "rx_packet_cycles")]
    pub rx_packet_cycles: i64,
    /// Firmware cycles per pure ACK (or SYN, FIN, ARP).
    #[serde(default = "ack_cycles")]
    pub ack_cycles: i64,
    /// Firmware cycles per host message (calibrated).
    #[serde(default = "message_cycles")]
    pub message_cycles: i64,
    /// Sends up to this many bytes ride inside the message (programmed I/O).
    #[serde(default = "bytes_512")]
    pub inline_max: i64,
    /// Host messages outstanding at most; also the receive buffers kept posted.
    #[serde(default = "messages_32")]
    pub queue_depth: i64,
    /// The private bus between adapter memory and the MACs (default: 32-bit PCI without
    /// memory write and invalidate, its other keys at their defaults).
    #[serde(default)]
    pub private_bus: Option<BusSpec>,
}
defaults_of_an_empty_table!(OffloadSpec);

impl OffloadSpec {
    /// The engine's processor and host interface; an error says "key: what is wrong".
    pub fn config(&self) -> Result<AdapterConfig, String> {
        let cycles = |key: &str, v: i64| within(key, v, 0, 1 << 40);
        Ok(AdapterConfig {
            clock: self.clock.0,
            packet_cycles: cycles("packet_cycles", self.packet_cycles)?,
            rx_packet_cycles: cycles("rx_packet_cycles", self.rx_packet_cycles)?,
            ack_cycles: cycles("ack_cycles", self.ack_cycles)?,
            message_cycles: cycles("message_cycles", self.message_cycles)?,
            inline_max: within("inline_max", self.inline_max, 0, 65_536)? as u32,
            queue_depth: within("queue_depth", self.queue_depth, 1, 4096)? as u32,
            private_bus: match &self.private_bus {
                Some(b) => b.config().map_err(|m| format!("private_bus.{m}"))?,
                None => toml::from_str::<BusSpec>(I960_PRIVATE_BUS).expect("a bus table").config().expect("a valid bus"),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_left_out_has_the_defaults_of_the_table_given_empty() {
        assert_eq!(format!("{:?}", OffloadSpec::default()), format!("{:?}", toml::from_str::<OffloadSpec>("").unwrap()));
        let engine = OffloadSpec::default();
        assert_eq!((engine.queue_depth, engine.inline_max), (32, 512));
    }

    #[test]
    fn an_error_names_the_key_under_the_table() {
        let spec: OffloadSpec = toml::from_str("queue_depth = 0").unwrap();
        assert_eq!(spec.config().unwrap_err(), "queue_depth: must be 1 to 4096, got 0");
        let spec: OffloadSpec = toml::from_str("[private_bus]\nkind = \"pci\"\nlanes = 4").unwrap();
        assert_eq!(spec.config().unwrap_err(), "private_bus.lanes: is not a PCI setting");
    }
}
