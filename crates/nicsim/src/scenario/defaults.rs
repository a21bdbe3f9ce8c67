//! Defaults that serde fills in for keys a scenario leaves out, shared by the
//! schema files.

use crate::units::TimeSpan;

pub(crate) fn one() -> i64 {
    1
}

pub(crate) fn yes() -> bool {
    true
}

pub(crate) fn zero_time() -> TimeSpan {
    TimeSpan(crate::time::Duration::ZERO)
}
