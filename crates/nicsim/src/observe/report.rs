//! A component's end-of-run counters and measurements, in the order it lists them.

use serde::ser::{Serialize, SerializeMap, Serializer};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Count(u64),
    Real(f64),
}

impl Value {
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Count(n) => n as f64,
            Value::Real(x) => x,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    entries: Vec<(String, Value)>,
}

impl Report {
    pub fn count(&mut self, name: &str, n: u64) -> &mut Self {
        self.entries.push((name.to_string(), Value::Count(n)));
        self
    }
    pub fn real(&mut self, name: &str, x: f64) -> &mut Self {
        self.entries.push((name.to_string(), Value::Real(x)));
        self
    }
    pub fn get(&self, name: &str) -> Option<f64> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_f64())
    }
    pub fn entries(&self) -> &[(String, Value)] {
        &self.entries
    }

    /// The counts of several reports with the same names, summed, in order.
    pub fn summed(parts: &[Report]) -> Report {
        let mut r = Report::default();
        for (i, (name, _)) in parts[0].entries().iter().enumerate() {
            r.count(name, parts.iter().map(|p| p.entries()[i].1.as_f64() as u64).sum());
        }
        r
    }
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (name, value) in &self.entries {
            match value {
                Value::Count(n) => map.serialize_entry(name, n)?,
                Value::Real(x) => map.serialize_entry(name, x)?,
            }
        }
        map.end()
    }
}
