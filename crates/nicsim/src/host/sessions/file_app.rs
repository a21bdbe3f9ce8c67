//! A file session's application, the same over the host's stack
//! (`host::sessions`) and over an offload engine (`host::offload`): it asks for
//! a file and reads it whole before asking again (after a think time), or
//! answers each whole request with a file. What it writes follows the pattern
//! of `wire::endpoint`, so every byte read is checked. The socket it uses
//! takes its bytes as it can: a stack's as room allows, an offload engine's a
//! whole request or answer a message.

use super::{AnswerTimes, Role};
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
    /// Bytes it has to write that its socket has not taken yet.
    owed: u64,
    answers_read: u64,
    requests_answered: u64,
    bad_payload: u64,
    waits: AnswerTimes,
}

/// What the bytes read so far call for.
pub struct Reply {
    /// Writes now, of `each` bytes (owed until the socket takes them).
    pub writes: u64,
    pub each: u32,
    /// An asking session that thinks asks again this long after.
    pub think: Option<Duration>,
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
            owed: 0,
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

    pub fn asks(&self) -> bool {
        matches!(self.role, Role::Ask { .. })
    }

    /// It asks at `now`: it owes its request, whose bytes this returns.
    pub fn ask(&mut self, now: Time) -> u32 {
        let Role::Ask { request, .. } = self.role else { unreachable!("only an asking session requests") };
        self.waits.asked(now);
        self.owed += request as u64;
        request
    }

    /// Bytes read, checked against the pattern.
    pub fn take(&mut self, bytes: &[u8]) {
        self.bad_payload += !matches_pattern(self.read, bytes) as u64;
        self.read += bytes.len() as u64;
        self.partial += bytes.len() as u64;
    }

    /// What the whole requests or answers read by `now` call for: an answer to
    /// each request, the next request after each answer, or the think time
    /// before it; answers read are timed when `measuring`.
    pub fn turn(&mut self, now: Time, measuring: bool) -> Reply {
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
        self.owed += turns.writes * turns.each as u64;
        Reply { writes: turns.writes, each: turns.each, think: turns.think }
    }

    /// Bytes owed that its socket has not taken yet.
    pub fn owed(&self) -> u64 {
        self.owed
    }

    /// The next bytes it owes, at most `most` of them and 64 KB.
    pub fn next_bytes(&self, most: usize) -> &'static [u8] {
        pattern(self.sent, self.next_len(most))
    }

    /// How many of the next bytes it owes it offers at once: at most `most`, and 64 KB.
    pub fn next_len(&self, most: usize) -> usize {
        most.min(self.owed as usize).min(65_536)
    }

    /// The stream offset of the next byte it writes.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Its socket took `n` of the bytes it owes.
    pub fn wrote(&mut self, n: usize) {
        self.sent += n as u64;
        self.owed -= n as u64;
    }

    /// The next `len` bytes it owes, written whole (an offload engine's message).
    pub fn write_whole(&mut self, len: u32) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(len as usize);
        while bytes.len() < len as usize {
            let piece = self.next_bytes(len as usize - bytes.len());
            bytes.extend_from_slice(piece);
            self.wrote(piece.len());
        }
        bytes
    }

    pub fn answers_read(&self) -> u64 {
        self.answers_read
    }

    pub fn requests_answered(&self) -> u64 {
        self.requests_answered
    }

    pub fn bad_payload(&self) -> u64 {
        self.bad_payload
    }

    pub fn waits(&self) -> &AnswerTimes {
        &self.waits
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processor::tests::us as at;

    fn asker(think: Duration) -> FileApp {
        FileApp::new(&Role::Ask { ip: [10, 0, 0, 1], port: 80, request: 64, answer: 1000, think, start: Duration::ZERO })
    }

    #[test]
    fn an_answer_read_whole_calls_for_the_next_request_and_is_timed() {
        let mut server = FileApp::new(&Role::Answer { request: 64, answer: 1000 });
        let mut client = asker(Duration::ZERO);
        assert_eq!(client.ask(at(0)), 64);
        let request = client.write_whole(64);
        assert_eq!(client.owed(), 0);
        server.take(&request[..10]);
        assert_eq!(server.turn(at(1), true).writes, 0, "a request in part is not answered");
        server.take(&request[10..]);
        let r = server.turn(at(2), true);
        assert_eq!((r.writes, r.each, server.owed()), (1, 1000, 1000));
        let answer = server.write_whole(1000);
        client.take(&answer[..600]);
        client.take(&answer[600..]);
        let r = client.turn(at(30), true);
        assert_eq!((r.writes, client.owed(), client.answers_read()), (1, 64, 1));
        assert_eq!((client.bad_payload(), server.bad_payload(), server.requests_answered()), (0, 0, 1));
        let mut rep = Report::default();
        FileApp::report(std::iter::once(&client), &mut rep);
        assert_eq!(rep.get("mean_answer_us"), Some(30.0));
    }

    #[test]
    fn a_thinking_asker_owes_nothing_until_it_asks_again() {
        let mut client = asker(Duration::from_ms(5));
        client.ask(at(0));
        client.write_whole(64);
        let mut server = FileApp::new(&Role::Answer { request: 64, answer: 1000 });
        server.take(pattern(0, 64));
        server.turn(at(1), false);
        client.take(&server.write_whole(1000));
        let r = client.turn(at(10), false);
        assert_eq!((r.writes, r.think, client.owed()), (0, Some(Duration::from_ms(5)), 0));
    }

    #[test]
    fn bytes_off_the_pattern_are_counted() {
        let mut server = FileApp::new(&Role::Answer { request: 64, answer: 1000 });
        server.take(&[0xAA; 64]);
        assert_eq!(server.bad_payload(), 1);
    }

    #[test]
    fn a_stack_takes_what_is_owed_in_pieces() {
        let mut server = FileApp::new(&Role::Answer { request: 10, answer: 100_000 });
        server.take(pattern(0, 10));
        server.turn(at(0), false);
        let first = server.next_bytes(usize::MAX).len();
        assert_eq!(first, 65_536, "a piece is at most 64 KB");
        server.wrote(1000);
        assert_eq!(server.owed(), 99_000);
        assert_eq!(server.next_bytes(500), pattern(1000, 500));
    }
}
