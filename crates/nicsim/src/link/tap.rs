//! A link end that is a Linux TAP device: frames that reach it in the simulation
//! are written to the kernel, and frames the kernel sends are read and passed
//! into the simulation (through the edge's checks, `link::edge`). A scenario
//! with one runs paced to the wall clock (`engine::paced`), because the kernel
//! on the other side lives in real time.
//!
//! The device is opened with tun-rs (a maintained TUN/TAP crate; it keeps the
//! ioctls and their `unsafe` out of this code), without packet information and
//! without offload, so each read is exactly one Ethernet frame without FCS.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use crate::engine::{Component, Ctx, Msg, PortId, WIRE};
use crate::link::edge::{classify, EdgeCounts};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::{Frame, FrameMeta};

/// Frames in and out of the real world; a test gives a fake one.
pub trait FrameDevice {
    /// One frame into `buf`; `WouldBlock` when none is waiting.
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    fn send(&mut self, frame: &[u8]) -> io::Result<usize>;
    fn fd(&self) -> BorrowedFd<'_>;
}

/// A TAP device, opened non-blocking (made if it does not exist yet).
pub struct TapDevice(tun_rs::SyncDevice);

impl TapDevice {
    pub fn open(name: &str) -> io::Result<TapDevice> {
        let dev = tun_rs::DeviceBuilder::new().name(name).layer(tun_rs::Layer::L2).build_sync()?;
        dev.set_nonblocking(true)?;
        Ok(TapDevice(dev))
    }
}

impl FrameDevice for TapDevice {
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.recv(buf)
    }
    fn send(&mut self, frame: &[u8]) -> io::Result<usize> {
        self.0.send(frame)
    }
    fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Reads take at most this many frames, so a flood cannot starve the simulation.
const BURST: usize = 256;
/// Larger than any frame the kernel can hand a TAP reader, so none is cut short.
const READ_BUFFER: usize = 65_536 + 64;

#[derive(Clone, Debug)]
pub struct TapConfig {
    pub device: String,
    /// The link's largest frame, no FCS (MTU + header + one VLAN tag).
    pub max_frame: usize,
    /// The Linux side's address, for the user (it is set in Linux, not here).
    pub linux_address: String,
}

pub struct TapBridge {
    cfg: TapConfig,
    device: Box<dyn FrameDevice>,
    buf: Vec<u8>,
    inbound: EdgeCounts,
    out_frames: u64,
    out_bytes: u64,
    out_failed: u64,
    first_failure: Option<String>,
    /// Set when reading failed for a reason other than "nothing yet" (the device
    /// went away): the bridge then stops listening.
    read_failure: Option<String>,
}

impl TapBridge {
    pub fn new(cfg: TapConfig, device: Box<dyn FrameDevice>) -> TapBridge {
        TapBridge {
            cfg,
            device,
            buf: vec![0; READ_BUFFER],
            inbound: EdgeCounts::default(),
            out_frames: 0,
            out_bytes: 0,
            out_failed: 0,
            first_failure: None,
            read_failure: None,
        }
    }

    pub fn inbound(&self) -> &EdgeCounts {
        &self.inbound
    }
}

