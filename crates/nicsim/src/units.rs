//! Quantities with units as scenario files write them: rates ("10Gbps", "1 Gb/s",
//! "1.5Mpps", or "line") and times ("500ns", "10us", "1ms", via humantime).

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

use crate::time::{Clock, Duration};

/// A bit rate, positive. Written as bits per second (integer) or with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRate(pub u64);

/// A source's rate: the line rate, bits per second on the wire, or frames per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SourceRate {
    Line,
    Bits(u64),
    Frames(f64),
}

/// The most processor cycles one operation may cost: far from overflow in any
/// sum of simulated times.
pub const MAX_CYCLES: i64 = 1_000_000_000;

/// Processor cycles of one operation, 0 to `MAX_CYCLES` (for `deserialize_with`).
pub fn cycles<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = i64::deserialize(d)?;
    if !(0..=MAX_CYCLES).contains(&v) {
        return Err(de::Error::custom(format!("must be 0 to {MAX_CYCLES}, got {v}")));
    }
    Ok(v as u64)
}

/// A count from 1 to `MAX` (for `deserialize_with`).
pub fn count<'de, const MAX: u32, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = i64::deserialize(d)?;
    if !(1..=MAX as i64).contains(&v) {
        return Err(de::Error::custom(format!("must be 1 to {MAX}, got {v}")));
    }
    Ok(v as u32)
}

/// Cycles or nanoseconds per byte, 0 to 1000 (for `deserialize_with`).
pub fn per_byte<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if !(v.is_finite() && (0.0..=1000.0).contains(&v)) {
        return Err(de::Error::custom(format!("must be 0 to 1000, got {v}")));
    }
    Ok(v)
}

/// A span of simulated time written with its unit (for `deserialize_with`).
pub fn time_span<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    TimeSpan::deserialize(d).map(|t| t.0)
}

/// A non-negative span of simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TimeSpan(pub Duration);

const BIT_UNITS: [(&str, f64); 10] = [
    ("bps", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("kb/s", 1e3),
    ("mbps", 1e6),
    ("mb/s", 1e6),
    ("gbps", 1e9),
    ("gb/s", 1e9),
    ("tbps", 1e12),
    ("tb/s", 1e12),
];
const FRAME_UNITS: [(&str, f64); 4] = [("pps", 1.0), ("kpps", 1e3), ("mpps", 1e6), ("gpps", 1e9)];

fn split_number(text: &str) -> Result<(f64, String), String> {
    let t = text.trim();
    let mut end = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(t.len());
    // An exponent ("1e9bps") belongs to the number: no unit starts with an e.
    let rest = &t[end..];
    if let Some(exp) = rest.strip_prefix(['e', 'E']) {
        let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        let n = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
        if n > 0 {
            end += rest.len() - digits.len() + n;
        }
    }
    let (num, unit) = t.split_at(end);
    let value: f64 = num.parse().map_err(|_| format!("expected a number with a unit, got {text:?}"))?;
    Ok((value, unit.trim().to_ascii_lowercase()))
}

fn positive(value: f64, text: &str) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("must be positive, got {text:?}"))
    }
}

pub fn parse_bit_rate(text: &str) -> Result<BitRate, String> {
    let (value, unit) = split_number(text)?;
    let scale = BIT_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, s)| *s)
        .ok_or_else(|| format!("unknown rate unit in {text:?} (use bps, kbps, Mbps, Gbps or Tbps)"))?;
    let bps = positive(value, text)? * scale;
    if !(1.0..=1e15).contains(&bps) {
        return Err(format!("{text:?} is outside 1 b/s to 1 Pb/s"));
    }
    Ok(BitRate(bps.round() as u64))
}

pub fn parse_source_rate(text: &str) -> Result<SourceRate, String> {
    if text.trim().eq_ignore_ascii_case("line") {
        return Ok(SourceRate::Line);
    }
    let (value, unit) = split_number(text)?;
    if let Some((_, s)) = FRAME_UNITS.iter().find(|(u, _)| *u == unit) {
        let fps = positive(value, text)? * s;
        if fps < 1e-3 {
            return Err(format!("{text:?} is below the slowest rate of 0.001 pps"));
        }
        return Ok(SourceRate::Frames(fps));
    }
    parse_bit_rate(text).map(|r| SourceRate::Bits(r.0)).map_err(|e| format!("{e}, \"line\", or frames per second (pps, kpps, Mpps)"))
}

/// A clock frequency ("400MHz", "2.4GHz"); "33MHz" and "66MHz" mean the
/// 100/3 MHz multiples that buses really run at (see `Clock::from_mhz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frequency(pub Clock);

