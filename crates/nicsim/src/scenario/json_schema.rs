//! The scenario format as a JSON Schema, generated from the types serde reads
//! scenarios into, so that it cannot differ from what `nicsim` accepts. Editors
//! validate and complete scenario files with it (Taplo, Even Better TOML); the
//! copy shipped in `docs/scenario.schema.json` is checked against it by a test.

/// The JSON Schema of a scenario file, pretty-printed.
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(super::Scenario);
    schema.insert("title".into(), "nicsim scenario".into());
    serde_json::to_string_pretty(&schema).expect("a schema serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_schema_is_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.schema.json");
        let shipped = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            shipped == json_schema(),
            "docs/scenario.schema.json is out of date: regenerate it with `nicsim schema -o docs/scenario.schema.json`"
        );
    }

    #[test]
    fn the_schema_knows_every_table_and_refuses_unknown_keys() {
        let v: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let props = v["properties"].as_object().unwrap();
        for table in ["source", "sink", "switch", "link", "host", "tap", "sweep"] {
            assert!(props.contains_key(table), "no {table}");
        }
        assert!(!props.contains_key("peer"), "ideal hosts are hosts");
        assert_eq!(v["additionalProperties"], false);
        let host = &v["$defs"]["HostSpec"];
        assert_eq!(host["properties"]["cpus"]["default"], 1);
        assert_eq!(host["properties"]["ideal"]["default"], false);
        assert_eq!(host["required"], serde_json::json!(["name"]), "clock, costs and bus are needed unless the host is ideal");
    }

    /// A fixed default lives in the schema (the key table shows it), never only in
    /// a description; a description may state a default only as a rule, "(default: ...)".
    #[test]
    fn no_description_states_a_fixed_default_the_schema_lacks() {
        let v: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let mut stated = Vec::new();
        for (name, def) in v["$defs"].as_object().unwrap().iter().chain([("Scenario".to_string(), v.clone())].iter().map(|(k, v)| (k, v))) {
            for (key, node) in def["properties"].as_object().into_iter().flatten() {
                let text = node["description"].as_str().unwrap_or("");
                if text.contains("(default ") && node.get("default").is_none() {
                    stated.push(format!("{name}.{key}: {text}"));
                }
            }
        }
        assert!(stated.is_empty(), "defaults only in prose:\n{}", stated.join("\n"));
    }
}
