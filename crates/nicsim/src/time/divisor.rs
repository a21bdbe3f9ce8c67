//! Division by a divisor fixed once, as a multiply and two shifts: a clock
//! divides every cycle count it turns into time by the same number (3 for a
//! 3 GHz clock, 7 for 700 MHz), and a hardware division costs tens of cycles
//! on the path every frame takes. The method is Granlund and Montgomery's
//! ("Division by Invariant Integers using Multiplication", PLDI 1994, fig. 4.1),
//! exact for every 64-bit dividend.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Divisor {
    d: u64,
    /// `floor(2^64 * (2^shift - d) / d) + 1`, below 2^64.
    magic: u64,
    /// `ceil(log2 d)`.
    shift: u32,
}

impl Divisor {
    pub fn new(d: u64) -> Divisor {
        assert!(d > 0, "division by zero");
        if d == 1 {
            return Divisor { d, magic: 0, shift: 0 };
        }
        let shift = 64 - (d - 1).leading_zeros();
        let magic = ((1u128 << 64) * ((1u128 << shift) - d as u128) / d as u128 + 1) as u64;
        Divisor { d, magic, shift }
    }

    pub fn get(self) -> u64 {
        self.d
    }

    #[inline(always)]
    pub fn divide(self, n: u64) -> u64 {
        if self.d == 1 {
            return n;
        }
        let t = ((n as u128 * self.magic as u128) >> 64) as u64;
        (t + ((n - t) >> 1)) >> (self.shift - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_edges_divide_exactly() {
        for d in [1, 2, 3, 7, 10, 1 << 32, (1 << 32) + 1, u64::MAX / 2, (1 << 63) + 1, u64::MAX] {
            let div = Divisor::new(d);
            for n in [0, 1, d - 1, d, d.wrapping_add(1), u64::MAX / 3, u64::MAX - 1, u64::MAX] {
                assert_eq!(div.divide(n), n / d, "{n} / {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_dividend_by_any_divisor_gives_the_quotient(n: u64, d in 1u64..) {
            prop_assert_eq!(Divisor::new(d).divide(n), n / d);
        }

        #[test]
        fn small_divisors_give_the_quotient(n: u64, d in 1u64..1000) {
            prop_assert_eq!(Divisor::new(d).divide(n), n / d);
        }
    }
}