pub fn parse_frequency(text: &str) -> Result<Frequency, String> {
    let (value, unit) = split_number(text)?;
    let scale = match unit.as_str() {
        "hz" => 1.0,
        "khz" => 1e3,
        "mhz" => 1e6,
        "ghz" => 1e9,
        _ => return Err(format!("unknown frequency unit in {text:?} (use Hz, kHz, MHz or GHz)")),
    };
    let hz = positive(value, text)? * scale;
    if !(1e3..=1e11).contains(&hz) {
        return Err(format!("{text:?} is outside 1 kHz to 100 GHz"));
    }
    let mhz = hz / 1e6;
    Ok(Frequency(if mhz.fract() == 0.0 { Clock::from_mhz(mhz as u64) } else { Clock::from_hz(hz.round() as u64) }))
}

const MAX_SECONDS: u64 = 1_000_000;

pub fn parse_time(text: &str) -> Result<TimeSpan, String> {
    if text.trim().starts_with('-') {
        return Err(format!("must not be negative, got {text:?}"));
    }
    let d = humantime::parse_duration(text).map_err(|e| format!("{e} in {text:?} (write e.g. \"500ns\", \"10us\", \"2ms\")"))?;
    // A million seconds keeps every sum of simulated times far from u64 overflow.
    if d > std::time::Duration::from_secs(MAX_SECONDS) {
        return Err(format!("{text:?} is longer than the {MAX_SECONDS} s a run may last"));
    }
    let ps = d.as_nanos() as u64 * 1_000;
    Ok(TimeSpan(Duration(ps)))
}

/// Deserialize from a string or an integer (an integer means the base unit).
macro_rules! from_text_or_int {
    ($ty:ty, $what:expr, $parse:expr, $from_int:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        $parse(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if v <= 0 {
                            return Err(E::custom(format!("must be positive, got {v}")));
                        }
                        $from_int(v as u64).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(i64::try_from(v).map_err(E::custom)?)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!("write {v} with a unit, as a string")))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

/// The JSON Schema of a quantity written as text with a unit, or (if
/// `integer`) as a plain number in the base unit.
macro_rules! unit_schema {
    ($ty:ty, $name:expr, $text:expr, $integer:expr) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                if $integer {
                    schemars::json_schema!({"description": $text, "type": ["string", "integer"]})
                } else {
                    schemars::json_schema!({"description": $text, "type": "string"})
                }
            }
        }
    };
}

unit_schema!(BitRate, "BitRate", "a bit rate: \"10Gbps\", \"1 Gb/s\", \"100Mbps\", or bits per second", true);
unit_schema!(SourceRate, "SourceRate", "\"line\", a bit rate such as \"500Mbps\", or frames per second such as \"1Mpps\"", true);
unit_schema!(Frequency, "Frequency", "a frequency: \"400MHz\", \"2.4GHz\", or hertz", true);
unit_schema!(TimeSpan, "TimeSpan", "a time: \"500ns\", \"10us\", \"2ms\", \"1s\"", false);

// A plain number is in the base unit, and held to the same range as text.
from_text_or_int!(BitRate, "a bit rate such as \"10Gbps\"", parse_bit_rate, |v| parse_bit_rate(&format!("{v}bps")));
from_text_or_int!(SourceRate, "\"line\" or a rate such as \"500Mbps\" or \"1Mpps\"", parse_source_rate, |v| parse_source_rate(&format!(
    "{v}bps"
)));
from_text_or_int!(Frequency, "a frequency such as \"400MHz\"", parse_frequency, |v| parse_frequency(&format!("{v}Hz")));
from_text_or_int!(TimeSpan, "a time such as \"10us\"", parse_time, |_v| Err::<TimeSpan, String>(
    "write a time with its unit, as a string such as \"10us\"".to_string()
));

/// `value` in the largest of `units` (name, size) that divides it, else in the smallest.
fn with_unit(value: u64, units: &[(&str, u64)]) -> String {
    let (name, size) = units.iter().find(|(_, size)| value.is_multiple_of(*size)).unwrap_or(units.last().expect("units"));
    format!("{}{name}", value / size)
}

/// Quantities are written back as a scenario file would write them (for the
/// defaults in the JSON Schema): the largest unit that is exact.
macro_rules! as_text {
    ($ty:ty, |$v:ident| $text:expr) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let $v = self;
                s.serialize_str(&$text)
            }
        }
    };
}

