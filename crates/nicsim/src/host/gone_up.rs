//! Which of an adapter's received frames have gone up the stack. They go up in
//! ring order, whichever processor holds them, except that GRO may take a
//! flow's later segments up with an earlier one, ahead of other flows' frames
//! queued between them.

#[derive(Debug, Default)]
pub struct GoneUp {
    /// Every frame before this one has gone up.
    next: u64,
    /// Frames after `next` that went up ahead of it.
    ahead: Vec<u64>,
}

impl GoneUp {
    /// Whether frame `order` is the next to go up in ring order.
    pub fn is_next(&self, order: u64) -> bool {
        order == self.next
    }

    /// Whether frame `order` has gone up.
    pub fn has(&self, order: u64) -> bool {
        order < self.next || self.ahead.contains(&order)
    }

    /// Frame `order` went up.
    pub fn went_up(&mut self, order: u64) {
        if order != self.next {
            debug_assert!(order > self.next && !self.ahead.contains(&order), "frame {order} went up twice");
            self.ahead.push(order);
            return;
        }
        self.next += 1;
        while let Some(i) = self.ahead.iter().position(|&o| o == self.next) {
            self.ahead.swap_remove(i);
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_taken_ahead_are_passed_over_once_those_before_them_go_up() {
        let mut g = GoneUp::default();
        g.went_up(0);
        g.went_up(2);
        g.went_up(3);
        assert!(g.is_next(1) && !g.has(1) && g.has(2) && g.has(0), "1 is still to go up");
        g.went_up(1);
        assert!(g.is_next(4), "2 and 3 went up ahead of 1");
    }
}
