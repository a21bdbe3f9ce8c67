//! Scenarios: TOML files read with serde, checked into a plan, assembled into a
//! simulator. Errors name the key path (`link[0].rate: must be positive, got 0`).

mod adapter_validate;
mod assemble;
mod checks;
mod defaults;
mod devices;
mod endless;
mod file_schema;
mod host_plans;
mod host_schema;
mod host_validate;
mod ideal_keys;
mod json_schema;
mod key_path;
mod overrides;
mod plan;
mod reach;
mod schema;
mod segments;
mod smart_schema;
mod smart_validate;
mod source_validate;
mod surroundings;
mod sweep_validate;
mod tap_validate;
mod ttcp_schema;
mod ttcp_validate;
pub(crate) use crate::units;
mod validate;

use std::fmt;
use std::path::Path;

pub use assemble::assemble;
pub use json_schema::json_schema;
pub use plan::{Part, PartPlan, Plan, Station, TapPlan, RAW_ETHER_TYPE};
pub use schema::Scenario;
pub use units::{parse_bit_rate, parse_time};
pub use validate::validate;

/// Something wrong with a scenario: where (key path, and line when known) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), line: None, message: message.into() }
    }

    /// What a part's own check of its table at `path` made of it; its error
    /// ("key: what is wrong") names the key under `path`.
    pub fn field<T>(path: &str, check: Result<T, String>) -> Result<T, ScenarioError> {
        check.map_err(|m| match m.split_once(": ") {
            Some((field, rest)) => ScenarioError::new(format!("{path}.{field}"), rest),
            None => ScenarioError::new(path, m),
        })
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

/// A scenario file's text; the error leaves naming the file to the caller.
fn read(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::InvalidData => "is not UTF-8 text (a scenario is a TOML file)".to_string(),
            _ => e.to_string(),
        };
        ScenarioError::new("", why)
    })
}

/// Read a scenario from TOML text.
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    if let Ok(table) = text.parse::<toml::Table>() {
        ideal_keys::check(&table)?;
    }
    let de = toml::Deserializer::new(text);
    let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let line = inner.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        // A value the TOML reader refuses (a number too large) has no serde path:
        // name the key written on that line.
        let path = match line {
            Some(n) if path.is_empty() || path == "." => key_path::at_line(text, n).unwrap_or(path),
            _ => path,
        };
        let message = with_hint(&path, inner.message());
        ScenarioError { path, line, message }
    })?;
    if sc.is_empty() {
        return Err(ScenarioError::new(
            "",
            "has no parts: a scenario needs stations ([[source]], [[sink]], [[host]] or [[tap]]) and links",
        ));
    }
    segments::expand(&mut sc)?;
    Ok(sc)
}

/// Read and check a scenario file.
pub fn load(path: &Path) -> Result<Plan, ScenarioError> {
    load_with(path, &[])
}

/// The scenario file as a TOML table after `KEY=VALUE` overrides: what a run
/// used, key by key (a sweep records it with each run).
pub fn resolve(path: &Path, sets: &[String]) -> Result<toml::Table, ScenarioError> {
    let text = read(path)?;
    resolve_text(&text, sets)
}

fn resolve_text(text: &str, sets: &[String]) -> Result<toml::Table, ScenarioError> {
    parse(text)?; // syntax and schema errors with their line numbers first
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ScenarioError::new("", e.message().to_string()))?;
    for set in sets {
        overrides::apply(&mut table, set)?;
    }
    Ok(table)
}

/// Read a scenario file, apply `KEY=VALUE` overrides (`host[0].cpus=2`), check it.
pub fn load_with(path: &Path, sets: &[String]) -> Result<Plan, ScenarioError> {
    let text = read(path)?;
    if sets.is_empty() {
        return validate(&parse(&text)?);
    }
    let table = resolve_text(&text, sets)?;
    ideal_keys::check(&table)?;
    let mut scenario = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let message = with_hint(&path, e.into_inner().message());
        ScenarioError::new(path, format!("{message} (after --set)"))
    })?;
    renamed_into_a_clash(&scenario, sets)?;
    segments::expand(&mut scenario)?;
    validate(&scenario)
}

/// Where a TCP generator was asked for (a source's `protocol`, a programmable
/// adapter's `send.kind`), say where TCP comes from: only a TCP stack makes
/// segments, so a scenario written for the generators that did learns what
/// replaces them.
fn with_hint(path: &str, message: &str) -> String {
    if !message.contains("unknown variant `tcp`") {
        return message.to_string();
    }
    if path.ends_with(".send.kind") {
        format!("{message}; TCP comes from the host's own TCP ([host.ttcp]), whose large sends the adapter segments")
    } else if path.ends_with(".protocol") {
        format!("{message}; TCP segments come only from a host's TCP: give two hosts a [host.ttcp] (ideal = true for an end that costs nothing)")
    } else {
        message.to_string()
    }
}

/// A `--set PART.name=NAME` that gives a part another's name: the key that was
/// set is to blame, not the part that had the name first.
fn renamed_into_a_clash(sc: &Scenario, sets: &[String]) -> Result<(), ScenarioError> {
    let names = validate::part_names(sc);
    for key in sets.iter().filter_map(|s| s.split('=').next()).map(str::trim) {
        let Some(part) = key.strip_suffix(".name") else { continue };
        let Some((_, name)) = names.iter().find(|(p, _)| p == part) else { continue };
        if let Some((other, _)) = names.iter().find(|(p, n)| p != part && n == name) {
            return Err(ScenarioError::new(key, format!("{name:?} is already the name of {other} (after --set)")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const GOOD: &str = "[[source]]\nname = \"g\"\nto = \"r\"\nframe_size = 100\ncount = 3\n[[sink]]\nname = \"r\"\n[[link]]\nname = \"l\"\na = \"g\"\nb = \"r\"\nrate = \"1Gbps\"\n";

    #[test]
    fn errors_name_the_key_path() {
        let e = validate(&parse(&GOOD.replace("count = 3", "count = -3")).unwrap()).err().unwrap();
        assert_eq!(e.to_string(), "source[0].count: must be positive, got -3");
        let e = parse(&GOOD.replace("rate = \"1Gbps\"", "rate = \"0 Mbps\"")).unwrap_err();
        assert_eq!(e.path, "link[0].rate");
        assert!(e.message.contains("must be positive"));
        let e = parse(&GOOD.replace("count = 3", "cuont = 3")).unwrap_err();
        assert_eq!(e.path, "source[0].cuont");
    }

    proptest! {
        /// Hostile scenario text (mutations of a good one) gives a result or an
        /// error, never a panic.
        #[test]
        fn hostile_scenarios_never_panic(cuts in proptest::collection::vec((0usize..200, any::<char>()), 1..6)) {
            let mut text: Vec<char> = GOOD.chars().collect();
            for (at, c) in cuts {
                let i = at % text.len();
                text[i] = c;
            }
            let text: String = text.into_iter().collect();
            if let Ok(s) = parse(&text) {
                let _ = validate(&s);
            }
        }
    }
}
