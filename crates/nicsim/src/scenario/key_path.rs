//! The key path (`source[0].count`) of a line of scenario text, for errors the
//! TOML reader gives with a line but no key: table headers are followed from the
//! top, counting each `[[array]]` entry within its parent.

use std::collections::HashMap;

/// The path of the key set on line `line` (from 1), if that line sets one.
pub fn at_line(text: &str, line: usize) -> Option<String> {
    let mut prefix = String::new();
    // Entries so far of each array of tables, by its full path ("host[0].adapter").
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate().take(line) {
        let l = raw.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let path = resolve(name, &counts, true);
            let n = counts.entry(path.clone()).or_default();
            *n += 1;
            prefix = format!("{path}[{}]", *n - 1);
        } else if let Some(name) = l.strip_prefix('[').and_then(|r| r.split(']').next()) {
            prefix = resolve(name, &counts, false);
        } else if i + 1 == line {
            let key = l.split('=').next()?.trim().trim_matches('"');
            if key.is_empty() || key.starts_with('#') || !l.contains('=') {
                return None;
            }
            return Some(if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") });
        }
    }
    None
}

/// A dotted header name with each array of tables it passes through at its
/// latest entry (`host.adapter` under the second `[[host]]`: `host[1].adapter`);
/// the last part of an `[[array]]` header is the array itself.
fn resolve(name: &str, counts: &HashMap<String, usize>, array: bool) -> String {
    let parts: Vec<&str> = name.split('.').map(|p| p.trim().trim_matches('"')).collect();
    let mut path = String::new();
    for (i, part) in parts.iter().enumerate() {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(part);
        if array && i + 1 == parts.len() {
            break;
        }
        if let Some(n) = counts.get(&path) {
            path = format!("{path}[{}]", n - 1);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::at_line;

    #[test]
    fn keys_are_named_through_arrays_and_sub_tables() {
        let text = "seed = 1\n[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[host.costs]\nrx_frame = 1\n[[host.adapter]]\n[[host.adapter]]\nrx_ring = 99999999999999999999\n[[link]]\nrate = 5\n# a comment\n";
        assert_eq!(at_line(text, 1).as_deref(), Some("seed"));
        assert_eq!(at_line(text, 5).as_deref(), Some("host[1].name"));
        assert_eq!(at_line(text, 7).as_deref(), Some("host[1].costs.rx_frame"));
        assert_eq!(at_line(text, 10).as_deref(), Some("host[1].adapter[1].rx_ring"));
        assert_eq!(at_line(text, 12).as_deref(), Some("link[0].rate"));
        assert_eq!(at_line(text, 13), None);
        assert_eq!(at_line(text, 2), None, "a header sets no key");
    }
}
