//! The wait-state tables (formats/waits.md): totals by pattern, by pattern and
//! procedure, by pattern and process, and the largest waits.

use crate::table::{Cell, Table, Unit};
use crate::{Analysis, Error, Result};
use rustc_hash::FxHashMap;
use spoor_model::{LocId, StrId};
use spoor_waits::{proc_name, Instance, Pattern};
use std::collections::BTreeMap;

/// Count and time of some waits.
#[derive(Default)]
struct Sum {
    count: u64,
    time: i64,
    max: i64,
}

impl Sum {
    fn add(&mut self, i: &Instance) {
        self.count += 1;
        self.time += i.duration;
        self.max = self.max.max(i.duration);
    }
}

impl Sum {
    fn merge(&mut self, o: &Sum) {
        self.count += o.count;
        self.time += o.time;
        self.max = self.max.max(o.max);
    }
}

/// What the tables are made from (see [`Analysis::summary`]).
struct Summary {
    /// The focused waits' sums by pattern, procedure and location: the few keys every
    /// table's sums are gathered from.
    by_site: FxHashMap<(Pattern, StrId, LocId), Sum>,
    /// The longest focused waits' indices, longest first.
    largest: Vec<usize>,
    /// The time of every delay-caused wait, focused or not.
    delay_caused_ns: i64,
}

/// The `top` longest waits offered, kept in a heap whose greatest is the least of them:
/// millions of waits, a comparison each.
struct Largest {
    top: usize,
    kept: std::collections::BinaryHeap<(std::cmp::Reverse<i64>, LocId, i64, usize)>,
}

impl Largest {
    fn new(top: usize) -> Largest {
        Largest { top, kept: std::collections::BinaryHeap::with_capacity(top + 1) }
    }

    fn offer(&mut self, k: usize, i: &Instance) {
        let x = (std::cmp::Reverse(i.duration), i.loc, i.start, k);
        if self.kept.len() < self.top {
            self.kept.push(x);
        } else if self.kept.peek().is_some_and(|least| x < *least) {
            self.kept.pop();
            self.kept.push(x);
        }
    }

    /// The indices kept, longest first (ties: location, start).
    fn indices(self) -> Vec<usize> {
        self.kept.into_sorted_vec().into_iter().map(|x| x.3).collect()
    }
}

/// `by_site`'s sums gathered by `key`.
fn sums<K: Ord>(
    by_site: &FxHashMap<(Pattern, StrId, LocId), Sum>,
    key: impl Fn(Pattern, StrId, LocId) -> K,
) -> BTreeMap<K, Sum> {
    let mut m: BTreeMap<K, Sum> = BTreeMap::new();
    for (&(p, f, l), s) in by_site {
        m.entry(key(p, f, l)).or_default().merge(s);
    }
    m
}

/// Rows sorted by time, largest first (ties: the key's order).
fn by_time<K: Ord + Clone>(m: BTreeMap<K, Sum>) -> Vec<(K, Sum)> {
    let mut v: Vec<(K, Sum)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.time.cmp(&a.1.time).then_with(|| a.0.cmp(&b.0)));
    v
}

