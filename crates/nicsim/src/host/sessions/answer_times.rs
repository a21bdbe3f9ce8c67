//! How long an asking file session waits for each answer, as its application
//! sees it: from the request handed to the socket to the answer's last byte
//! read. The same over the host's stack and over an offload engine.

use crate::observe::{Report, Waits};
use crate::time::Time;

#[derive(Debug, Default)]
pub struct AnswerTimes {
    /// When the request now outstanding was made.
    asked: Option<Time>,
    waits: Waits,
}

impl AnswerTimes {
    pub fn asked(&mut self, now: Time) {
        self.asked = Some(now);
    }

    /// A whole answer was read at `now`; counted when `measuring`.
    pub fn answered(&mut self, now: Time, measuring: bool) {
        let Some(asked) = self.asked.take() else { return };
        if measuring {
            self.waits.add(now.since(asked));
        }
    }

    /// `mean_answer_us` and `max_answer_us` over all asking sessions (none
    /// when no answer was read while measuring).
    pub fn report<'a>(all: impl Iterator<Item = &'a AnswerTimes>, r: &mut Report) {
        let mut waits = Waits::default();
        for a in all {
            waits.merge(&a.waits);
        }
        waits.report(r, "answer");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processor::tests::us as at;

    #[test]
    fn each_answer_is_timed_from_its_own_request() {
        let (mut a, mut b) = (AnswerTimes::default(), AnswerTimes::default());
        a.asked(at(0));
        a.answered(at(30), true);
        a.asked(at(30));
        a.answered(at(40), true);
        b.asked(at(5));
        b.answered(at(25), true);
        let mut r = Report::default();
        AnswerTimes::report([&a, &b].into_iter(), &mut r);
        assert_eq!(r.get("mean_answer_us"), Some(20.0));
        assert_eq!(r.get("max_answer_us"), Some(30.0));
    }

    #[test]
    fn answers_before_the_warmup_and_without_a_request_are_not_counted() {
        let mut a = AnswerTimes::default();
        a.answered(at(10), true);
        a.asked(at(10));
        a.answered(at(20), false);
        let mut r = Report::default();
        AnswerTimes::report(std::iter::once(&a), &mut r);
        assert_eq!(r.get("mean_answer_us"), None);
    }
}
