//! Simulated time: integer picoseconds, so every clock the model uses is exact.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

use strength_reduce::StrengthReducedU64;

const PS_PER_S: u128 = 1_000_000_000_000;

/// A point in simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);

    pub const fn from_ps(ps: u64) -> Self {
        Duration(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        Duration(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        Duration(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        Duration(ms * 1_000_000_000)
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Time to move `bits` at `bits_per_second`, rounded up to the next picosecond
    /// (exact for every standard Ethernet rate from 10 Mb/s to 400 Gb/s).
    pub fn for_bits(bits: u64, bits_per_second: u64) -> Self {
        assert!(bits_per_second > 0, "rate must be positive");
        let scaled = bits as u128 * PS_PER_S;
        // A 64-bit division when the product fits, as it does for any frame.
        if let Ok(small) = u64::try_from(scaled) {
            return Duration(small.div_ceil(bits_per_second));
        }
        let ps = scaled.div_ceil(bits_per_second as u128);
        Duration(u64::try_from(ps).expect("duration overflows u64 picoseconds"))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.checked_add(d.0).expect("simulated time overflow"))
    }
}
impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, t: Time) -> Duration {
        Duration(self.0.checked_sub(t.0).expect("negative duration"))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, n: u64) -> Duration {
        Duration(self.0 * n)
    }
}

fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match ps {
        0..=999 => write!(f, "{ps} ps"),
        1_000..=999_999 => write!(f, "{:.3} ns", ps as f64 / 1e3),
        1_000_000..=999_999_999 => write!(f, "{:.3} us", ps as f64 / 1e6),
        _ => write!(f, "{:.6} ms", ps as f64 / 1e9),
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}

/// A clock of frequency `num / den` Hz. Cycle `n` starts at exactly
/// `floor(n * den * 1e12 / num)` ps, so long runs never drift.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    num: u64,
    den: u64,
    /// The period `den * 1e12 / num` ps in lowest terms: most clocks' periods
    /// are whole picoseconds (no division at all), and the rest divide by a
    /// fixed number (a 3 GHz cycle is 1000/3 ps), which `strength_reduce` does
    /// as a multiply: a hardware division cost tens of cycles on the path every
    /// frame takes.
    period_num: u64,
    period_den: StrengthReducedU64,
}

/// Two clocks are the same clock when their frequencies are.
impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        (self.num, self.den) == (other.num, other.den)
    }
}
impl Eq for Clock {}

impl Clock {
    /// A clock of exactly `hz` hertz.
    pub fn from_hz(hz: u64) -> Self {
        assert!(hz > 0, "clock frequency must be positive");
        Clock::new(hz, 1)
    }

    fn new(num: u64, den: u64) -> Self {
        let (p, q) = (den as u128 * PS_PER_S, num as u128);
        let g = gcd(p, q);
        let period_num = u64::try_from(p / g).expect("a clock's period fits u64 picoseconds");
        Clock { num, den, period_num, period_den: StrengthReducedU64::new((q / g) as u64) }
    }

    /// A clock by its nominal MHz figure. Bus and memory clocks named "33", "66",
    /// "133", "166", "266", "533" MHz are really 100/3 MHz multiples (a 33 MHz PCI
    /// clock is 30 ns), so a figure ending in 33 or 66 means the third above it.
    pub fn from_mhz(mhz: u64) -> Self {
        assert!(mhz > 0, "clock frequency must be positive");
        match mhz % 100 {
            33 => Clock::new((mhz * 3 + 1) * 1_000_000, 3),
            66 => Clock::new((mhz * 3 + 2) * 1_000_000, 3),
            _ => Clock::from_hz(mhz * 1_000_000),
        }
    }

