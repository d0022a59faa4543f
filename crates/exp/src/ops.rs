//! Karavanic's operators over stored runs (formats/exp.md): structural merge and
//! difference, resource mapping, the performance difference operator, the regression
//! gate, scaling with the POP model's factors, and search directives from history.

use crate::query::Runs;
use crate::store::Store;
use crate::Error;
use std::collections::{BTreeMap, BTreeSet};

/// Runs named by the user, resolved: their ids (a set's, in order) and a label.
#[derive(Clone, Debug)]
pub struct Side {
    pub ids: Vec<i64>,
    pub label: String,
}

impl Side {
    pub fn resolve(store: &Store, runs: &Runs, text: &str) -> Result<Side, Error> {
        let ids = match runs {
            Runs::Id(id) => {
                store.expect_run(*id)?;
                vec![*id]
            }
            Runs::Where(q) => store.select(Some(q))?,
        };
        if ids.is_empty() {
            return Err(Error::Usage(format!("{}: no run matches `{text}`", store.path())));
        }
        let label = match runs {
            Runs::Id(id) => format!("run {id}"),
            Runs::Where(_) => {
                format!("{} run{} where {text}", ids.len(), if ids.len() == 1 { "" } else { "s" })
            }
        };
        Ok(Side { ids, label })
    }
}

/// Names of one side mapped onto the other's: `from -> to`, a name and all below it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mapping(Vec<(String, String)>);

impl Mapping {
    pub fn new(pairs: Vec<(String, String)>) -> Mapping {
        Mapping(pairs)
    }

