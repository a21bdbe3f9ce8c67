//! An ideal host (`ideal = true`) models no processor, bus or adapter, so the
//! keys that describe them are refused by name rather than silently ignored.
//! Checked on the TOML table, where a key written can be told from a default.

use crate::scenario::host_schema::IDEAL_KEYS;
use crate::scenario::ScenarioError;

pub fn check(table: &toml::Table) -> Result<(), ScenarioError> {
    let Some(toml::Value::Array(hosts)) = table.get("host") else { return Ok(()) };
    for (i, host) in hosts.iter().enumerate() {
        let Some(host) = host.as_table() else { continue };
        if host.get("ideal").and_then(toml::Value::as_bool) != Some(true) {
            continue;
        }
        if let Some(key) = host.keys().find(|k| !IDEAL_KEYS.contains(&k.as_str())) {
            return Err(ScenarioError::new(
                format!("host[{i}].{key}"),
                format!(
                    "an ideal host (ideal = true) costs nothing and models no processor, bus or adapter; its keys are {}",
                    IDEAL_KEYS.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ideal_host_refuses_what_it_does_not_model() {
        let t: toml::Table = "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\nideal = true\n[host.costs]\nrx_frame = 1\n".parse().unwrap();
        let e = check(&t).unwrap_err();
        assert_eq!(e.path, "host[1].costs");
        let t: toml::Table = "[[host]]\nname = \"b\"\nideal = true\nwarmup = \"1ms\"\n[host.ttcp]\nrole = \"receive\"\n".parse().unwrap();
        assert!(check(&t).is_ok());
        let t: toml::Table = "[[host]]\nname = \"a\"\nclock = \"1GHz\"\n".parse().unwrap();
        assert!(check(&t).is_ok(), "a host that is not ideal keeps every key");
    }
}
