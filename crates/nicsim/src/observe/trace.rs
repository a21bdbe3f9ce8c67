//! Timelines in the Chrome trace event format (JSON), which Perfetto and
//! chrome://tracing read: one "process" per host, one "thread" per track (the bus,
//! each processor, each adapter's wire side), complete events for spans of
//! activity and instant events for arrivals. Written under a temporary name and
//! moved into place by `commit`, like a capture.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::rc::Rc;

use crate::observe::partial::PartialFile;
use crate::time::Time;

pub type SharedTrace = Rc<RefCell<Trace>>;

/// A track in the trace: a (process, thread) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackId {
    pid: u32,
    tid: u32,
}

pub struct Trace {
    out: Option<BufWriter<File>>,
    file: PartialFile,
    processes: HashMap<String, u32>,
    threads: u32,
    events: u64,
    limit: u64,
    dropped: u64,
    error: Option<String>,
}

/// Microseconds, as the format wants them, from picoseconds.
fn us(t: Time) -> f64 {
    t.ps() as f64 / 1e6
}

impl Trace {
    /// Start a trace at `path` that keeps at most `limit` events (the rest are
    /// counted, not written: a long run would give a file no viewer can open).
    pub fn create(path: &Path, limit: u64) -> Result<SharedTrace, String> {
        let (file, mut out) = PartialFile::create(path)?;
        if let Err(e) = out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n") {
            file.remove();
            return Err(file.error(e));
        }
        Ok(Rc::new(RefCell::new(Trace {
            out: Some(out),
            file,
            processes: HashMap::new(),
            threads: 0,
            events: 0,
            limit,
            dropped: 0,
            error: None,
        })))
    }

    fn line(&mut self, text: &str) {
        if let Some(out) = &mut self.out {
            if let Err(e) = out.write_all(text.as_bytes()) {
                self.error.get_or_insert(e.to_string());
            }
        }
    }

    /// A named track of a named process, announced in the trace's metadata.
    pub fn track(&mut self, process: &str, thread: &str) -> TrackId {
        let next = self.processes.len() as u32 + 1;
        let pid = *self.processes.entry(process.to_string()).or_insert(next);
        if pid == next {
            let meta = format!("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"args\":{{\"name\":{}}}}},\n", json(process));
            self.line(&meta);
        }
        self.threads += 1;
        let tid = self.threads;
        let meta =
            format!("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}},\n", json(thread));
        self.line(&meta);
        let sort =
            format!("{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}},\n");
        self.line(&sort);
        TrackId { pid, tid }
    }

    fn admit(&mut self) -> bool {
        if self.events >= self.limit {
            self.dropped += 1;
            return false;
        }
        self.events += 1;
        true
    }

    /// Activity on `track` from `start` to `end`, with numeric details.
    pub fn span(&mut self, track: TrackId, name: &str, start: Time, end: Time, args: &[(&str, u64)]) {
        if !self.admit() {
            return;
        }
        let args: Vec<String> = args.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        let ev = format!(
            "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"name\":{},\"ts\":{:.6},\"dur\":{:.6},\"args\":{{{}}}}},\n",
            track.pid,
            track.tid,
            json(name),
            us(start),
            us(end) - us(start),
            args.join(",")
        );
        self.line(&ev);
    }

    /// A moment on `track` (a frame's arrival, an interrupt).
    pub fn instant(&mut self, track: TrackId, name: &str, at: Time) {
        if !self.admit() {
            return;
        }
        let ev = format!(
            "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{},\"name\":{},\"ts\":{:.6}}},\n",
            track.pid,
            track.tid,
            json(name),
            us(at)
        );
        self.line(&ev);
    }

    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Whether a write has failed (the disk is full, say): the run stops.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Give up the file: close it and remove what was written.
    pub fn discard(&mut self) {
        if self.out.take().is_some() {
            self.file.remove();
        }
    }

    /// Close the event list and move the file into place; on failure remove it.
    pub fn commit(&mut self) -> Result<(), String> {
        let dropped = self.dropped;
        self.line(&format!("{{\"ph\":\"M\",\"name\":\"nicsim\",\"pid\":0,\"args\":{{\"events_not_written\":{dropped}}}}}\n]}}\n"));
        if let Some(e) = self.error.take() {
            self.discard();
            return Err(self.file.error(e));
        }
        match self.out.take() {
            Some(out) => self.file.finish(out),
            None => Ok(()), // discarded
        }
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            self.file.remove();
        }
    }
}

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_valid_json_with_named_tracks_and_a_limit() {
        let dir = std::env::temp_dir().join(format!("nicsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        let trace = Trace::create(&path, 2).unwrap();
        {
            let mut t = trace.borrow_mut();
            let bus = t.track("server \"a\"", "bus");
            t.span(bus, "rx data", Time(1_000_000), Time(3_500_000), &[("clocks", 83)]);
            t.instant(bus, "frame", Time(2_000_000));
            t.instant(bus, "over the limit", Time(2_000_000));
            assert!(!path.exists(), "nothing in place before commit");
            t.commit().unwrap();
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let evs = v["traceEvents"].as_array().unwrap();
        let span = evs.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(span["ts"], 1.0);
        assert_eq!(span["dur"], 2.5);
        assert_eq!(span["args"]["clocks"], 83);
        assert!(evs.iter().any(|e| e["args"]["name"] == "server \"a\""));
        assert_eq!(evs.last().unwrap()["args"]["events_not_written"], 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
