//! What a session's application does when it runs: it reads what arrived,
//! answers or asks again, and writes what it owes. A file session reads all
//! there is and writes a whole request or answer in one call. A TTCP end on a
//! modelled host makes one read or write call of its message size a step, as
//! its process does, so frames that come in between two calls are taken up (and
//! answered) between them; on an ideal host it makes every call it can at once.

use super::{App, FileApp, Sessions, TtcpApp, Work};
use crate::stack::{Sock, Stack};
use crate::time::Time;
use crate::wire::endpoint::pattern_into;
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
            self.stack.poll_into(now, &mut frames);
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
        let more = match &s.app {
            App::Ttcp(t) => self.stack.readable(s.sock) > 0 || t.owed() > 0 && self.stack.send_room(s.sock) > 0,
            App::File(_) => false,
        };
        if more {
            self.make_due(i);
        }
    }

    /// Session `i`'s application acts on what arrived and what was acknowledged:
    /// one call of a TTCP end when `one_call`, else all it can. Returns whether
    /// it did something (the stack may then have more to send).
    #[allow(clippy::vec_box, reason = "frames travel boxed from the stack to the wire: a move is a pointer")]
    pub(super) fn act(&mut self, i: usize, now: Time, measuring: bool, work: &mut Work, frames: &mut Vec<Box<Frame>>) -> bool {
        let s = &mut self.sessions[i];
        let queue = self.stack.send_queue(s.sock);
        if measuring {
            self.measured_acked += s.queued.saturating_sub(queue) as u64;
        }
        let (stack, sock) = (&mut self.stack, s.sock);
        let (n, acted) = match &mut s.app {
            App::File(f) => {
                let (n, acted, think) = Self::act_file(stack, sock, f, now, measuring, work);
                if let Some(think) = think {
                    self.asks_waiting += s.ask_at.is_none() as usize;
                    s.ask_at = Some(now + think);
                }
                (n, acted)
            }
            App::Ttcp(t) => Self::act_ttcp(stack, sock, t, self.one_call, now, work, frames),
        };
        if measuring {
            self.measured_read += n;
        }
        s.queued = self.stack.send_queue(s.sock);
        acted | Self::end_stream(&mut self.stack, s, now)
    }

    /// A file session reads all there is and writes what it owes as the socket
    /// takes it. Returns the bytes read, whether it did something, and the
    /// think time before it asks again.
    fn act_file(
        stack: &mut Stack,
        sock: Sock,
        f: &mut FileApp,
        now: Time,
        measuring: bool,
        work: &mut Work,
    ) -> (u64, bool, Option<crate::time::Duration>) {
        let n = stack.drain(sock, usize::MAX, |bytes| f.take(bytes)) as u64;
        let reply = f.turn(now, measuring);
        work.requests += reply.writes;
        let mut acted = n > 0;
        while f.owed() > 0 {
            // The pattern's bytes are made as segments take them.
            let n = stack.send_made(sock, f.next_len(stack.send_room(sock)), pattern_into, f.sent());
            if n == 0 {
                break;
            }
            f.wrote(n);
            acted = true;
        }
        (n, acted, reply.think)
    }

    /// A TTCP end reads, or writes the stream's next bytes: one call of its
    /// message size when `one_call`, else all it can. Returns the bytes read
    /// and whether it did something.
    #[allow(clippy::vec_box, reason = "frames travel boxed from the stack to the wire: a move is a pointer")]
    fn act_ttcp(
        stack: &mut Stack,
        sock: Sock,
        t: &mut TtcpApp,
        one_call: bool,
        now: Time,
        work: &mut Work,
        frames: &mut Vec<Box<Frame>>,
    ) -> (u64, bool) {
        let most = if one_call { t.left_of_call() } else { usize::MAX };
        let n = stack.drain(sock, most, |bytes| work.requests += t.through(bytes)) as u64;
        work.copied += n;
        let mut acted = n > 0;
        // Without Nagle a stack outputs at every send call, so each call's
        // bytes leave as their own segment when the window allows.
        let per_call = !stack.nagle(sock);
        // A call reads or writes, not both.
        while t.owed() > 0 && !(one_call && n > 0) {
            // The stream is laid out 64 KB at a time.
            let room = stack.send_room(sock).min(65_536);
            let room = if per_call || one_call { room.min(t.left_of_call()) } else { room };
            // The stream's bytes are made in the socket's buffer itself.
            let mut calls = 0;
            let sent = stack.send_with(sock, room.min(t.owed() as usize), |buf| calls += t.write(buf));
            work.requests += calls;
            work.copied += sent as u64;
            if per_call && sent > 0 {
                stack.poll_into(now, frames);
            }
            if sent == 0 {
                break;
            }
            acted = true;
            if one_call {
                break;
            }
        }
        (n, acted)
    }
}
