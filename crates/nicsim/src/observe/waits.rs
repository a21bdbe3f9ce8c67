//! A running count, sum and longest of waits, reported as a mean and a maximum.

use crate::observe::Report;
use crate::time::Duration;

#[derive(Clone, Copy, Debug, Default)]
pub struct Waits {
    count: u64,
    /// Picoseconds: a `u64` holds some 200 days of waiting.
    total_ps: u64,
    longest: Duration,
}

impl Waits {
    #[inline]
    pub fn add(&mut self, wait: Duration) {
        self.count += 1;
        self.total_ps += wait.ps();
        self.longest = self.longest.max(wait);
    }

    /// How many waits were added.
    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn merge(&mut self, other: &Waits) {
        self.count += other.count;
        self.total_ps += other.total_ps;
        self.longest = self.longest.max(other.longest);
    }

    /// `mean_NAME_us` and `max_NAME_us`, when any wait was added.
    pub fn report(&self, r: &mut Report, name: &str) {
        if self.count > 0 {
            r.real(&format!("mean_{name}_us"), self.total_ps as f64 / self.count as f64 / 1e6);
            r.real(&format!("max_{name}_us"), self.longest.ps() as f64 / 1e6);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_and_the_longest_of_the_waits_added_and_merged() {
        let (mut a, mut b) = (Waits::default(), Waits::default());
        a.add(Duration::from_us(10));
        a.add(Duration::from_us(30));
        b.add(Duration::from_us(50));
        a.merge(&b);
        let mut r = Report::default();
        a.report(&mut r, "x");
        assert_eq!((r.get("mean_x_us"), r.get("max_x_us")), (Some(30.0), Some(50.0)));
        let mut none = Report::default();
        Waits::default().report(&mut none, "x");
        assert!(none.entries().is_empty(), "nothing added, nothing reported");
    }
}
