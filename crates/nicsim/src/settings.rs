//! What every part's settings check shares: a whole-number key's range, with
//! an error that names the key ("key: what is wrong"). A part checks its own
//! table this way; the scenario puts the table's path in front
//! (`scenario::ScenarioError::field`).

/// A table left out of a scenario takes the defaults its keys have when it is
/// given empty: they are written once, in the serde attributes of its type.
macro_rules! defaults_of_an_empty_table {
    ($ty:ty) => {
        impl Default for $ty {
            fn default() -> Self {
                toml::from_str("").expect("every key of the table has a default")
            }
        }
    };
}
pub(crate) use defaults_of_an_empty_table;

/// The default-value functions serde's `default = "..."` names.
macro_rules! defaults {
    ($($name:ident: $ty:ty = $value:expr;)*) => {
        $(fn $name() -> $ty { $value })*
    };
}
pub(crate) use defaults;

/// What is wrong with `v` if it is not a whole number in `lo..=hi`.
pub fn range(v: i64, lo: i64, hi: i64) -> Result<u64, String> {
    if v < lo || v > hi {
        return Err(format!("must be {lo} to {hi}, got {v}"));
    }
    Ok(v as u64)
}

/// Key `key`'s `v` as a whole number in `lo..=hi`.
pub fn within(key: &str, v: i64, lo: i64, hi: i64) -> Result<u64, String> {
    range(v, lo, hi).map_err(|m| format!("{key}: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_the_key_and_the_range() {
        assert_eq!(within("lanes", 8, 1, 32), Ok(8));
        assert_eq!(within("lanes", 0, 1, 32).unwrap_err(), "lanes: must be 1 to 32, got 0");
        assert_eq!(range(-1, 0, 5).unwrap_err(), "must be 0 to 5, got -1");
    }
}