    pub fn hz(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The time at which cycle `n` (counted from zero) begins.
    pub fn cycles(&self, n: u64) -> Duration {
        let scaled = n as u128 * self.period_num as u128;
        // A 64-bit product (up to billions of cycles) divides by multiplying.
        if let Ok(small) = u64::try_from(scaled) {
            return Duration(small / self.period_den);
        }
        let ps = scaled / self.period_den.get() as u128;
        Duration(u64::try_from(ps).expect("duration overflows u64 picoseconds"))
    }

    /// The whole cycles that cover `d` (a wait of `d` rounded up to the clock).
    pub fn cycles_in(&self, d: Duration) -> u64 {
        let cycles = (d.ps() as u128 * self.num as u128).div_ceil(self.den as u128 * 1_000_000_000_000);
        u64::try_from(cycles).expect("cycles fit u64")
    }

    /// One period, rounded down to a picosecond (exact for the common bus clocks).
    pub fn period(&self) -> Duration {
        self.cycles(1)
    }
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_cycles_cover_a_wait() {
        let c = Clock::from_hz(3_600_000_000);
        assert_eq!(c.cycles_in(Duration::from_ns(80)), 288);
        assert_eq!(c.cycles_in(Duration::from_ns(1)), 4, "3.6 cycles rounded up");
        assert_eq!(c.cycles_in(Duration::ZERO), 0);
    }

    #[test]
    fn bus_clocks_are_exact() {
        assert_eq!(Clock::from_mhz(33).period(), Duration::from_ns(30));
        assert_eq!(Clock::from_mhz(66).period(), Duration::from_ns(15));
        assert_eq!(Clock::from_mhz(133).period(), Duration::from_ps(7_500));
        assert_eq!(Clock::from_mhz(125).period(), Duration::from_ns(8));
        assert_eq!(Clock::from_mhz(100).period(), Duration::from_ns(10));
    }

    #[test]
    fn clocks_do_not_drift() {
        // 3 GHz has a 333.33 ps period: a million cycles must be exactly 1/3000 s.
        let c = Clock::from_hz(3_000_000_000);
        assert_eq!(c.cycles(3_000_000), Duration::from_ms(1));
        assert_eq!(Clock::from_mhz(33).cycles(100_000_000), Duration::from_ms(3000));
        assert_eq!(Clock::from_mhz(33).cycles(100_000_001), Duration::from_ms(3000) + Duration::from_ns(30));
    }

    #[test]
    fn a_period_in_lowest_terms_gives_the_times_of_the_definition() {
        for c in [
            Clock::from_hz(3_000_000_000),
            Clock::from_hz(2_400_000_000),
            Clock::from_mhz(700),
            Clock::from_mhz(33),
            Clock::from_mhz(66),
            Clock::from_hz(7_000),
        ] {
            for n in [0, 1, 2, 3, 999, 1_000_003, 4_294_967_297, 1 << 33] {
                let defined = n as u128 * c.den as u128 * PS_PER_S / c.num as u128;
                assert_eq!(c.cycles(n).ps() as u128, defined, "{c:?}, cycle {n}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_clock_gives_the_times_of_the_definition(hz in 1u64..10_000_000_000, n in 0u64..(1 << 40)) {
            let c = Clock::from_hz(hz);
            let defined = n as u128 * PS_PER_S / hz as u128;
            // A duration is at most u64::MAX picoseconds (about 213 days).
            proptest::prop_assume!(defined <= u64::MAX as u128);
            proptest::prop_assert_eq!(c.cycles(n).ps() as u128, defined);
        }
    }

    #[test]
    fn bits_on_a_wire() {
        assert_eq!(Duration::for_bits(84 * 8, 10_000_000_000), Duration::from_ps(67_200));
        assert_eq!(Duration::for_bits(1538 * 8, 1_000_000_000), Duration::from_ns(12_304));
        assert_eq!(Duration::for_bits(84 * 8, 400_000_000_000), Duration::from_ps(1_680));
        // Rounds up, never down, on an odd rate.
        assert_eq!(Duration::for_bits(1, 3), Duration::from_ps(333_333_333_334));
    }
}
