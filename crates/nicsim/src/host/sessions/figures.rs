//! What the sessions report: application bytes and requests, the TTCP
//! transfer, and the stack's TCP counts.

use super::{Role, Sessions};
use crate::host::stream::Stream;
use crate::observe::Report;
use crate::stack::tally::Tally;
use crate::stack::Stack;
use crate::time::Time;

impl Sessions {
    pub fn report(&self, r: &mut Report, seconds: f64, end: Time) {
        let rate = |b: u64| if seconds > 0.0 { b as f64 / seconds } else { 0.0 };
        let asks = self.ncp.asks() || self.sessions.iter().any(|s| matches!(s.cfg.role, Role::Ask { .. }));
        let answers = self.ncp.answers() || self.sessions.iter().any(|s| matches!(s.cfg.role, Role::Answer { .. }));
        let files = self.sessions.iter().filter_map(|s| s.file());
        if asks {
            r.count("answers_read", self.answers_read() + self.ncp.answers_read);
            super::AnswerTimes::report(files.clone().map(|f| f.waits()).chain(self.ncp.waits()), r);
        }
        if answers {
            r.count("requests_answered", self.requests_answered() + self.ncp.requests_answered);
        }
        // What NCP reads move counts as TCP's does: the application's bytes.
        let (read, sent) = (self.measured_read + self.ncp.measured_read, self.measured_acked + self.ncp.measured_sent);
        r.count("app_received_bytes", read);
        r.count("app_sent_bytes", sent);
        r.real("app_received_mbytes_per_s", rate(read) / 1e6);
        r.real("app_sent_mbytes_per_s", rate(sent) / 1e6);
        r.real("app_goodput_mbps", rate(read + sent) * 8.0 / 1e6);
        self.ncp.report(r);
        let streams: Vec<&Stream> = self.sessions.iter().filter_map(|s| s.stream()).collect();
        if !streams.is_empty() {
            r.count("ttcp_bytes", streams.iter().map(|s| s.bytes).sum());
            r.count("transfer_complete", streams.iter().all(|s| s.done.is_some()) as u64);
            r.count("ttcp_messages", streams.iter().map(|s| s.bytes.div_ceil(s.message as u64)).sum());
            r.count("ttcp_digest48", streams[0].digest48());
        }
        let t = &self.stack.tally;
        r.count("tcp_retransmits", t.retransmits);
        r.count("tcp_out_of_order", t.out_of_order);
        r.count("tcp_bad_payload", self.bad_payload());
        r.count("tcp_connections", t.connections);
        r.count("tcp_data_out", t.data_out)
            .count("tcp_data_in", t.data_in)
            .count("tcp_acks_out", t.acks_out)
            .count("tcp_acks_in", t.acks_in);
        self.stack.report_progress(r, end);
    }

    /// The TTCP end: its stream, whether it sends, the counts of its
    /// connection's frames and its port.
    pub fn ttcp(&self) -> Option<(&Stream, bool, &Tally, u16)> {
        let s = self.sessions.iter().find(|s| s.stream().is_some())?;
        let tally = self.stack.watched.as_ref().unwrap_or(&self.stack.tally);
        Some((s.stream()?, matches!(s.cfg.role, Role::Send { .. }), tally, s.cfg.port))
    }

    /// The XXH128 of the TTCP stream, for the report's text.
    pub fn text(&self) -> Vec<(&'static str, String)> {
        self.sessions.iter().find_map(|s| s.stream()).map(|st| vec![("ttcp_xxh128", st.xxh128_hex())]).unwrap_or_default()
    }

    /// Whole answers the asking file sessions over TCP read.
    pub fn answers_read(&self) -> u64 {
        self.sessions.iter().filter_map(|s| s.file()).map(|f| f.answers_read()).sum()
    }

    /// Whole requests the answering file sessions over TCP answered.
    pub fn requests_answered(&self) -> u64 {
        self.sessions.iter().filter_map(|s| s.file()).map(|f| f.requests_answered()).sum()
    }

    /// Reads of the file sessions over TCP that were not the pattern's bytes.
    pub fn bad_payload(&self) -> u64 {
        self.sessions.iter().filter_map(|s| s.file()).map(|f| f.bad_payload()).sum()
    }

    pub fn stack(&self) -> &Stack {
        &self.stack
    }
}
