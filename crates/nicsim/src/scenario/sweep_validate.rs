//! `[sweep]`: checked with the rest of the scenario so a bad sweep is refused
//! before the first point runs. Each point's values are checked by running
//! `--set` on them, in `nicsim sweep`.

use crate::scenario::schema::{SweepMode, SweepSpec};
use crate::scenario::ScenarioError;

/// More points than this is almost surely a typo in a grid.
pub const MAX_POINTS: u64 = 1_000_000;

pub fn check_sweep(sweep: &SweepSpec) -> Result<u64, ScenarioError> {
    if sweep.vary.is_empty() {
        return Err(ScenarioError::new("sweep.vary", "names no key to vary"));
    }
    let mut lengths = Vec::new();
    for (key, values) in &sweep.vary {
        let path = format!("sweep.vary.{key:?}");
        let name = key.strip_prefix('@').unwrap_or(key);
        if name.trim().is_empty() || name.contains('=') {
            return Err(ScenarioError::new(path, "must be a scenario key such as host[0].clock, or @label"));
        }
        if values.is_empty() {
            return Err(ScenarioError::new(path, "has no values"));
        }
        lengths.push((key, values.len() as u64));
    }
    match sweep.mode {
        SweepMode::Zip => {
            // A one-value list goes with every point; the others must be one length.
            let mut long = lengths.iter().filter(|(_, n)| *n > 1);
            let Some(&(first, n)) = long.next() else { return Ok(1) };
            if let Some((key, m)) = long.find(|(_, m)| *m != n) {
                return Err(ScenarioError::new(
                    format!("sweep.vary.{key:?}"),
                    format!("zip needs lists of one length: {first:?} has {n} values, this has {m}"),
                ));
            }
            Ok(n)
        }
        SweepMode::Grid => {
            let points = lengths.iter().try_fold(1u64, |acc, (_, n)| acc.checked_mul(*n).filter(|p| *p <= MAX_POINTS));
            points.ok_or_else(|| ScenarioError::new("sweep.vary", format!("the grid has more than {MAX_POINTS} points")))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse, validate};

    const BASE: &str = "[[source]]\nname = \"g\"\nto = \"r\"\nframe_size = 100\ncount = 3\n[[sink]]\nname = \"r\"\n[[link]]\nname = \"l\"\na = \"g\"\nb = \"r\"\nrate = \"1Gbps\"\n";

    fn check(sweep: &str) -> Result<(), String> {
        let sc = parse(&format!("{BASE}{sweep}")).map_err(|e| e.to_string())?;
        validate(&sc).map(|_| ()).map_err(|e| e.to_string())
    }

    #[test]
    fn grid_and_zip_sweeps_are_accepted() {
        check("[sweep]\nvary = { \"source[0].frame_size\" = [64, 128], \"@label\" = [\"a\"] }\n").unwrap();
        check("[sweep]\nmode = \"zip\"\nvary = { a = [1, 2], b = [3, 4], c = [5] }\n").unwrap();
    }

    #[test]
    fn bad_sweeps_name_the_key() {
        let e = check("[sweep]\nmode = \"zip\"\nvary = { a = [1, 2], b = [3, 4, 5] }\n").unwrap_err();
        assert!(e.starts_with("sweep.vary.\"b\": zip needs lists of one length"), "{e}");
        let e = check("[sweep]\nvary = { a = [] }\n").unwrap_err();
        assert_eq!(e, "sweep.vary.\"a\": has no values");
        let e = check("[sweep]\nvary = {}\n").unwrap_err();
        assert_eq!(e, "sweep.vary: names no key to vary");
        let e = check("[sweep]\nmode = \"random\"\nvary = { a = [1] }\n").unwrap_err();
        assert!(e.contains("sweep.mode"), "{e}");
        let big = (0..7).map(|i| format!("k{i} = [1,2,3,4,5,6,7,8,9,10]")).collect::<Vec<_>>().join(", ");
        let e = check(&format!("[sweep]\nvary = {{ {big} }}\n")).unwrap_err();
        assert!(e.contains("more than 1000000 points"), "{e}");
    }
}
