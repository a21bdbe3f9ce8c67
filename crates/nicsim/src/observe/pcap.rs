//! pcap capture as a wrapper around a link: every frame the wrapped component
//! delivers is recorded, stamped with the simulated time its last bit reaches the
//! far end, in nanosecond-resolution pcap that Wireshark reads.
//!
//! A link schedules deliveries ahead of time and its two directions interleave, so
//! records wait in a small reorder heap and are written once simulated time has
//! passed them: nothing scheduled later can be due earlier than "now".

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::observe::Report;
use crate::time::Time;

/// One pcap file that several wrapped links may share. It is written under a
/// temporary name and moved into place only by `commit`, so a failed run leaves
/// no half-written capture behind.
pub struct CaptureFile {
    writer: Option<PcapWriter<BufWriter<File>>>,
    temp: PathBuf,
    path: PathBuf,
    pending: BinaryHeap<Reverse<(Time, u64, Vec<u8>)>>,
    next: u64,
    written: u64,
    error: Option<String>,
}

impl CaptureFile {
    pub fn create(path: &Path) -> Result<Rc<RefCell<CaptureFile>>, String> {
        let name = path.file_name().ok_or_else(|| format!("{}: not a file name", path.display()))?;
        let temp = path.with_file_name(format!(".{}.partial", name.to_string_lossy()));
        let file = File::create(&temp).map_err(|e| format!("{}: {e}", path.display()))?;
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: 65_535,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Rc::new(RefCell::new(CaptureFile {
            writer: Some(writer),
            temp,
            path: path.to_path_buf(),
            pending: BinaryHeap::new(),
            next: 0,
            written: 0,
            error: None,
        })))
    }

    fn record(&mut self, at: Time, bytes: Vec<u8>) {
        self.pending.push(Reverse((at, self.next, bytes)));
        self.next += 1;
    }

    /// Write every record due at or before `now`.
    fn flush_until(&mut self, now: Time) {
        while self.pending.peek().is_some_and(|Reverse((t, _, _))| *t <= now) {
            let Reverse((t, _, bytes)) = self.pending.pop().expect("peeked");
            let ts = std::time::Duration::from_nanos(t.ps() / 1_000);
            if let (Some(w), None) = (self.writer.as_mut(), &self.error) {
                if let Err(e) = w.write_packet(&PcapPacket::new(ts, bytes.len() as u32, &bytes)) {
                    self.error = Some(format!("{}: {e}", self.path.display()));
                }
                self.written += 1;
            }
        }
    }

    pub fn frames_written(&self) -> u64 {
        self.written
    }

    /// Write what was delivered by `end`, close, and move the file into place.
    pub fn commit(&mut self, end: Time) -> Result<(), String> {
        self.flush_until(end);
        self.pending.clear();
        let Some(w) = self.writer.take() else {
            return Ok(());
        };
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let file = w.into_writer().into_inner().map_err(|e| format!("{}: {e}", self.path.display()))?;
        file.sync_all().map_err(|e| format!("{}: {e}", self.path.display()))?;
        std::fs::rename(&self.temp, &self.path).map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

impl Drop for CaptureFile {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// A component whose delivered frames are captured.
pub struct Captured {
    inner: Box<dyn Component>,
    file: Rc<RefCell<CaptureFile>>,
}

impl Captured {
    pub fn new(inner: Box<dyn Component>, file: Rc<RefCell<CaptureFile>>) -> Self {
        Captured { inner, file }
    }
}

impl Component for Captured {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.inner.start(ctx)
    }
    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        let mark = ctx.sent().len();
        self.inner.handle(port, msg, ctx);
        let mut file = self.file.borrow_mut();
        for out in &ctx.sent()[mark..] {
            if let (Msg::Frame(frame), Some(_)) = (&out.msg, out.port) {
                file.record(out.at, frame.bytes.clone());
            }
        }
        file.flush_until(ctx.now());
    }
    fn finish(&mut self, end: Time) -> Result<(), String> {
        self.inner.finish(end)
    }
    fn report(&self, end: Time) -> Report {
        self.inner.report(end)
    }
}
