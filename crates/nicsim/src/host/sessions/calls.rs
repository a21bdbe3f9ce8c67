//! What a session's application does when it runs: it reads what arrived,
//! answers or asks again, and writes what it owes. A file session reads all
//! there is and writes a whole request or answer in one call. A TTCP end on a
//! modelled host makes one read or write call of its message size a step, as
//! its process does, so frames that come in between two calls are taken up (and
//! answered) between them; on an ideal host it makes every call it can at once.

use super::{Role, Sessions, Work};
use crate::time::Time;
use crate::wire::endpoint::{matches_pattern, pattern};
use crate::wire::Frame;

impl Sessions {
    /// Make TTCP ends take one call a step (a modelled host's applications).
    pub fn one_call_a_step(&mut self) {
        self.one_call = true;
    }

    /// Whether some application has a call to make.
    pub fn calls_due(&self) -> bool {
        !self.due.is_empty()
    }

    /// The next application in turn makes its next call; what it sends, and
    /// what the stack then sends, goes out.
    pub fn call(&mut self, now: Time, measuring: bool) -> Work {
        let (mut work, mut frames) = (Work::default(), Vec::new());
        if self.next_call(now, measuring, &mut work, &mut frames) {
            frames.extend(self.stack.poll(now));
        }
        for mut f in frames {
            f.meta.created = now;
            self.route(f, &mut work.out);
        }
        work
    }

    /// The next application in turn, if any, makes its next call; returns
    /// whether it did something.
    #[allow(clippy::vec_box, reason = "frames travel boxed from the stack to the wire: a move is a pointer")]
    pub(super) fn next_call(&mut self, now: Time, measuring: bool, work: &mut Work, frames: &mut Vec<Box<Frame>>) -> bool {
        let Some(i) = self.next_due() else { return false };
        let acted = self.act(i, now, measuring, work, frames);
        self.due_again(i);
        acted
    }

    pub(super) fn make_due(&mut self, i: usize) {
        if !std::mem::replace(&mut self.is_due[i], true) {
            self.due.push_back(i);
        }
    }

    fn next_due(&mut self) -> Option<usize> {
        let i = self.due.pop_front()?;
        self.is_due[i] = false;
        Some(i)
    }

    /// Session `i` made a call: it waits its turn again if it has another to make.
    fn due_again(&mut self, i: usize) {
        let s = &self.sessions[i];
        let more = s.stream.is_some() && (self.stack.readable(s.sock) > 0 || s.owed > 0 && self.stack.send_room(s.sock) > 0);
        if more {
            self.make_due(i);
        }
    }

    /// Session `i`'s application acts on what arrived and what was acknowledged:
    /// one call of a TTCP end when `one_call`, else all it can. Returns whether
    /// it did something (the stack may then have more to send).
    #[allow(clippy::vec_box, reason = "frames travel boxed from the stack to the wire: a move is a pointer")]
    pub(super) fn act(&mut self, i: usize, now: Time, measuring: bool, work: &mut Work, frames: &mut Vec<Box<Frame>>) -> bool {
        let one_call = self.one_call;
        let s = &mut self.sessions[i];
        let queue = self.stack.send_queue(s.sock);
        if measuring {
            self.measured_acked += s.queued.saturating_sub(queue) as u64;
        }
        let most = match &s.stream {
            Some(st) if one_call => st.message as usize - (st.bytes % st.message as u64) as usize,
            _ => usize::MAX,
        };
        let (mut read, mut bad, stream) = (s.read, false, &mut s.stream);
        let n = self.stack.drain(s.sock, most, |bytes| {
            match stream {
                Some(st) => work.requests += st.through(bytes),
                None => bad |= !matches_pattern(read, bytes),
            }
            read += bytes.len() as u64;
        }) as u64;
        self.bad_payload += bad as u64;
        if s.stream.is_some() {
            work.copied += n;
        }
        let mut acted = n > 0;
        s.read += n;
        s.partial += n;
        if measuring {
            self.measured_read += n;
        }
        let turns = s.cfg.role.turns(&mut s.partial);
        match s.cfg.role {
            Role::Answer { .. } => self.requests_answered += turns.whole,
            _ => self.answers_read += turns.whole,
        }
        if matches!(s.cfg.role, Role::Ask { .. }) && turns.whole > 0 {
            s.waits.answered(now, measuring);
            if turns.writes > 0 {
                s.waits.asked(now);
            }
        }
        s.owed += turns.writes * turns.each as u64;
        work.requests += turns.writes;
        if let Some(think) = turns.think {
            self.asks_waiting += s.ask_at.is_none() as usize;
            s.ask_at = Some(now + think);
        }
        // Without Nagle a stack outputs at every send call, so each call's
        // bytes leave as their own segment when the window allows.
        let per_call = !self.stack.nagle(s.sock);
        // A TTCP end's call reads or writes, not both.
        let calls = one_call && s.stream.is_some();
        while s.owed > 0 && !(calls && n > 0) {
            // The pattern is laid out 64 KB at a time.
            let room = self.stack.send_room(s.sock).min(s.owed as usize).min(65_536);
            let n = match &mut s.stream {
                Some(st) => {
                    let m = st.message as usize;
                    let room = if per_call || calls { room.min(m - (st.bytes % m as u64) as usize) } else { room };
                    let data = st.next(room);
                    let n = self.stack.send(s.sock, &data);
                    work.requests += st.through(&data[..n]);
                    work.copied += n as u64;
                    if per_call && n > 0 {
                        frames.extend(self.stack.poll(now));
                    }
                    n
                }
                None => self.stack.send(s.sock, pattern(s.sent, room)),
            };
            if n == 0 {
                break;
            }
            s.sent += n as u64;
            s.owed -= n as u64;
            acted = true;
            if calls {
                break;
            }
        }
        s.queued = self.stack.send_queue(s.sock);
        acted | Self::end_stream(&mut self.stack, s, now)
    }
}