const BITS: [(&str, u64); 4] = [("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("kbps", 1_000), ("bps", 1)];
as_text!(BitRate, |v| with_unit(v.0, &BITS));
// A nominal figure ("33MHz" is 100/3 MHz) is written as such.
as_text!(Frequency, |v| match (v.0.hz() / 1e6).floor() as u64 {
    mhz if mhz > 0 && Clock::from_mhz(mhz) == v.0 => with_unit(mhz * 1_000_000, &[("GHz", 1_000_000_000), ("MHz", 1_000_000)]),
    _ => with_unit(v.0.hz().round() as u64, &[("GHz", 1_000_000_000), ("MHz", 1_000_000), ("kHz", 1_000), ("Hz", 1)]),
});
as_text!(TimeSpan, |v| if v.0.ps() == 0 {
    "0s".to_string()
} else {
    with_unit(v.0.ps(), &[("s", 1_000_000_000_000), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000), ("ps", 1)])
});
as_text!(SourceRate, |v| match v {
    SourceRate::Line => "line".to_string(),
    SourceRate::Bits(b) => with_unit(*b, &BITS),
    SourceRate::Frames(f) => format!("{f}pps"),
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_written_back_as_they_are_read() {
        let text = |v: &dyn erased::Text| v.text();
        for t in ["0s", "200ms", "500ns", "10us", "2s"] {
            assert_eq!(text(&parse_time(t).unwrap()), t);
        }
        for r in ["10Gbps", "100Mbps", "1500bps"] {
            assert_eq!(text(&parse_bit_rate(r).unwrap()), r);
        }
        for f in ["33MHz", "400MHz", "2GHz", "2400MHz"] {
            let back = text(&parse_frequency(f).unwrap());
            assert_eq!(parse_frequency(&back).unwrap(), parse_frequency(f).unwrap(), "{f} -> {back}");
        }
        assert_eq!(text(&parse_frequency("33MHz").unwrap()), "33MHz");
        assert_eq!(text(&parse_source_rate("line").unwrap()), "line");
    }

    mod erased {
        pub trait Text {
            fn text(&self) -> String;
        }
        impl<T: serde::Serialize> Text for T {
            fn text(&self) -> String {
                serde_json::to_value(self).unwrap().as_str().unwrap().to_string()
            }
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_bit_rate("10Gbps").unwrap(), BitRate(10_000_000_000));
        assert_eq!(parse_bit_rate("1 Gb/s").unwrap(), BitRate(1_000_000_000));
        assert_eq!(parse_bit_rate("100Mbps").unwrap(), BitRate(100_000_000));
        assert_eq!(parse_bit_rate("2.5 Gbps").unwrap(), BitRate(2_500_000_000));
        assert!(parse_bit_rate("0Gbps").unwrap_err().contains("positive"));
        assert!(parse_bit_rate("-1Gbps").unwrap_err().contains("positive"));
        assert!(parse_bit_rate("10 furlongs").unwrap_err().contains("unit"));
        assert_eq!(parse_bit_rate("1e9bps").unwrap(), BitRate(1_000_000_000));
        assert_eq!(parse_bit_rate("2.5E-3Gbps").unwrap(), BitRate(2_500_000));
        assert!(parse_bit_rate("1e30Gbps").unwrap_err().contains("outside"), "an impossible rate, not an unknown unit");
        assert_eq!(parse_source_rate("line").unwrap(), SourceRate::Line);
        assert_eq!(parse_source_rate("1.5Mpps").unwrap(), SourceRate::Frames(1.5e6));
    }

    #[test]
    fn frequencies() {
        assert_eq!(parse_frequency("33MHz").unwrap().0.period(), Duration::from_ns(30));
        assert_eq!(parse_frequency("400 MHz").unwrap().0.cycles(400), Duration::from_us(1));
        assert_eq!(parse_frequency("2.4GHz").unwrap().0.cycles(2_400), Duration::from_us(1));
        assert!(parse_frequency("4 furlongs").unwrap_err().contains("unit"));
        assert!(parse_frequency("0MHz").unwrap_err().contains("positive"));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("10us").unwrap(), TimeSpan(Duration::from_us(10)));
        assert_eq!(parse_time("500ns").unwrap(), TimeSpan(Duration::from_ns(500)));
        assert_eq!(parse_time("2ms").unwrap(), TimeSpan(Duration::from_ms(2)));
        assert!(parse_time("-3us").unwrap_err().contains("negative"));
        assert!(parse_time("soon").is_err());
        assert!(parse_time("300 days").unwrap_err().contains("longer"));
    }
}
