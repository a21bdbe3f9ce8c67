//! pcap capture of links (`link::Captured` wraps a link): every frame a captured link
//! delivers is recorded, stamped with the simulated time its last bit reaches the
//! far end, in nanosecond-resolution pcap that Wireshark reads. A file named
//! `*.pcapng` is written as pcapng instead, with one interface per captured link
//! (named after it) and each frame's direction, so a capture of several links
//! tells them apart.
//!
//! A link schedules deliveries ahead of time and its two directions interleave, so
//! records wait in a small reorder heap and are written once simulated time has
//! passed them: nothing scheduled later can be due earlier than "now".

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::rc::Rc;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::interface_statistics::{InterfaceStatisticsBlock, InterfaceStatisticsOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::observe::partial::PartialFile;
use crate::time::Time;

const SNAPLEN: u32 = 65_535;

/// pcapng's packet flags: the direction bits (RFC draft, "epb_flags").
const INBOUND: u32 = 0b01;
const OUTBOUND: u32 = 0b10;

enum Writer {
    Pcap(PcapWriter<BufWriter<File>>),
    PcapNg(PcapNgWriter<BufWriter<File>>),
}

/// A link as a pcapng interface: its name, its two ends and its rate.
pub struct LinkInterface<'a> {
    pub name: &'a str,
    pub a: String,
    pub b: String,
    pub rate_bps: u64,
}

/// A captured link's frames: written, and lost by the link (known at the run's end).
#[derive(Clone, Copy, Default)]
struct Counts {
    captured: u64,
    lost: u64,
}

/// A record waiting for its time: when, in what order, on which interface, and
/// whether it went from end a to end b.
type Record = (Time, u64, u32, bool, Vec<u8>);

/// One capture file that several wrapped links may share. It is written under a
/// temporary name and moved into place only by `commit`, so a failed run leaves
/// no half-written capture behind.
pub struct CaptureFile {
    writer: Option<Writer>,
    file: PartialFile,
    interfaces: Vec<Counts>,
    pending: BinaryHeap<Reverse<Record>>,
    next: u64,
    written: u64,
    /// The most frames to write (0: no limit), and those past it.
    limit: u64,
    over_limit: u64,
    error: Option<String>,
}

impl CaptureFile {
    /// pcapng when the file name ends in `.pcapng`, pcap otherwise; at most
    /// `limit` frames, the first (0: every frame).
    pub fn create(path: &Path, limit: u64) -> Result<Rc<RefCell<CaptureFile>>, String> {
        let (file, out) = PartialFile::create(path)?;
        let ng = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pcapng"));
        let writer = if ng { PcapNgWriter::new(out).map(Writer::PcapNg) } else { PcapWriter::with_header(out, header()).map(Writer::Pcap) };
        let mut capture = CaptureFile {
            writer: None,
            file,
            interfaces: Vec::new(),
            pending: BinaryHeap::new(),
            next: 0,
            written: 0,
            limit,
            over_limit: 0,
            error: None,
        };
        capture.writer = Some(writer.map_err(|e| capture.message(os_error(e)))?);
        Ok(Rc::new(RefCell::new(capture)))
    }

    fn message(&self, e: impl std::fmt::Display) -> String {
        self.file.error(e)
    }

