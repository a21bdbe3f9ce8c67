//! The request-and-answer turns of a file session, the same over the host's
//! stack (`host::sessions`) and over an offload engine (`host::offload`).

use super::Role;
use crate::time::Duration;

/// What the whole requests or answers among the bytes a file session has read
/// call for: an answer to each request; the next request after each answer, at
/// once or after the session's think time.
#[derive(Debug, Default, PartialEq)]
pub struct Turns {
    /// Whole requests (an answering session) or answers (an asking one) read.
    pub whole: u64,
    /// Writes due now, of `each` bytes.
    pub writes: u64,
    pub each: u32,
    /// An asking session that thinks asks again this long after.
    pub think: Option<Duration>,
}

impl Role {
    /// Take the whole requests or answers out of `partial` bytes read (a TTCP end has none).
    pub fn turns(&self, partial: &mut u64) -> Turns {
        let (unit, each, think) = match *self {
            Role::Answer { request, answer } => (request as u64, answer, Duration::ZERO),
            Role::Ask { request, answer, think, .. } => (answer as u64, request, think),
            Role::Send { .. } | Role::Receive { .. } => return Turns::default(),
        };
        let whole = *partial / unit;
        *partial -= whole * unit;
        match think {
            Duration::ZERO => Turns { whole, writes: whole, each, think: None },
            think => Turns { whole, writes: 0, each, think: (whole > 0).then_some(think) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(think: Duration) -> Role {
        Role::Ask { ip: [0; 4], port: 80, request: 64, answer: 1000, think, start: Duration::ZERO }
    }

    #[test]
    fn an_answering_session_answers_each_whole_request_and_keeps_the_rest() {
        let mut partial = 64 * 3 + 10;
        let t = Role::Answer { request: 64, answer: 20_000 }.turns(&mut partial);
        assert_eq!(t, Turns { whole: 3, writes: 3, each: 20_000, think: None });
        assert_eq!(partial, 10, "the start of the next request waits");
    }

    #[test]
    fn an_asking_session_asks_again_at_once_or_after_its_think_time() {
        let mut partial = 2500;
        assert_eq!(ask(Duration::ZERO).turns(&mut partial), Turns { whole: 2, writes: 2, each: 64, think: None });
        assert_eq!(partial, 500);
        let thinks = ask(Duration::from_ms(1));
        let mut partial = 2500;
        assert_eq!(thinks.turns(&mut partial), Turns { whole: 2, writes: 0, each: 64, think: Some(Duration::from_ms(1)) });
        let mut partial = 999;
        assert_eq!(thinks.turns(&mut partial).think, None, "no whole answer, no new request");
    }

    #[test]
    fn a_ttcp_end_takes_no_turns() {
        let mut partial = 1 << 20;
        assert_eq!(Role::Receive { message: 8192 }.turns(&mut partial), Turns::default());
        assert_eq!(partial, 1 << 20);
    }
}