impl Component for TapBridge {
    fn kind(&self) -> &'static str {
        "tap"
    }
    fn handle(&mut self, _port: PortId, msg: Msg, _ctx: &mut Ctx) {
        let Msg::Frame(frame) = msg else { return };
        match self.device.send(&frame.bytes) {
            Ok(_) => {
                self.out_frames += 1;
                self.out_bytes += frame.len() as u64;
            }
            Err(e) => {
                self.out_failed += 1;
                self.first_failure.get_or_insert_with(|| e.to_string());
            }
        }
    }
    fn input_fd(&self) -> Option<BorrowedFd<'_>> {
        self.read_failure.is_none().then(|| self.device.fd())
    }
    fn take_input(&mut self, ctx: &mut Ctx) {
        for _ in 0..BURST {
            let len = match self.device.recv(&mut self.buf) {
                Ok(len) => len,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.read_failure = Some(e.to_string());
                    return;
                }
            };
            let bytes = &self.buf[..len];
            let class = classify(bytes, self.cfg.max_frame);
            self.inbound.add(class, len);
            if class.passes() {
                let frame = Frame { bytes: bytes.to_vec(), meta: FrameMeta { created: ctx.now(), ..Default::default() } };
                ctx.send_after(WIRE, Duration::ZERO, Msg::frame(frame));
            }
        }
    }
    fn report(&self, _end: Time) -> Report {
        let mut r = Report::default();
        self.inbound.report(&mut r, "from_linux_");
        r.count("to_linux_frames", self.out_frames);
        r.count("to_linux_bytes", self.out_bytes);
        r.count("to_linux_failed", self.out_failed);
        r
    }
    fn text(&self) -> Vec<(&'static str, String)> {
        let mut t = vec![("device", self.cfg.device.clone()), ("linux_address", self.cfg.linux_address.clone())];
        if let Some(f) = &self.first_failure {
            t.push(("to_linux_first_failure", f.clone()));
        }
        if let Some(f) = &self.read_failure {
            t.push(("from_linux_failure", f.clone()));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Endpoint, Simulator};
    use crate::link::Sink;
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    /// Frames queued in memory, with one byte in a pipe for each, so that the
    /// pipe is readable exactly while a frame waits (as a TAP device is).
    struct Fake {
        inbox: VecDeque<Vec<u8>>,
        sent: Rc<RefCell<Vec<Vec<u8>>>>,
        pipe: std::io::PipeReader,
    }
    impl FrameDevice for Fake {
        fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let f = self.inbox.pop_front().ok_or(io::ErrorKind::WouldBlock)?;
            std::io::Read::read_exact(&mut self.pipe, &mut [0])?;
            buf[..f.len()].copy_from_slice(&f);
            Ok(f.len())
        }
        fn send(&mut self, frame: &[u8]) -> io::Result<usize> {
            self.sent.borrow_mut().push(frame.to_vec());
            Ok(frame.len())
        }
        fn fd(&self) -> BorrowedFd<'_> {
            self.pipe.as_fd()
        }
    }

    fn bridge(inbox: Vec<Vec<u8>>) -> (TapBridge, std::io::PipeWriter) {
        let (pipe, mut writer) = std::io::pipe().unwrap();
        std::io::Write::write_all(&mut writer, &vec![0; inbox.len()]).unwrap();
        let dev = Fake { inbox: inbox.into(), sent: Rc::default(), pipe };
        let cfg = TapConfig { device: "fake0".into(), max_frame: 1518, linux_address: "198.18.0.2/24".into() };
        (TapBridge::new(cfg, Box::new(dev)), writer)
    }

    #[test]
    fn hostile_frames_are_counted_and_only_frames_pass() {
        let good = {
            let b = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6]).ipv4([1, 2, 3, 4], [5, 6, 7, 8], 9).udp(1, 2);
            let mut out = Vec::new();
            b.write(&mut out, b"hello").unwrap();
            out
        };
        let inbox = vec![vec![], vec![1; 5], vec![0; 9000], good[..25].to_vec(), good.clone(), vec![0xff; 64]];
        let (tap, _writer) = bridge(inbox);
        let mut sim = Simulator::new(1);
        let t = sim.add("tap", Box::new(tap));
        let s = sim.add("sink", Box::new(Sink::new()));
        sim.connect(Endpoint { component: t, port: WIRE }, Endpoint { component: s, port: WIRE }).unwrap();
        let pacing = crate::engine::Pacing {
            idle: Some(std::time::Duration::from_millis(20)),
            late_after: Duration::from_ms(1),
            stop: None,
            say: false,
        };
        let (_, paced) = sim.run_paced(None, &pacing).unwrap();
        assert_eq!(paced.ended_by, "idle");
        let reports = sim.reports();
        let tap = &reports[0].2;
        assert_eq!(tap.get("from_linux_frames"), Some(6.0));
        assert_eq!(tap.get("from_linux_dropped_runt"), Some(2.0));
        assert_eq!(tap.get("from_linux_dropped_oversized"), Some(1.0));
        assert_eq!(tap.get("from_linux_truncated"), Some(1.0));
        assert_eq!(tap.get("from_linux_good"), Some(1.0));
        assert_eq!(tap.get("from_linux_unknown_protocol"), Some(1.0));
        assert_eq!(reports[1].2.get("frames"), Some(3.0), "what passed reached the far end");
    }
}
