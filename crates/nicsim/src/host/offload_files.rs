//! A file session on a TCP offload engine, as the host's application sees it:
//! it asks for a file and reads it whole before asking again (after a think
//! time), or answers each whole request with a file. Bytes follow the pattern
//! of `wire::endpoint`, so every byte read is checked, as over the host's own
//! stack (`host::sessions`).

use crate::host::sessions::{AnswerTimes, Role};
use crate::observe::Report;
use crate::time::{Duration, Time};
use crate::wire::endpoint::{matches_pattern, pattern};

pub struct FileApp {
    role: Role,
    /// When an asking session opens its socket and asks first.
    pub start: Duration,
    pub opened: bool,
    /// Bytes written and read so far, and of the request or answer now arriving.
    sent: u64,
    read: u64,
    partial: u64,
    answers_read: u64,
    requests_answered: u64,
    bad_payload: u64,
    waits: AnswerTimes,
}

impl FileApp {
    pub fn new(role: &Role) -> FileApp {
        let start = match *role {
            Role::Ask { start, .. } => start,
            Role::Answer { .. } => Duration::ZERO,
            _ => unreachable!("a TTCP end is not a file session"),
        };
        FileApp {
            role: role.clone(),
            start,
            opened: false,
            sent: 0,
            read: 0,
            partial: 0,
            answers_read: 0,
            requests_answered: 0,
            bad_payload: 0,
            waits: AnswerTimes::default(),
        }
    }

    /// The receive buffer it posts: a request, or an answer (at most 64 KB).
    pub fn buffer(role: &Role) -> u32 {
        match *role {
            Role::Ask { answer, .. } => answer.min(65_536),
            Role::Answer { request, .. } => request,
            _ => unreachable!("a TTCP end is not a file session"),
        }
    }

    /// The next `len` bytes of what it writes.
    fn next(&mut self, len: u32) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(len as usize);
        while bytes.len() < len as usize {
            let n = (len as usize - bytes.len()).min(65_536);
            bytes.extend_from_slice(pattern(self.sent + bytes.len() as u64, n));
        }
        self.sent += len as u64;
        bytes
    }

    pub fn asks(&self) -> bool {
        matches!(self.role, Role::Ask { .. })
    }

    /// The request it makes at `now`.
    pub fn request(&mut self, now: Time) -> Vec<u8> {
        let Role::Ask { request, .. } = self.role else { unreachable!("only an asking session requests") };
        self.waits.asked(now);
        self.next(request)
    }

    /// Bytes read by `now`: what it writes in reply (an answer to each whole
    /// request, the next request after each whole answer), or the think time
    /// after which it asks again; answers read are timed when `measuring`.
    pub fn read(&mut self, bytes: &[u8], now: Time, measuring: bool) -> (Vec<Vec<u8>>, Option<Duration>) {
        self.bad_payload += !matches_pattern(self.read, bytes) as u64;
        self.read += bytes.len() as u64;
        self.partial += bytes.len() as u64;
        let turns = self.role.turns(&mut self.partial);
        if self.asks() {
            self.answers_read += turns.whole;
            if turns.whole > 0 {
                self.waits.answered(now, measuring);
                if turns.writes > 0 {
                    self.waits.asked(now);
                }
            }
        } else {
            self.requests_answered += turns.whole;
        }
        let replies = (0..turns.writes).map(|_| self.next(turns.each)).collect();
        (replies, turns.think)
    }

    /// The sessions' figures, named as the host stack's are (none without sessions).
    pub fn report<'a>(apps: impl Iterator<Item = &'a FileApp> + Clone, r: &mut Report) {
        if apps.clone().next().is_none() {
            return;
        }
        if apps.clone().any(|a| a.asks()) {
            r.count("answers_read", apps.clone().map(|a| a.answers_read).sum());
            AnswerTimes::report(apps.clone().map(|a| &a.waits), r);
        }
        if apps.clone().any(|a| !a.asks()) {
            r.count("requests_answered", apps.clone().map(|a| a.requests_answered).sum());
        }
        r.count("tcp_bad_payload", apps.map(|a| a.bad_payload).sum());
    }
}
