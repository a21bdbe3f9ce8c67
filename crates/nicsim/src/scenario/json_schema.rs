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
        for table in ["source", "sink", "switch", "link", "host", "peer", "tap", "sweep"] {
            assert!(props.contains_key(table), "no {table}");
        }
        assert_eq!(v["additionalProperties"], false);
        let host = &v["$defs"]["HostSpec"];
        assert_eq!(host["properties"]["cpus"]["default"], 1);
        assert!(host["required"].as_array().unwrap().contains(&"clock".into()));
    }
}
