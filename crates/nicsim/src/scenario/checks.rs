//! Range checks of whole-number keys, with errors that name the key path.

use crate::scenario::ScenarioError;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

/// `v` as a whole number in `lo..=hi`.
pub(crate) fn within(path: String, v: i64, lo: i64, hi: i64) -> Result<u64, ScenarioError> {
    crate::settings::range(v, lo, hi).map_err(|m| ScenarioError::new(path, m))
}

/// `v` above zero.
pub(crate) fn positive(path: String, v: i64) -> Result<u64, ScenarioError> {
    if v <= 0 {
        return err(path, format!("must be positive, got {v}"));
    }
    Ok(v as u64)
}