impl Analysis {
    /// The waits of the focused locations, with their index in `WaitStates::instances`.
    fn focused_waits<'a>(
        &'a self,
        w: &'a spoor_waits::WaitStates,
    ) -> impl Iterator<Item = (usize, &'a Instance)> + 'a {
        w.instances.iter().enumerate().filter(|(_, i)| self.focused(i))
    }

    fn focused(&self, i: &Instance) -> bool {
        self.focus.get(i.loc as usize) == Some(&true)
    }

    /// The `top` longest waits of the focused locations, longest first (none without
    /// wait states).
    pub fn largest_waits(&self) -> Vec<&Instance> {
        let Ok(w) = self.wait_states() else { return Vec::new() };
        self.largest_wait_indices().into_iter().map(|k| &w.instances[k]).collect()
    }

    /// The indices (in `WaitStates::instances`) of the `top` longest focused waits,
    /// longest first (ties: location, start); none without wait states.
    fn largest_wait_indices(&self) -> Vec<usize> {
        let Ok(w) = self.wait_states() else { return Vec::new() };
        let mut largest = Largest::new(self.opts.top);
        for (k, i) in self.focused_waits(w) {
            largest.offer(k, i);
        }
        largest.indices()
    }

    /// What the tables read of every wait, in one pass (millions of waits): the focused
    /// waits' sums and longest, and the time of all delay-caused waits.
    fn summary(&self, w: &spoor_waits::WaitStates) -> Summary {
        let mut by_site: FxHashMap<(Pattern, StrId, LocId), Sum> = FxHashMap::default();
        let mut largest = Largest::new(self.opts.top);
        let mut delay_caused_ns = 0;
        for (k, i) in w.instances.iter().enumerate() {
            if spoor_waits::caused_by_delay(i.pattern) {
                delay_caused_ns += i.duration;
            }
            if self.focused(i) {
                by_site.entry((i.pattern, i.proc, i.loc)).or_default().add(i);
                largest.offer(k, i);
            }
        }
        Summary { by_site, largest: largest.indices(), delay_caused_ns }
    }

    /// The wait-state tables: by pattern, pattern × procedure, pattern × process, and the
    /// `top` largest waits.
    pub fn waits_tables(&self) -> Result<Vec<Table>> {
        let w = self.wait_states().map_err(|e| Error::Bad(format!("no wait states: {e}")))?;
        let cols = [("instances", Unit::Count), ("time", Unit::Ns), ("max", Unit::Ns)];
        let sum_cells =
            |s: &Sum| vec![Cell::Num(s.count as f64), Cell::Num(s.time as f64), Cell::Num(s.max as f64)];
        let with = |first: &[(&'static str, Unit)]| -> Vec<(&'static str, Unit)> {
            first.iter().chain(cols.iter()).copied().collect()
        };
        let mut by_pattern =
            Table::new("waits.pattern", "Wait states by pattern", &with(&[("pattern", Unit::Text)]));
        let Summary { by_site, largest, delay_caused_ns } = self.summary(w);
        for (p, s) in by_time(sums(&by_site, |p, _, _| p)) {
            let mut row = vec![Cell::Text(p.name().into())];
            row.extend(sum_cells(&s));
            by_pattern.push(row);
        }
        if by_site.is_empty() {
            by_pattern.notes.push("no process waited".into());
        }
        by_pattern.notes.extend(w.notes());
        let mut by_proc = Table::new(
            "waits.procedure",
            "Wait states by pattern and procedure",
            &with(&[("pattern", Unit::Text), ("procedure", Unit::Text)]),
        );
        let by_proc_name = sums(&by_site, |p, f, _| (p, f))
            .into_iter()
            .map(|((p, f), s)| ((p, proc_name(&self.defs, f)), s))
            .collect();
        for ((p, f), s) in by_time(by_proc_name) {
            let mut row = vec![Cell::Text(p.name().into()), Cell::Text(f)];
            row.extend(sum_cells(&s));
            by_proc.push(row);
        }
        let mut by_process = Table::new(
            "waits.process",
            "Wait states by pattern and process",
            &with(&[("pattern", Unit::Text), ("process", Unit::Text)]),
        );
        let d = &self.defs;
        let by_process_name = sums(&by_site, |p, _, l| (p, d.locations.get(l as usize).map(|l| l.process)))
            .into_iter()
            .map(|((p, process), s)| {
                let name = process.and_then(|q| d.processes.get(q as usize)).map_or_else(
                    || "(undefined process)".to_owned(),
                    |q| d.strings.name(q.name).into_owned(),
                );
                ((p, name), s)
            })
            .collect();
        for ((p, name), s) in by_time(by_process_name) {
            let mut row = vec![Cell::Text(p.name().into()), Cell::Text(name)];
            row.extend(sum_cells(&s));
            by_process.push(row);
        }
        Ok(vec![
            by_pattern,
            by_proc,
            by_process,
            self.largest_waits_table(w, &largest),
            self.causes_table(w, delay_caused_ns),
        ])
    }

    fn largest_waits_table(&self, w: &spoor_waits::WaitStates, largest: &[usize]) -> Table {
        let mut t = Table::new(
            "waits.largest",
            "The largest waits",
            &[
                ("pattern", Unit::Text),
                ("location", Unit::Text),
                ("call path", Unit::Text),
                ("start", Unit::Ns),
                ("duration", Unit::Ns),
                ("waited for", Unit::Text),
                ("kind", Unit::Text),
            ],
        );
        let origin = self.span().map_or(0, |s| s.0);
        for &k in largest {
            let i = &w.instances[k];
            let cause = i.cause.map_or_else(String::new, |c| {
                format!("{} event {}", self.defs.location_label(c.loc), c.index)
            });
            t.push(vec![
                Cell::Text(i.pattern.name().into()),
                Cell::Text(self.defs.location_label(i.loc)),
                Cell::Text(w.callpaths.render(&self.defs, i.callpath)),
                Cell::Num((i.start - origin) as f64),
                Cell::Num(i.duration as f64),
                Cell::Text(cause),
                Cell::Text(kind(w.causes.waits[k])),
            ]);
        }
        t.notes.push("start: since the run's first event".into());
        t.notes.push("kind: direct (caused by work alone) or indirect (partly by the other side's own waiting); propagating (it made others wait in turn) or terminal".into());
        t
    }

    /// The delays behind the waits: the work of each location and call path that made
    /// others wait, with its short- and long-term cost (formats/waits.md, "Root causes").
    /// `waited`: the time of every delay-caused wait.
    fn causes_table(&self, w: &spoor_waits::WaitStates, waited: i64) -> Table {
        let mut t = Table::new(
            "waits.causes",
            "Root causes of the waits: work that made others wait",
            &[
                ("location", Unit::Text),
                ("call path", Unit::Text),
                ("short-term cost", Unit::Ns),
                ("long-term cost", Unit::Ns),
                ("cost", Unit::Ns),
                ("of all waits", Unit::Pct),
            ],
        );
        for d in w.causes.delays.iter().take(self.opts.top) {
            t.push(vec![
                Cell::Text(self.defs.location_label(d.loc)),
                Cell::Text(w.callpaths.render(&self.defs, d.callpath)),
                Cell::Num(d.short_term_ns.round()),
                Cell::Num(d.long_term_ns.round()),
                Cell::Num(d.cost_ns().round()),
                if waited > 0 { Cell::Num(100.0 * d.cost_ns() / waited as f64) } else { Cell::Empty },
            ]);
        }
        if w.causes.unattributed_ns > 0.5 {
            t.notes.push(format!(
                "{:.3} ms of waiting found no work behind it (nothing ran on the other side since the two last synchronized)",
                w.causes.unattributed_ns / 1e6
            ));
        }
        t
    }
}

fn kind(c: Option<spoor_waits::WaitCause>) -> String {
    match c {
        None => String::new(),
        Some(c) => format!(
            "{}, {}",
            if c.direct() { "direct" } else { "indirect" },
            if c.propagating() { "propagating" } else { "terminal" }
        ),
    }
}