    /// Reads a map file (formats/exp.md, "Mapping"): `FROM -> TO` a line, `#` comments.
    pub fn parse(file: &str, text: &str) -> Result<Mapping, Error> {
        let mut pairs = Vec::new();
        for (k, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |why: &str| Error::Usage(format!("{file}:{}: {why}", k + 1));
            let (from, to) = line.split_once("->").ok_or_else(|| bad("expected `FROM -> TO`"))?;
            let (from, to) = (from.trim(), to.trim());
            for n in [from, to] {
                if !n.starts_with('/') || n.len() < 2 {
                    return Err(bad(&format!(
                        "`{n}` is not a resource name (they start with `/`: /Code/solve)"
                    )));
                }
            }
            if pairs.iter().any(|(f, _): &(String, String)| f == from) {
                return Err(bad(&format!("`{from}` is mapped twice")));
            }
            pairs.push((from.to_owned(), to.to_owned()));
        }
        Ok(Mapping(pairs))
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// `name` under the mapping: the longest `from` that is it or an ancestor of it is
    /// replaced (once: a swap of two ranks maps both ways). A focus of several parts
    /// (`/Code/f, /Process/p`) that no `from` covers whole maps part by part (a
    /// procedure's own name may hold `, `: `/Code/pair<int, int>`).
    pub fn apply(&self, name: &str) -> String {
        let best = self
            .0
            .iter()
            .filter(|(f, _)| {
                name == f || (name.starts_with(f.as_str()) && name.as_bytes().get(f.len()) == Some(&b'/'))
            })
            .max_by_key(|(f, _)| f.len());
        match best {
            Some((f, t)) => format!("{t}{}", &name[f.len()..]),
            None if name.contains(", /") && !self.0.is_empty() => {
                focus_parts(name).map(|p| self.apply(p)).collect::<Vec<_>>().join(", ")
            }
            None => name.to_owned(),
        }
    }
}

/// The structural merge of the runs of a side: every resource any of them has.
pub fn structure(store: &Store, side: &Side, map: &Mapping) -> Result<BTreeSet<String>, Error> {
    let mut all = BTreeSet::new();
    for &id in &side.ids {
        for r in store.resources(id)? {
            all.insert(map.apply(&r));
        }
    }
    Ok(all)
}

/// The structural difference: resources both have, only A, only B.
pub struct StructDiff {
    pub shared: Vec<String>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

pub fn struct_diff(a: &BTreeSet<String>, b: &BTreeSet<String>) -> StructDiff {
    StructDiff {
        shared: a.intersection(b).cloned().collect(),
        only_a: a.difference(b).cloned().collect(),
        only_b: b.difference(a).cloned().collect(),
    }
}

fn parent(name: &str) -> &str {
    name.rfind('/').map_or("", |i| &name[..i])
}

fn depth(name: &str) -> usize {
    name.matches('/').count()
}

/// A mapping that makes A's structure B's when the two differ only by names: level by
/// level from the top, where a parent has as many resources only in A as only in B, they
/// are paired in order. Empty when no such pairing makes the structures equal.
pub fn suggest_mapping(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Mapping {
    let mut map = Mapping::default();
    let max_depth = a.iter().chain(b).map(|n| depth(n)).max().unwrap_or(0);
    for d in 2..=max_depth {
        let mapped: BTreeSet<String> = a.iter().map(|n| map.apply(n)).collect();
        let mut groups: BTreeMap<&str, (Vec<&String>, Vec<&String>)> = BTreeMap::new();
        for n in mapped.difference(b).filter(|n| depth(n) == d) {
            groups.entry(parent(n)).or_default().0.push(n);
        }
        for n in b.difference(&mapped).filter(|n| depth(n) == d) {
            groups.entry(parent(n)).or_default().1.push(n);
        }
        let mut found = Vec::new();
        for (_, (xs, ys)) in groups {
            if xs.len() != ys.len() {
                return Mapping::default();
            }
            // Sorted by number where names differ only by one (rank 2 before rank 10).
            let (mut xs, mut ys) = (xs, ys);
            xs.sort_by(|p, q| natural(p, q));
            ys.sort_by(|p, q| natural(p, q));
            for (x, y) in xs.into_iter().zip(ys) {
                // `x` is A's name already mapped: map its original.
                let original = a.iter().find(|o| map.apply(o) == *x).cloned().unwrap_or_else(|| x.clone());
                found.push((original, y.clone()));
            }
        }
        map.0.extend(found);
    }
    let mapped: BTreeSet<String> = a.iter().map(|n| map.apply(n)).collect();
    if mapped == *b {
        map
    } else {
        Mapping::default()
    }
}

/// Compares names with their digit runs as numbers.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let b = s.as_bytes();
        for i in 1..=b.len() {
            if i == b.len() || b[i].is_ascii_digit() != b[start].is_ascii_digit() {
                out.push((b[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x.0 && y.0, x.1.parse::<u128>(), y.1.parse::<u128>()) {
            (true, Ok(p), Ok(q)) => p.cmp(&q),
            _ => x.1.cmp(y.1),
        };
        if o.is_ne() {
            return o;
        }
    }
    pa.len().cmp(&pb.len())
}

/// A side's metrics: one run's, or the median over a set's runs of each (focus, metric)
/// (a run without it counts as 0: a procedure one version does not have took no time).
pub fn metrics(store: &Store, side: &Side, map: &Mapping) -> Result<BTreeMap<(String, String), f64>, Error> {
    let mut all: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for &id in &side.ids {
        for (f, m, v) in store.metrics(id)? {
            all.entry((map.apply(&f), m)).or_default().push(v);
        }
    }
    let n = side.ids.len();
    Ok(all
        .into_iter()
        .map(|(k, mut v)| {
            v.resize(n, 0.0);
            (k, median(&mut v))
        })
        .collect())
}

pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// A (focus, metric)'s value, 0 where it was never charged.
fn value(m: &BTreeMap<(String, String), f64>, focus: &str, metric: &str) -> f64 {
    m.get(&(focus.to_owned(), metric.to_owned())).copied().unwrap_or(0.0)
}

/// One focus-metric pair whose values differ beyond the threshold.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Difference {
    pub focus: String,
    pub metric: String,
    pub a: f64,
    pub b: f64,
    /// (b - a) / a; infinite when only B has it.
    pub change: f64,
    /// |b - a| as a share of the program's value of the metric (the larger side's).
    pub share: f64,
}

/// The performance difference operator: every (focus, metric) whose value changed by
/// more than `threshold` (a fraction of A's value) and by at least `min_share` of the
/// program's value of that metric (so that a procedure of a microsecond that doubled is
/// not news), the largest share first.
pub fn difference(
    a: &BTreeMap<(String, String), f64>,
    b: &BTreeMap<(String, String), f64>,
    threshold: f64,
    min_share: f64,
) -> Vec<Difference> {
    let keys: BTreeSet<&(String, String)> = a.keys().chain(b.keys()).collect();
    let program = |m: &str| value(a, "/", m).abs().max(value(b, "/", m).abs());
    let mut out = Vec::new();
    for k in keys {
        let (x, y) = (a.get(k).copied().unwrap_or(0.0), b.get(k).copied().unwrap_or(0.0));
        let d = y - x;
        if d == 0.0 {
            continue;
        }
        let change = if x != 0.0 { d / x.abs() } else { f64::INFINITY * d.signum() };
        let whole = program(&k.1);
        let share = if whole > 0.0 { d.abs() / whole } else { 1.0 };
        if change.abs() > threshold && share >= min_share {
            out.push(Difference { focus: k.0.clone(), metric: k.1.clone(), a: x, b: y, change, share });
        }
    }
    out.sort_by(|p, q| {
        q.share.total_cmp(&p.share).then_with(|| p.focus.cmp(&q.focus)).then(p.metric.cmp(&q.metric))
    });
    out
}

/// One regression the gate found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Regression {
    pub focus: String,
    pub metric: String,
    pub baseline: f64,
    pub new: f64,
    /// The growth as a share of what it is judged against (the baseline's elapsed time,
    /// critical path or waiting).
    pub growth: f64,
}

/// The regression gate: elapsed time grown by more than `max` of the baseline's; any
/// focus's time on the critical path grown by more than `max` of the baseline's path;
/// any focus's wait state grown by more than `max` of the baseline's elapsed time.
pub fn check(
    base: &BTreeMap<(String, String), f64>,
    new: &BTreeMap<(String, String), f64>,
    max: f64,
) -> Vec<Regression> {
    let elapsed = value(base, "/", "elapsed");
    let path = value(base, "/", "cp");
    let mut out = Vec::new();
    let mut judge = |focus: &str, metric: &str, against: f64| {
        let (x, y) = (value(base, focus, metric), value(new, focus, metric));
        if against > 0.0 && (y - x) / against > max {
            out.push(Regression {
                focus: focus.to_owned(),
                metric: metric.to_owned(),
                baseline: x,
                new: y,
                growth: (y - x) / against,
            });
        }
    };
    judge("/", "elapsed", elapsed);
    let keys: BTreeSet<&(String, String)> = base.keys().chain(new.keys()).collect();
    for (focus, metric) in keys {
        // Which processes the path crosses shifts from run to run; what it spends in
        // each procedure does not.
        let composition = focus == "/" || focus.starts_with("/Code/");
        if composition && (metric == "cp" || metric.starts_with("cp.")) {
            judge(focus, metric, path);
        } else if metric.starts_with("waits.") {
            judge(focus, metric, elapsed);
        }
    }
    out.sort_by(|p, q| q.growth.total_cmp(&p.growth).then_with(|| p.focus.cmp(&q.focus)));
    out
}

/// One process count of a scaling study, with the POP model's factors (fractions).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScalingRow {
    pub procs: i64,
    pub runs: usize,
    pub elapsed_ns: f64,
    pub speedup: f64,
    pub global_efficiency: f64,
    pub parallel_efficiency: f64,
    pub load_balance: f64,
    pub communication_efficiency: f64,
    pub serialization_efficiency: f64,
    pub transfer_efficiency: f64,
    pub computation_scalability: f64,
}

/// The POP factors of each process count among `ids` (medians over runs of the same
/// count), against the fewest processes: formats/exp.md, "Scaling".
pub fn scaling(store: &Store, ids: &[i64]) -> Result<Vec<ScalingRow>, Error> {
    let mut by_procs: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &id in ids {
        let run = store.expect_run(id)?;
        let procs = run
            .attrs
            .iter()
            .find(|(k, _)| k == "procs")
            .and_then(|(_, v)| v.trim().parse::<i64>().ok())
            .ok_or_else(|| Error::Usage(format!("run {id} has no `procs` attribute")))?;
        by_procs.entry(procs).or_default().push(id);
    }
    let mut rows = Vec::new();
    // The fewest processes' elapsed time and useful computation.
    let mut reference: Option<(f64, f64)> = None;
    for (procs, ids) in by_procs {
        let side = Side { ids: ids.clone(), label: String::new() };
        let m = metrics(store, &side, &Mapping::default())?;
        let get = |k: &str| value(&m, "/", k);
        let (elapsed, ideal) = (get("elapsed"), get("ideal_network"));
        let (umax, umean, usum) = (get("useful.max"), get("useful.mean"), get("useful"));
        if elapsed <= 0.0 || umax <= 0.0 || ideal <= 0.0 {
            return Err(Error::Usage(format!(
                "the runs with {procs} processes have no useful computation or no elapsed time: no POP factors"
            )));
        }
        let (e0, u0) = *reference.get_or_insert((elapsed, usum));
        let lb = umean / umax;
        let ser = (umax / ideal).min(1.0);
        let trans = (ideal / elapsed).min(1.0);
        let comm = umax / elapsed;
        let comp = if usum > 0.0 { u0 / usum } else { 0.0 };
        rows.push(ScalingRow {
            procs,
            runs: ids.len(),
            elapsed_ns: elapsed,
            speedup: e0 / elapsed,
            global_efficiency: lb * comm * comp,
            parallel_efficiency: lb * comm,
            load_balance: lb,
            communication_efficiency: comm,
            serialization_efficiency: ser,
            transfer_efficiency: trans,
            computation_scalability: comp,
        });
    }
    Ok(rows)
}

/// What the directives writer found for one hypothesis-focus pair over the runs.
#[derive(Default)]
struct PairHistory {
    tested: usize,
    true_in: usize,
    /// The runs where it was tested, to tell "false in all" from "false where tested".
    runs: BTreeSet<i64>,
}

/// Search directives from the runs' Search History Graphs (Karavanic ch. 5): a pair that
/// tested true in any run gets priority high; one false in every run that tested it is
/// pruned (with `prune` false: priority low instead); each hypothesis that was true gets a
/// threshold of `margin` times the smallest value it was true with, when that is above
/// the threshold it was tested against (fewer marginal true nodes, every historic one
/// kept). The text of a directives file (formats/diagnose.md).
pub fn directives(store: &Store, ids: &[i64], prune: bool, margin: f64) -> Result<String, Error> {
    let mut pairs: BTreeMap<(String, String), PairHistory> = BTreeMap::new();
    let mut lowest_true: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for &id in ids {
        store.expect_run(id)?;
        for n in store.shg(id)? {
            if n.state != "true" && n.state != "false" {
                continue;
            }
            let h = pairs.entry((n.hypothesis.clone(), n.focus.clone())).or_default();
            h.tested += 1;
            h.runs.insert(id);
            if n.state == "true" {
                h.true_in += 1;
                let v = n.value.unwrap_or(0.0);
                let e = lowest_true.entry(n.hypothesis.clone()).or_insert((v, n.threshold));
                e.0 = e.0.min(v);
                e.1 = e.1.max(n.threshold);
            }
        }
    }
    let mut out = format!(
        "# search directives from {} run{} ({}): spoor-exp directives\n",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
    );
    for (h, (v, threshold)) in &lowest_true {
        let t = margin * v;
        if t > *threshold {
            out.push_str(&format!("threshold {h} {}\n", round4(t)));
        }
    }
    // A prune reaches below its focus, where a pair reached another way may have been
    // true (cpu_bound false at /Code/f, true at /Code/f, /Process/p).
    let true_below =
        |h: &str, f: &str| pairs.iter().any(|((h2, f2), p)| h2 == h && p.true_in > 0 && focus_within(f2, f));
    for ((h, f), p) in &pairs {
        if p.true_in > 0 {
            out.push_str(&format!("priority {h} {f} high\n"));
        } else if p.runs.len() == ids.len() || !prune {
            if prune && !true_below(h, f) {
                out.push_str(&format!("prune {h} {f}\n"));
            } else {
                out.push_str(&format!("priority {h} {f} low\n"));
            }
        }
    }
    Ok(out)
}

/// A focus's parts, one per hierarchy: split where `, /` starts the next (a procedure's
/// name may hold `, ` itself).
fn focus_parts(focus: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(focus);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.find(", /") {
            Some(i) => {
                rest = Some(&r[i + 2..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Whether focus `f` lies within `within` in every hierarchy (formats/diagnose.md): each
/// part of `within` is a part of `f` or an ancestor of one.
pub fn focus_within(f: &str, within: &str) -> bool {
    if within == "/" {
        return true;
    }
    focus_parts(within).all(|w| {
        focus_parts(f).any(|p| p == w || (p.starts_with(w) && p.as_bytes().get(w.len()) == Some(&b'/')))
    })
}

fn round4(x: f64) -> f64 {
    (x * 1e4).floor() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn mapping_replaces_the_longest_ancestor_once() {
        let m = Mapping::parse(
            "m.txt",
            "# ranks swapped\n/Process/rank 1 -> /Process/rank 2\n/Process/rank 2 -> /Process/rank 1\n/Code/solve_v1 -> /Code/solve\n",
        )
        .unwrap();
        assert_eq!(m.apply("/Process/rank 1"), "/Process/rank 2");
        assert_eq!(m.apply("/Process/rank 2/thread 1"), "/Process/rank 1/thread 1");
        assert_eq!(m.apply("/Process/rank 10"), "/Process/rank 10");
        assert_eq!(m.apply("/Code/solve_v1, /Process/rank 1"), "/Code/solve, /Process/rank 2");
        assert_eq!(m.apply("/Code/solve_v12"), "/Code/solve_v12");
        // A procedure whose name holds `, ` maps whole.
        let t = Mapping::parse("t.txt", "/Code/pair<int, int> -> /Code/pair\n").unwrap();
        assert_eq!(t.apply("/Code/pair<int, int>"), "/Code/pair");
        assert_eq!(t.apply("/Code/pair<int, int>, /Process/p"), "/Code/pair, /Process/p");
        for (text, want) in [
            ("/a /b\n", "m.txt:1: expected `FROM -> TO`"),
            ("\n/a -> b\n", "m.txt:2: `b` is not a resource name"),
            ("/a -> /b\n/a -> /c\n", "m.txt:2: `/a` is mapped twice"),
        ] {
            let e = Mapping::parse("m.txt", text).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn a_renamed_machine_and_procedure_are_suggested() {
        let a =
            set(&["/Code/main", "/Code/solve_v1", "/Machine/n1", "/Machine/n1/rank 0", "/Machine/n1/rank 1"]);
        let b = set(&[
            "/Code/main",
            "/Code/solve",
            "/Machine/hostA",
            "/Machine/hostA/rank 0",
            "/Machine/hostA/rank 1",
        ]);
        let m = suggest_mapping(&a, &b);
        assert_eq!(
            m.pairs(),
            &[
                ("/Code/solve_v1".to_owned(), "/Code/solve".to_owned()),
                ("/Machine/n1".to_owned(), "/Machine/hostA".to_owned())
            ]
        );
        // Structures that differ by more than names get no suggestion.
        let c = set(&["/Code/main", "/Code/solve", "/Code/extra"]);
        assert!(suggest_mapping(&a, &c).pairs().is_empty());
        let d = struct_diff(&a, &b);
        assert_eq!(d.shared, vec!["/Code/main"]);
        assert_eq!(d.only_a.len(), 4);
    }

    #[test]
    fn ranks_pair_in_numeric_order() {
        let a = set(&["/Process/r2", "/Process/r10", "/Process/r9"]);
        let b = set(&["/Process/p9", "/Process/p2", "/Process/p10"]);
        let m = suggest_mapping(&a, &b);
        assert_eq!(m.apply("/Process/r2"), "/Process/p2");
        assert_eq!(m.apply("/Process/r10"), "/Process/p10");
    }

    fn metrics(rows: &[(&str, &str, f64)]) -> BTreeMap<(String, String), f64> {
        rows.iter().map(|&(f, m, v)| ((f.to_owned(), m.to_owned()), v)).collect()
    }

    #[test]
    fn the_difference_operator_by_hand() {
        let a = metrics(&[
            ("/", "time", 1000.0),
            ("/Code/f", "time", 400.0),
            ("/Code/g", "time", 1.0),
            ("/Code/h", "time", 100.0),
        ]);
        let b = metrics(&[
            ("/", "time", 1100.0),
            ("/Code/f", "time", 500.0),
            ("/Code/g", "time", 3.0),
            ("/Code/k", "time", 50.0),
            ("/Code/h", "time", 103.0),
        ]);
        let d = difference(&a, &b, 0.05, 0.005);
        let got: Vec<(&str, f64, f64)> = d.iter().map(|x| (x.focus.as_str(), x.change, x.share)).collect();
        // f +100 (25 %, 100/1100 of the program), / +100 (10 %), k new (50/1100); g
        // tripled but is 2/1100 of the program; h +3 %.
        assert_eq!(got[0], ("/", 0.1, 100.0 / 1100.0));
        assert_eq!(got[1], ("/Code/f", 0.25, 100.0 / 1100.0));
        assert_eq!(got[2].0, "/Code/k");
        assert!(got[2].1.is_infinite());
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn the_gate_by_hand() {
        let base = metrics(&[
            ("/", "elapsed", 1000.0),
            ("/", "cp", 900.0),
            ("/Code/f", "cp", 300.0),
            ("/", "waits.late_sender", 100.0),
        ]);
        let same = check(&base, &base, 0.05);
        assert!(same.is_empty());
        let new = metrics(&[
            ("/", "elapsed", 1040.0),
            ("/", "cp", 960.0),
            ("/Code/f", "cp", 360.0),
            ("/", "waits.late_sender", 160.0),
        ]);
        let r = check(&base, &new, 0.05);
        // f: +60 of a 900 path (6.7 %), late sender +60 of 1000 elapsed (6 %), the path
        // +60/900; elapsed +4 % passes.
        let names: Vec<(&str, &str)> = r.iter().map(|x| (x.focus.as_str(), x.metric.as_str())).collect();
        assert_eq!(names, vec![("/", "cp"), ("/Code/f", "cp"), ("/", "waits.late_sender")]);
    }

    #[test]
    fn foci_within_foci() {
        assert!(focus_within("/Code/f, /Process/p", "/Code/f"));
        assert!(focus_within("/Code/f, /Machine/m/p/t", "/Machine/m"));
        assert!(focus_within("/Code/f", "/"));
        assert!(!focus_within("/Code/f", "/Code/f, /Process/p"));
        assert!(!focus_within("/Code/foo", "/Code/f"));
    }

    #[test]
    fn medians_of_even_and_odd_sets() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
