//! The link between the simulation and smoltcp: frames queued in, frames
//! collected out, as a smoltcp `Device` over plain byte vectors. With
//! segmentation offload the device takes TCP sends of up to `TSO_MAX` bytes and
//! the checksums of every TCP frame out: the adapter (or the driver, in
//! software) cuts each into segments of the size smoltcp asks for and sums them.

use std::collections::VecDeque;
use std::num::NonZeroUsize;

use smoltcp::phy::{self, Checksum, Device, DeviceCapabilities, Medium, PacketMeta};

use crate::wire::{spare, Frame, FrameMeta};

/// The largest send handed over for segmentation, Ethernet header included: its
/// IPv4 total length still fits in 16 bits.
pub const TSO_MAX: usize = 65_536;

#[derive(Default)]
#[allow(clippy::vec_box, reason = "frames travel boxed, and the boxes are reused")]
pub(super) struct Queues {
    pub rx: VecDeque<Box<Frame>>,
    pub tx: Vec<Box<Frame>>,
    pub mtu: usize,
    /// The adapters segment large sends and sum TCP checksums.
    pub tso: bool,
}

pub(super) struct Rx(Box<Frame>);
#[allow(clippy::vec_box, reason = "frames travel boxed, and the boxes are reused")]
pub(super) struct Tx<'a> {
    out: &'a mut Vec<Box<Frame>>,
    /// The segment size smoltcp asked for (0: send as it is).
    gso: u16,
}

impl phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        let r = f(&self.0.bytes);
        // Taken in: its buffer serves the next frame sent (`wire::spare`).
        spare::give(self.0);
        r
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut frame = spare::take(FrameMeta { gso: self.gso, ..Default::default() }, |b| b.resize(len, 0));
        let r = f(&mut frame.bytes);
        self.out.push(frame);
        r
    }

    fn set_meta(&mut self, meta: PacketMeta) {
        self.gso = meta.segmentation_offload_size.map_or(0, |n| n.get());
    }
}

impl Device for Queues {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;
    fn receive(&mut self, _: smoltcp::time::Instant) -> Option<(Rx, Tx<'_>)> {
        let frame = self.rx.pop_front()?;
        Some((Rx(frame), Tx { out: &mut self.tx, gso: 0 }))
    }
    fn transmit(&mut self, _: smoltcp::time::Instant) -> Option<Tx<'_>> {
        Some(Tx { out: &mut self.tx, gso: 0 })
    }
    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = self.mtu + 14;
        if self.tso {
            caps.segmentation.tcpv4 = NonZeroUsize::new(TSO_MAX);
            caps.checksum.tcp = Checksum::Rx;
        }
        caps
    }
}
