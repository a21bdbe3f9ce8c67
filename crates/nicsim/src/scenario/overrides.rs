//! `--set KEY=VALUE`: change one value of a scenario before it is checked, so a
//! sweep runs one file many ways. KEY is a dotted path whose parts may index an
//! array (`host[0].bus.clock`); VALUE is a TOML value, or else taken as a string.

use crate::scenario::ScenarioError;

fn bad<T>(set: &str, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(format!("--set {set}"), message))
}

/// One path part: a key and an optional index into the array it names.
fn part(text: &str) -> Option<(&str, Option<usize>)> {
    match text.split_once('[') {
        None => Some((text, None)),
        Some((key, rest)) => Some((key, Some(rest.strip_suffix(']')?.parse().ok()?))),
    }
}

fn value(text: &str) -> toml::Value {
    match format!("v = {text}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("parsed one key"),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

pub fn apply(root: &mut toml::Table, set: &str) -> Result<(), ScenarioError> {
    let Some((path, text)) = set.split_once('=') else {
        return bad(set, "write KEY=VALUE");
    };
    let parts: Vec<&str> = path.trim().split('.').collect();
    let mut table = root;
    for (i, raw) in parts.iter().enumerate() {
        let Some((key, index)) = part(raw).filter(|(k, _)| !k.is_empty()) else {
            return bad(set, format!("{raw:?} is not a key or key[index]"));
        };
        let last = i + 1 == parts.len();
        let slot = match index {
            None if last => {
                table.insert(key.to_string(), value(text.trim()));
                return Ok(());
            }
            None => table.entry(key.to_string()).or_insert_with(|| toml::Value::Table(Default::default())),
            Some(n) => {
                let Some(toml::Value::Array(items)) = table.get_mut(key) else {
                    return bad(set, format!("{key:?} is not a list in this scenario"));
                };
                let len = items.len();
                let Some(item) = items.get_mut(n) else {
                    return bad(set, format!("{key} has {len} entries; index {n} is past the end"));
                };
                if last {
                    *item = value(text.trim());
                    return Ok(());
                }
                item
            }
        };
        let toml::Value::Table(next) = slot else {
            return bad(set, format!("{raw:?} holds a value, not a table"));
        };
        table = next;
    }
    bad(set, "empty key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_and_indexed_values() {
        let mut t: toml::Table = "[[host]]\nname = \"s\"\n[host.bus]\nclock = \"33MHz\"\n".parse().unwrap();
        apply(&mut t, "host[0].bus.clock=66MHz").unwrap();
        apply(&mut t, "host[0].cpus=2").unwrap();
        apply(&mut t, "host[0].file_request.peers=[\"a\", \"b\"]").unwrap();
        let h = &t["host"][0];
        assert_eq!(h["bus"]["clock"].as_str(), Some("66MHz"));
        assert_eq!(h["cpus"].as_integer(), Some(2));
        assert_eq!(h["file_request"]["peers"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn bad_paths_are_named() {
        let mut t: toml::Table = "[[host]]\nname = \"s\"\n".parse().unwrap();
        assert!(apply(&mut t, "host[3].cpus=2").unwrap_err().message.contains("past the end"));
        assert!(apply(&mut t, "cpus").unwrap_err().message.contains("KEY=VALUE"));
        assert!(apply(&mut t, "host[0].name.x=1").unwrap_err().message.contains("not a table"));
        assert_eq!(apply(&mut t, "seed[0]=1").unwrap_err().path, "--set seed[0]=1");
    }
}