    /// Describe a captured link (pcapng only: pcap has no interfaces); returns
    /// the number its records carry. Called for every link before the run.
    pub fn add_link(&mut self, link: LinkInterface) -> Result<u32, String> {
        let id = self.interfaces.len() as u32;
        self.interfaces.push(Counts::default());
        if let Some(Writer::PcapNg(w)) = &mut self.writer {
            let options = vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(link.name.to_string())),
                InterfaceDescriptionOption::IfDescription(Cow::Owned(format!(
                    "nicsim link {:?}: a = {}, b = {}; outbound is a to b",
                    link.name, link.a, link.b
                ))),
                InterfaceDescriptionOption::IfSpeed(link.rate_bps),
                // The records' times are nanoseconds (pcapng's default is microseconds).
                InterfaceDescriptionOption::IfTsResol(9),
            ];
            let idb = InterfaceDescriptionBlock { linktype: DataLink::ETHERNET, snaplen: SNAPLEN, options };
            if let Err(e) = w.write_pcapng_block(idb) {
                return Err(self.message(os_error(e)));
            }
        }
        Ok(id)
    }

    /// Frame `bytes` reached a link's far end at `at`, in the direction a to b or back.
    pub fn record(&mut self, at: Time, interface: u32, a_to_b: bool, bytes: Vec<u8>) {
        self.pending.push(Reverse((at, self.next, interface, a_to_b, bytes)));
        self.next += 1;
    }

    /// Write every record due at or before `now`.
    pub fn flush_until(&mut self, now: Time) {
        while self.pending.peek().is_some_and(|Reverse((t, ..))| *t <= now) {
            let Reverse((t, _, interface, a_to_b, bytes)) = self.pending.pop().expect("peeked");
            if self.limit > 0 && self.written >= self.limit {
                self.over_limit += 1;
                continue;
            }
            let ts = std::time::Duration::from_nanos(t.ps() / 1_000);
            let (Some(w), None) = (self.writer.as_mut(), &self.error) else { continue };
            let written = match w {
                Writer::Pcap(w) => w.write_packet(&PcapPacket::new(ts, bytes.len() as u32, &bytes)),
                Writer::PcapNg(w) => w.write_pcapng_block(EnhancedPacketBlock {
                    interface_id: interface,
                    timestamp: ts,
                    original_len: bytes.len() as u32,
                    data: Cow::Borrowed(&bytes),
                    options: vec![EnhancedPacketOption::Flags(if a_to_b { OUTBOUND } else { INBOUND })],
                }),
            };
            if let Err(e) = written {
                self.error = Some(self.message(os_error(e)));
            }
            self.written += 1;
            self.interfaces[interface as usize].captured += 1;
        }
    }

    pub fn frames_written(&self) -> u64 {
        self.written
    }

    /// Frames delivered past the limit, not written.
    pub fn frames_over_limit(&self) -> u64 {
        self.over_limit
    }

    /// Whether a write has failed (the disk is full, say): the run stops.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Give up the file: close it and remove what was written.
    pub fn discard(&mut self) {
        if self.writer.take().is_some() {
            self.file.remove();
        }
    }

    /// Interface `interface`'s link lost `frames` (its queues, its impairment).
    pub fn lost(&mut self, interface: u32, frames: u64) {
        self.interfaces[interface as usize].lost = frames;
    }

    /// Write what was delivered by `end`, then (pcapng) each link's statistics:
    /// frames captured and frames its link lost, which Wireshark shows per
    /// interface. Close, and move the file into place.
    pub fn commit(&mut self, end: Time) -> Result<(), String> {
        self.flush_until(end);
        self.pending.clear();
        if let (Some(Writer::PcapNg(w)), None) = (self.writer.as_mut(), &self.error) {
            let ns = end.ps() / 1_000;
            for (id, &Counts { captured, lost }) in self.interfaces.iter().enumerate() {
                let options = vec![
                    InterfaceStatisticsOption::IsbStartTime(0),
                    InterfaceStatisticsOption::IsbEndTime(ns),
                    InterfaceStatisticsOption::IsbIfRecv(captured),
                    InterfaceStatisticsOption::IsbIfDrop(lost),
                ];
                if let Err(e) = w.write_pcapng_block(InterfaceStatisticsBlock { interface_id: id as u32, timestamp: ns, options }) {
                    self.error = Some(self.message(os_error(e)));
                    break;
                }
            }
        }
        if let Some(e) = self.error.take() {
            self.discard();
            return Err(e);
        }
        let Some(w) = self.writer.take() else {
            return Ok(());
        };
        self.file.finish(match w {
            Writer::Pcap(w) => w.into_writer(),
            Writer::PcapNg(w) => w.into_inner(),
        })
    }
}

/// The operating system's words for a write that failed ("No space left on
/// device"), where pcap-file says only "Error reading bytes".
fn os_error(e: pcap_file::PcapError) -> String {
    match e {
        pcap_file::PcapError::IoError(io) => io.to_string(),
        other => other.to_string(),
    }
}

fn header() -> PcapHeader {
    PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: SNAPLEN,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
    }
}

impl Drop for CaptureFile {
    fn drop(&mut self) {
        if self.writer.is_some() {
            self.file.remove();
        }
    }
}
