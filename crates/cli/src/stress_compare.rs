//! `tengen eval compare BASE NEW`: two stress runs (`eval rendered --stress --out DIR`) set side
//! by side bucket by bucket, so the house rule "a change is kept only if no stress bucket gets
//! worse" is checked by a committed command rather than by eye.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde::Deserialize;

/// The figures of one bucket that the rule judges (the report's other fields are ignored).
#[derive(Debug, Clone, Deserialize)]
struct BucketFigures {
    name: String,
    frames: usize,
    located: usize,
    found: usize,
    points_right: u64,
    exact: usize,
    hands_flagged: usize,
    clean_flagged: usize,
    #[serde(default)]
    margin_only_flagged: usize,
}

#[derive(Debug, Deserialize)]
struct StressReport {
    buckets: Vec<BucketFigures>,
}

/// How one judged figure moved between the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Worse,
    Better,
    Same,
}

/// One figure of a bucket in both runs, and which way is better.
struct Figure {
    label: &'static str,
    base: u64,
    new: u64,
    higher_is_better: bool,
}

impl Figure {
    fn change(&self) -> Change {
        match (self.new.cmp(&self.base), self.higher_is_better) {
            (std::cmp::Ordering::Equal, _) => Change::Same,
            (std::cmp::Ordering::Greater, true) | (std::cmp::Ordering::Less, false) => Change::Better,
            _ => Change::Worse,
        }
    }
}

/// The judged figures of a bucket in both runs. Margin-only hands are shown but not judged: a
/// hand over the margin alone may or may not be worth a flag.
fn figures(base: &BucketFigures, new: &BucketFigures) -> Vec<Figure> {
    let figure = |label, base: usize, new: usize, higher_is_better| Figure {
        label,
        base: base as u64,
        new: new as u64,
        higher_is_better,
    };
    vec![
        figure("located", base.located, new.located, true),
        figure("found", base.found, new.found, true),
        Figure { label: "points right", base: base.points_right, new: new.points_right, higher_is_better: true },
        figure("exact", base.exact, new.exact, true),
        figure("hands flagged", base.hands_flagged, new.hands_flagged, true),
        figure("clean flagged", base.clean_flagged, new.clean_flagged, false),
    ]
}

fn load(dir: &Path) -> anyhow::Result<StressReport> {
    let path = dir.join("eval-stress.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a stress report", path.display()))
}

/// The comparison as text (one line per bucket that moved, then a summary) and whether any
/// bucket got worse or is missing from the new run.
fn compare(base: &StressReport, new: &StressReport) -> (String, bool) {
    let new_by_name: BTreeMap<&str, &BucketFigures> = new.buckets.iter().map(|b| (b.name.as_str(), b)).collect();
    let mut out = String::new();
    let (mut worse, mut better, mut missing) = (0usize, 0usize, 0usize);
    let mut totals: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    for b in &base.buckets {
        let Some(n) = new_by_name.get(b.name.as_str()) else {
            missing += 1;
            out.push_str(&format!("MISSING {}\n", b.name));
            continue;
        };
        let figures = figures(b, n);
        for f in &figures {
            let t = totals.entry(f.label).or_default();
            t.0 += f.base;
            t.1 += f.new;
        }
        let moved: Vec<&Figure> = figures.iter().filter(|f| f.change() != Change::Same).collect();
        let margin_moved = b.margin_only_flagged != n.margin_only_flagged;
        if moved.is_empty() && !margin_moved && b.frames == n.frames {
            continue;
        }
        let is_worse = moved.iter().any(|f| f.change() == Change::Worse);
        let tag = if is_worse {
            worse += 1;
            "WORSE "
        } else if moved.iter().any(|f| f.change() == Change::Better) {
            better += 1;
            "better"
        } else {
            "moved "
        };
        let mut parts: Vec<String> = moved.iter().map(|f| format!("{} {} -> {}", f.label, f.base, f.new)).collect();
        if margin_moved {
            parts.push(format!("margin-only flagged {} -> {}", b.margin_only_flagged, n.margin_only_flagged));
        }
        if b.frames != n.frames {
            parts.push(format!("frames {} -> {}", b.frames, n.frames));
        }
        out.push_str(&format!("{tag} {}: {}\n", b.name, parts.join(", ")));
    }
    out.push_str(&format!("\n{worse} buckets worse, {better} better, {missing} missing, of {}\n", base.buckets.len()));
    let totals: Vec<String> = totals.iter().map(|(label, (b, n))| format!("{label} {b} -> {n}")).collect();
    out.push_str(&format!("totals: {}\n", totals.join(", ")));
    (out, worse > 0 || missing > 0)
}

/// Runs `tengen eval compare BASE NEW`: exit status 1 when a bucket got worse or is missing.
pub fn run(base: &Path, new: &Path) -> anyhow::Result<ExitCode> {
    let (text, failed) = compare(&load(base)?, &load(new)?);
    print!("{text}");
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(name: &str, points_right: u64, clean_flagged: usize) -> BucketFigures {
        BucketFigures {
            name: name.into(),
            frames: 8,
            located: 8,
            found: 8,
            points_right,
            exact: 6,
            hands_flagged: 0,
            clean_flagged,
            margin_only_flagged: 0,
        }
    }

    #[test]
    fn a_bucket_that_loses_a_point_or_gains_a_false_flag_is_worse() {
        let base = StressReport { buckets: vec![bucket("a", 100, 0), bucket("b", 100, 0), bucket("c", 100, 0)] };
        let new = StressReport { buckets: vec![bucket("a", 101, 0), bucket("b", 99, 0), bucket("c", 100, 1)] };
        let (text, failed) = compare(&base, &new);
        assert!(failed);
        assert!(text.contains("better a: points right 100 -> 101"), "{text}");
        assert!(text.contains("WORSE  b: points right 100 -> 99"), "{text}");
        assert!(text.contains("WORSE  c: clean flagged 0 -> 1"), "{text}");
        assert!(text.contains("2 buckets worse, 1 better, 0 missing, of 3"), "{text}");
    }

    #[test]
    fn identical_runs_pass_and_a_missing_bucket_fails() {
        let base = StressReport { buckets: vec![bucket("a", 100, 0), bucket("b", 50, 1)] };
        let same = StressReport { buckets: base.buckets.clone() };
        assert!(!compare(&base, &same).1);
        let fewer = StressReport { buckets: vec![bucket("a", 100, 0)] };
        let (text, failed) = compare(&base, &fewer);
        assert!(failed && text.contains("MISSING b"), "{text}");
    }

    #[test]
    fn a_report_is_read_from_the_json_the_suite_writes() {
        let json = r#"{"title":"t","buckets":[{"name":"hall/typical","frames":8,"located":8,"found":8,
            "found_pct":100.0,"points_right":2888,"exact":8,"hands_flagged":0,"clean_flagged":0,
            "margin_only_flagged":0,"misses":[]}]}"#;
        let report: StressReport = serde_json::from_str(json).expect("a stress report");
        assert_eq!(report.buckets[0].points_right, 2888);
        assert!(serde_json::from_str::<StressReport>("{\"buckets\": 3}").is_err());
    }
}
