//! A programmable adapter's settings (`[host.adapter.programmable]`): the table
//! as serde reads it and its checks into the adapter's configuration, whose
//! errors name the key. docs/scenarios.md documents every key and default, and
//! docs/model.md their sources.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::nic::firmware::coalesce::CoalesceConfig;
use crate::nic::smart::config::{AdapterConfig, ChecksumAt, FirmwareCosts, HostSide, Receive, Segmentation};
use crate::nic::smart::layout::{A_RESERVED, RX_BUFFER};
use crate::settings::{defaults, within};
use crate::time::{Clock, Duration};
use crate::units::{BitRate, Frequency, TimeSpan};

defaults! {
    one: i64 = 1;
    two: i64 = 2;
    sixty_four: i64 = 64;
    yes: bool = true;
    one_megabyte: i64 = 1 << 20;
    dma_startup: i64 = DMA_STARTUP_CALIBRATED;
    hundred_us: TimeSpan = TimeSpan(Duration::from_us(100));
}

/// A programmable adapter (`kind = "programmable"`): embedded processors and
/// memory running firmware; the host drives it through rings and doorbells and
/// polls its event ring.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgrammableSpec {
    /// Embedded processors; 0 sends, 1 receives.
    #[serde(default = "two")]
    pub processors: i64,
    /// Their clock.
    pub clock: Frequency,
    /// Adapter memory, bytes, at least 256 KB.
    #[serde(default = "one_megabyte")]
    pub memory: i64,
    /// The adapter memory port's bandwidth.
    pub memory_bandwidth: BitRate,
    /// Adapter memory for received frames (default: half of what is left after 192 KB).
    pub rx_memory: Option<i64>,
    /// Frames the MAC's transmit FIFO holds.
    #[serde(default = "two")]
    pub mac_tx_frames: i64,
    /// Each DMA transfer's start-up, in cycles of the adapter's clock: the
    /// engine's time from being programmed to its first data on the host bus
    /// (calibrated; the bus is free meanwhile).
    #[serde(default = "dma_startup")]
    pub dma_startup: i64,
    /// Where checksums are inserted and verified: "mac", "firmware" (not with direct
    /// segmentation), or "split" (the firmware sums headers and pseudo-header, the MAC
    /// the payload).
    #[serde(default)]
    pub checksum: ChecksumAt,
    /// "direct" (payload gathered from host memory) or "store-and-forward".
    #[serde(default)]
    pub segmentation: Segmentation,
    /// Firmware cycles of each operation.
    #[serde(default)]
    pub costs: FirmwareCosts,
    /// Receive buffers (64 KB each) the host keeps posted, 1 to 4096.
    #[serde(default = "sixty_four")]
    pub rx_buffers: i64,
    /// Buffers the host returns per doorbell.
    #[serde(default = "one")]
    pub repost_batch: i64,
    /// What happens to received frames.
    #[serde(default)]
    pub receive: ReceiveSpec,
}

/// The DMA start-up from the Malta calibration point (adapter to host,
/// 1512-byte transfers at 665.6 Mb/s at 88 MHz; docs/model.md shows the arithmetic).
pub const DMA_STARTUP_CALIBRATED: i64 = 470;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiveSpec {
    /// Received frames go to the host (false: the firmware counts and drops them).
    #[serde(default = "yes")]
    pub to_host: bool,
    /// Packet coalescing, on when given: frames per buffer, 1 to 43.
    pub coalesce_frames: Option<i64>,
    /// Packet coalescing: how long a buffer may wait.
    #[serde(default = "hundred_us")]
    pub coalesce_timeout: TimeSpan,
    /// LRO in the firmware, with this timeout.
    pub lro_timeout: Option<TimeSpan>,
    /// GRO in the host driver, with this timeout.
    pub gro_timeout: Option<TimeSpan>,
    /// An XDP program the firmware runs on every received frame, on the
    /// receiving processor (offloaded XDP): its verdict drops the frame on
    /// the adapter, passes it on, or sends it back out of the adapter. Its
    /// `cycles` are the adapter processor's.
    #[schemars(with = "Option<crate::xdp::XdpKeys>")]
    pub xdp: Option<crate::xdp::Xdp>,
}

impl Default for ReceiveSpec {
    fn default() -> Self {
        ReceiveSpec {
            to_host: true,
            coalesce_frames: None,
            coalesce_timeout: hundred_us(),
            lro_timeout: None,
            gro_timeout: None,
            xdp: None,
        }
    }
}

