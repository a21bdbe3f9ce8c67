//! The transmit staging ring in adapter memory: store-and-forward sends copy
//! payload into it, and a region may be refilled only once every frame sent from
//! what was there before has been gathered by the MAC.

use std::collections::VecDeque;

use crate::nic::smart::layout::{A_STAGING, STAGING_HALF};
use crate::time::Time;

const RING: u64 = 2 * STAGING_HALF;

#[derive(Debug, Default)]
pub struct Staging {
    at: u64,
    /// Regions in use, oldest first: start, end, and when they are free.
    used: VecDeque<(u64, u64, Time)>,
}

impl Staging {
    /// Take `len` bytes (at most half the ring): returns their adapter address and
    /// when they are free to be written.
    pub fn take(&mut self, len: u64) -> (u64, Time) {
        assert!(len <= STAGING_HALF, "staging runs are at most half the ring");
        if self.at + len > RING {
            self.at = 0;
        }
        let (start, end) = (self.at, self.at + len);
        let mut free = Time::ZERO;
        self.used.retain(|&(a, b, t)| {
            let overlaps = a < end && start < b;
            if overlaps {
                free = free.max(t);
            }
            !overlaps
        });
        self.used.push_back((start, end, Time::ZERO));
        self.at = end;
        (A_STAGING + start, free)
    }

    /// The newest region is read by the MAC until `t`.
    pub fn used_until(&mut self, t: Time) {
        if let Some(last) = self.used.back_mut() {
            last.2 = last.2.max(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn a_region_is_free_once_what_it_held_has_gone() {
        let mut s = Staging::default();
        let at = |us| Time::ZERO + Duration::from_us(us);
        assert_eq!(s.take(60_000), (A_STAGING, Time::ZERO));
        s.used_until(at(500));
        assert_eq!(s.take(60_000), (A_STAGING + 60_000, Time::ZERO), "the other half is free");
        s.used_until(at(900));
        assert_eq!(s.take(60_000), (A_STAGING, at(500)), "wraps, and waits for the first run to be sent");
        assert_eq!(s.take(10_000).1, at(900), "overlaps the second run");
    }
}