impl ProgrammableSpec {
    /// The adapter on a link of `link_rate` with frames of `mtu`; an error
    /// says "key: what is wrong".
    pub fn adapter(&self, link_rate: u64, mtu: u32) -> Result<AdapterConfig, String> {
        let memory = within("memory", self.memory, 256 * 1024, 1 << 34)?;
        let rx_memory = self.rx_memory.unwrap_or(((memory - A_RESERVED) / 2) as i64);
        let rx_memory = within("rx_memory", rx_memory, 16 * 1024, (memory - A_RESERVED) as i64)?;
        if self.checksum == ChecksumAt::Firmware && self.segmentation == Segmentation::Direct {
            return Err("checksum: \"firmware\" needs the payload in adapter memory, which direct segmentation never puts there: use \"mac\" or \"split\", or segmentation = \"store-and-forward\"".into());
        }
        if self.memory_bandwidth.0 < 8 {
            return Err(format!("memory_bandwidth: must be at least 8 b/s (a byte a second), got {} b/s", self.memory_bandwidth.0));
        }
        Ok(AdapterConfig {
            processors: within("processors", self.processors, 1, 64)? as u32,
            clock: self.clock.0,
            memory_bytes: memory,
            memory_bytes_per_s: self.memory_bandwidth.0 / 8,
            rx_memory_bytes: rx_memory,
            mac_tx_frames: within("mac_tx_frames", self.mac_tx_frames, 1, 1024)? as u32,
            dma_startup: within("dma_startup", self.dma_startup, 0, 1_000_000_000)?,
            link_rate_bps: link_rate,
            mtu,
            costs: self.costs.clone(),
            checksum: self.checksum,
            segmentation: self.segmentation,
        })
    }

    /// The host's side of it: the receive buffers the host keeps posted, on a
    /// host of `clock` (none: an error) that copies unless `zero_copy`.
    pub fn host_side(&self, clock: Option<Clock>, zero_copy: bool) -> Result<HostSide, String> {
        let rx_buffers = within("rx_buffers", self.rx_buffers, 1, 4096)? as u32;
        let repost_batch = within("repost_batch", self.repost_batch, 1, rx_buffers as i64)? as u32;
        let Some(clock) = clock else { return Err("its host has no clock".into()) };
        Ok(HostSide { clock, zero_copy, rx_buffers, repost_batch })
    }
}

impl ReceiveSpec {
    /// What the firmware does with received frames; an error says "key: what is wrong".
    pub fn receive(&self) -> Result<Receive, String> {
        let coalesce = match self.coalesce_frames {
            None => None,
            Some(frames) => {
                if !self.to_host {
                    return Err("coalesce_frames: coalescing needs to_host = true".into());
                }
                let max_frames = within("coalesce_frames", frames, 1, 43)? as u32;
                Some(CoalesceConfig { max_frames, capacity: RX_BUFFER as usize, timeout: self.coalesce_timeout.0 })
            }
        };
        if self.lro_timeout.is_some() && !self.to_host {
            return Err("lro_timeout: LRO needs to_host = true".into());
        }
        if self.lro_timeout.is_some() && coalesce.is_some() {
            return Err("lro_timeout: LRO segments of up to 64 KB do not pack into 64 KB coalescing buffers: use one or the other".into());
        }
        Ok(Receive {
            to_host: self.to_host,
            coalesce,
            lro: self.lro_timeout.map(|t| t.0),
            gro: self.gro_timeout.map(|t| t.0),
            xdp: self.xdp.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> ProgrammableSpec {
        toml::from_str(&format!("clock = \"88MHz\"\nmemory_bandwidth = \"1600Mbps\"\n{text}")).expect("a programmable table")
    }

    #[test]
    fn unset_keys_take_the_defaults_and_the_calibrated_dma_start_up() {
        let a = spec("").adapter(1_000_000_000, 1500).expect("valid");
        assert_eq!((a.processors, a.memory_bytes, a.dma_startup), (2, 1 << 20, DMA_STARTUP_CALIBRATED as u64));
        assert_eq!(a.rx_memory_bytes, ((1 << 20) - A_RESERVED) / 2, "half of what is left after the reserved part");
    }

    #[test]
    fn an_error_names_the_key() {
        let e = spec("checksum = \"firmware\"\nsegmentation = \"direct\"").adapter(1, 1500).unwrap_err();
        assert!(e.starts_with("checksum: \"firmware\" needs the payload in adapter memory"), "{e}");
        assert_eq!(
            spec("repost_batch = 65").host_side(Some(Clock::from_mhz(100)), false).unwrap_err(),
            "repost_batch: must be 1 to 64, got 65"
        );
        assert_eq!(spec("").host_side(None, false).unwrap_err(), "its host has no clock");
        let r: ReceiveSpec = toml::from_str("to_host = false\ncoalesce_frames = 4").unwrap();
        assert_eq!(r.receive().unwrap_err(), "coalesce_frames: coalescing needs to_host = true");
    }
}
