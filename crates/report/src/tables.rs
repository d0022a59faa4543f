//! The tables of the report, made from an [`Analysis`] (formats/report.md).

use crate::analyze::{ArcStats, LocStats, Message, MinAvgMax, ProcStats, OUTSIDE, ROOT};
use crate::metric::{Level, Metric};
use crate::table::{Cell, Table, Unit};
use crate::{Analysis, Error, Result};
use spoor_model::{LocId, StrId};
use std::collections::BTreeMap;

/// The tables and pictures a report can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    Metrics,
    Profile,
    Callgraph,
    Npt,
    Utilization,
    Messages,
    Transactions,
    Histogram,
    Spacetime,
    Waits,
}

impl TableKind {
    pub const ALL: [TableKind; 10] = [
        TableKind::Metrics,
        TableKind::Profile,
        TableKind::Callgraph,
        TableKind::Npt,
        TableKind::Utilization,
        TableKind::Messages,
        TableKind::Transactions,
        TableKind::Histogram,
        TableKind::Spacetime,
        TableKind::Waits,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TableKind::Metrics => "metrics",
            TableKind::Profile => "profile",
            TableKind::Callgraph => "callgraph",
            TableKind::Npt => "npt",
            TableKind::Utilization => "utilization",
            TableKind::Messages => "messages",
            TableKind::Transactions => "transactions",
            TableKind::Histogram => "histogram",
            TableKind::Spacetime => "spacetime",
            TableKind::Waits => "waits",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<TableKind, String> {
        TableKind::ALL.iter().copied().find(|t| t.name() == s).ok_or_else(|| {
            let names: Vec<&str> = TableKind::ALL.iter().map(|t| t.name()).collect();
            format!("unknown table `{s}`; the tables are: {}", names.join(", "))
        })
    }
}

/// A line of the space-time diagram: label, locations, busy and waiting time per column.
pub type SpacetimeRow = (String, Vec<LocId>, Vec<f64>, Vec<f64>);

/// One node of a level: its name, a parent name for context, and its locations.
struct Node {
    name: String,
    parent: String,
    locs: Vec<LocId>,
}

fn ns(v: i64) -> Cell {
    Cell::Num(v as f64)
}
fn num(v: u64) -> Cell {
    Cell::Num(v as f64)
}

impl Analysis {
    /// A procedure's name, the label of time outside every procedure for its id.
    pub(crate) fn proc_label(&self, id: StrId) -> String {
        self.s(id)
    }

    fn s(&self, id: StrId) -> String {
        if id == OUTSIDE {
            return spoor_model::OUTSIDE_ANY_PROCEDURE.into();
        }
        self.defs.strings.name(id).into_owned()
    }

    /// The nodes of a location level that hold focused locations, in id order.
    fn nodes(&self, level: Level) -> Vec<Node> {
        let d = &self.defs;
        let mut by: BTreeMap<u32, Vec<LocId>> = BTreeMap::new();
        for (l, loc) in d.locations.iter().enumerate() {
            if !self.focus[l] || self.pass.locs[l].seen.is_none() {
                continue;
            }
            let Some(p) = d.processes.get(loc.process as usize) else { continue };
            let key = match level {
                Level::Application => p.app,
                Level::Machine => p.machine,
                Level::Process => loc.process,
                Level::Thread | Level::Procedure => l as u32,
            };
            by.entry(key).or_default().push(l as LocId);
        }
        by.into_iter()
            .map(|(k, locs)| {
                let (name, parent) = match level {
                    Level::Application => (self.s(d.apps[k as usize].name), String::new()),
                    Level::Machine => (self.s(d.machines[k as usize].name), String::new()),
                    Level::Process => {
                        let p = &d.processes[k as usize];
                        (
                            self.s(p.name),
                            d.apps.get(p.app as usize).map(|a| self.s(a.name)).unwrap_or_default(),
                        )
                    }
                    Level::Thread | Level::Procedure => {
                        let loc = &d.locations[k as usize];
                        (
                            self.s(loc.name),
                            d.processes.get(loc.process as usize).map(|p| self.s(p.name)).unwrap_or_default(),
                        )
                    }
                };
                Node { name, parent, locs }
            })
            .collect()
    }

    /// The value of `m` over a group of locations (a node of a location level).
    fn loc_metric(&self, locs: &[LocId], m: Metric) -> f64 {
        let st: Vec<&LocStats> = locs.iter().map(|&l| &self.pass.locs[l as usize]).collect();
        let sum = |f: &dyn Fn(&LocStats) -> f64| st.iter().map(|s| f(s)).sum::<f64>();
        match m {
            Metric::Elapsed | Metric::SelfTime => {
                let firsts = st.iter().filter_map(|s| s.first);
                let lasts = st.iter().filter(|s| s.first.is_some()).map(|s| s.last);
                match (firsts.min(), lasts.max()) {
                    (Some(a), Some(b)) => (b - a) as f64,
                    _ => 0.0,
                }
            }
            Metric::Cpu | Metric::CpuSelf => {
                // CPU time is per process: each thread sees its process's; take the
                // largest a thread saw for each process, and add processes.
                let mut per: BTreeMap<u32, i64> = BTreeMap::new();
                for &l in locs {
                    let p = self.defs.locations[l as usize].process;
                    let e = per.entry(p).or_insert(0);
                    *e = (*e).max(self.pass.locs[l as usize].cpu);
                }
                per.values().sum::<i64>() as f64
            }
            Metric::Busy => sum(&|s| s.busy as f64),
            Metric::Wait => sum(&|s| (s.wait_recv + s.wait_coll + s.wait_lock) as f64),
            Metric::WaitRecv => sum(&|s| s.wait_recv as f64),
            Metric::WaitColl => sum(&|s| s.wait_coll as f64),
            Metric::WaitLock => sum(&|s| s.wait_lock as f64),
            Metric::MsgsSent => sum(&|s| s.msgs_sent as f64),
            Metric::BytesSent => sum(&|s| s.bytes_sent as f64),
            Metric::MsgsRecv => sum(&|s| s.msgs_recv as f64),
            Metric::BytesRecv => sum(&|s| s.bytes_recv as f64),
            Metric::Colls => sum(&|s| s.colls as f64),
            Metric::Calls => sum(&|s| s.calls as f64),
            Metric::Npt => sum(&|s| s.npt),
        }
    }

    /// Procedure totals over the focused locations, by procedure name (sorted).
    fn procedures(&self) -> Vec<(String, ProcStats)> {
        let mut by: BTreeMap<String, ProcStats> = BTreeMap::new();
        for p in &self.pass.procs {
            if !self.focus[p.loc as usize] {
                continue;
            }
            if p.proc == OUTSIDE && p.self_wall == 0 && p.msgs_sent == 0 && p.msgs_recv == 0 && p.colls == 0 {
                continue;
            }
            let e = by.entry(self.s(p.proc)).or_default();
            e.calls += p.calls;
            e.incl += if p.proc == OUTSIDE { p.self_wall } else { p.incl };
            e.incl_cpu += if p.proc == OUTSIDE { p.self_cpu } else { p.incl_cpu };
            e.self_wall += p.self_wall;
            e.self_cpu += p.self_cpu;
            e.busy += p.busy;
            e.wait_recv += p.wait_recv;
            e.wait_coll += p.wait_coll;
            e.wait_lock += p.wait_lock;
            e.msgs_sent += p.msgs_sent;
            e.bytes_sent += p.bytes_sent;
            e.msgs_recv += p.msgs_recv;
            e.bytes_recv += p.bytes_recv;
            e.colls += p.colls;
            e.npt += p.npt;
        }
        by.into_iter().collect()
    }

    fn proc_metric(p: &ProcStats, m: Metric) -> f64 {
        match m {
            Metric::Calls => p.calls as f64,
            Metric::Elapsed => p.incl as f64,
            Metric::SelfTime => p.self_wall as f64,
            Metric::Cpu => p.incl_cpu as f64,
            Metric::CpuSelf => p.self_cpu as f64,
            Metric::Busy => p.busy as f64,
            Metric::Wait => (p.wait_recv + p.wait_coll + p.wait_lock) as f64,
            Metric::WaitRecv => p.wait_recv as f64,
            Metric::WaitColl => p.wait_coll as f64,
            Metric::WaitLock => p.wait_lock as f64,
            Metric::MsgsSent => p.msgs_sent as f64,
            Metric::BytesSent => p.bytes_sent as f64,
            Metric::MsgsRecv => p.msgs_recv as f64,
            Metric::BytesRecv => p.bytes_recv as f64,
            Metric::Colls => p.colls as f64,
            Metric::Npt => p.npt,
        }
    }

    fn metric_ok(&self, m: Metric) -> Result<()> {
        if m == Metric::Npt && !self.ordered {
            return Err(Error::Bad(
                "the npt metric needs the events in one global time order (flag GLOBAL_ORDER): run spoor-order first"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Every node of `level` with every metric of the level: `metrics.LEVEL`.
    pub fn metric_table(&self, level: Level) -> Table {
        let metrics: Vec<Metric> =
            level.metrics().iter().copied().filter(|&m| m != Metric::Npt || self.ordered).collect();
        let mut cols: Vec<(&str, Unit)> = vec![(level.name(), Unit::Text)];
        match level {
            Level::Process => cols.push(("application", Unit::Text)),
            Level::Thread => cols.push(("process", Unit::Text)),
            _ => {}
        }
        cols.extend(metrics.iter().map(|m| (m.name(), m.unit())));
        let title = format!("Metric table: {} level", level.name());
        let mut t = Table::new(&format!("metrics.{}", level.name()), &title, &cols);
        if level == Level::Procedure {
            for (name, p) in self.procedures() {
                let mut row = vec![Cell::Text(name)];
                row.extend(metrics.iter().map(|&m| Cell::Num(Self::proc_metric(&p, m))));
                t.push(row);
            }
            t.notes.push(
                "elapsed and cpu are inclusive (outermost activations); self and cpu_self exclusive; waits, messages and npt where the procedure was the innermost".into(),
            );
            return t;
        }
        for n in self.nodes(level) {
            let mut row = vec![Cell::Text(n.name)];
            if matches!(level, Level::Process | Level::Thread) {
                row.push(Cell::Text(n.parent));
            }
            row.extend(metrics.iter().map(|&m| Cell::Num(self.loc_metric(&n.locs, m))));
            t.push(row);
        }
        t
    }

    /// One metric over every node of a level, largest first: `profile.LEVEL.METRIC`.
    pub fn profile_table(&self, level: Level, metric: Metric) -> Result<Table> {
        if !level.metrics().contains(&metric) {
            return Err(Error::Bad(Metric::parse(metric.name(), level).unwrap_err()));
        }
        self.metric_ok(metric)?;
        let mut rows: Vec<(String, f64)> = if level == Level::Procedure {
            self.procedures().into_iter().map(|(n, p)| (n, Self::proc_metric(&p, metric))).collect()
        } else {
            self.nodes(level).into_iter().map(|n| (n.name, self.loc_metric(&n.locs, metric))).collect()
        };
        rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let total: f64 = rows.iter().map(|r| r.1).sum();
        let title = format!("Profile: {} by {}", level.name(), metric.name());
        let mut t = Table::new(
            &format!("profile.{}.{}", level.name(), metric.name()),
            &title,
            &[(level.name(), Unit::Text), (metric.name(), metric.unit()), ("share", Unit::Pct)],
        );
        for (n, v) in rows {
            let share = if total > 0.0 { 100.0 * v / total } else { 0.0 };
            t.push(vec![Cell::Text(n), Cell::Num(v), Cell::Num(share)]);
        }
        Ok(t)
    }

    /// The NPT profile: normalized processor time per procedure, largest first.
    pub fn npt_table(&self) -> Result<Table> {
        self.metric_ok(Metric::Npt)?;
        let mut rows: Vec<(String, ProcStats)> = self.procedures();
        rows.sort_by(|a, b| b.1.npt.total_cmp(&a.1.npt).then_with(|| a.0.cmp(&b.0)));
        let total: f64 = rows.iter().map(|r| r.1.npt).sum();
        let mut t = Table::new(
            "npt",
            "NPT profile: normalized processor time (busy time / locations busy at the same moment)",
            &[
                ("procedure", Unit::Text),
                ("npt", Unit::Ns),
                ("share", Unit::Pct),
                ("busy", Unit::Ns),
                ("concurrency", Unit::Number),
            ],
        );
        for (n, p) in rows {
            let share = if total > 0.0 { 100.0 * p.npt / total } else { 0.0 };
            let conc = if p.npt > 0.0 { Cell::Num(p.busy as f64 / p.npt) } else { Cell::Empty };
            t.push(vec![Cell::Text(n), Cell::Num(p.npt), Cell::Num(share), ns(p.busy), conc]);
        }
        t.notes.push(
            "concurrency = busy / npt: the average number of locations busy while this procedure ran".into(),
        );
        Ok(t)
    }

    /// gprof's call graph: per procedure its callers, itself, its callees.
    pub fn callgraph_table(&self) -> Table {
        let mut arcs: BTreeMap<(StrId, StrId), ArcStats> = BTreeMap::new();
        for a in &self.pass.arcs {
            if !self.focus[a.loc as usize] {
                continue;
            }
            let e = arcs.entry((a.caller, a.callee)).or_default();
            e.calls += a.calls;
            e.self_wall += a.self_wall;
            e.child_wall += a.child_wall;
            e.self_cpu += a.self_cpu;
            e.child_cpu += a.child_cpu;
        }
        // Primary lines: everything that came into a procedure.
        let mut prim: BTreeMap<StrId, ArcStats> = BTreeMap::new();
        for (&(_, callee), a) in &arcs {
            let e = prim.entry(callee).or_default();
            e.calls += a.calls;
            e.self_wall += a.self_wall;
            e.child_wall += a.child_wall;
            e.self_cpu += a.self_cpu;
            e.child_cpu += a.child_cpu;
        }
        let mut order: Vec<(StrId, &ArcStats)> = prim.iter().map(|(&p, a)| (p, a)).collect();
        order.sort_by(|a, b| {
            let ta = a.1.self_wall + a.1.child_wall;
            let tb = b.1.self_wall + b.1.child_wall;
            tb.cmp(&ta).then_with(|| self.s(a.0).cmp(&self.s(b.0)))
        });
        let index: BTreeMap<StrId, usize> = order.iter().enumerate().map(|(i, (p, _))| (*p, i + 1)).collect();
        let mut t = Table::new(
            "callgraph",
            "Call graph (gprof): callers above each procedure, callees below",
            &[
                ("index", Unit::Count),
                ("role", Unit::Text),
                ("procedure", Unit::Text),
                ("calls", Unit::Count),
                ("self", Unit::Ns),
                ("children", Unit::Ns),
                ("cpu_self", Unit::Ns),
                ("cpu_children", Unit::Ns),
            ],
        );
        let name = |p: StrId| if p == ROOT { "<spontaneous>".to_owned() } else { self.s(p) };
        for (p, pa) in &order {
            let i = index[p] as f64;
            let line = |role: &str, who: StrId, a: &ArcStats| {
                vec![
                    Cell::Num(i),
                    Cell::Text(role.into()),
                    Cell::Text(name(who)),
                    num(a.calls),
                    ns(a.self_wall),
                    ns(a.child_wall),
                    ns(a.self_cpu),
                    ns(a.child_cpu),
                ]
            };
            for (&(caller, callee), a) in &arcs {
                if callee == *p {
                    t.push(line("caller", caller, a));
                }
            }
            t.push(line("primary", *p, pa));
            for (&(caller, callee), a) in &arcs {
                if caller == *p {
                    t.push(line("callee", callee, a));
                }
            }
        }
        t.notes.push("self and children of a caller or callee line: the callee's time during the calls along that arc; recursive calls count their time on every arc they pass".into());
        t
    }

    /// Enterprise's asset utilization, per process: busy, idle, blocked.
    pub fn utilization_table(&self) -> Table {
        let mut t = Table::new(
            "utilization",
            "Utilization per process (Enterprise): busy, idle, blocked",
            &[
                ("process", Unit::Text),
                ("application", Unit::Text),
                ("threads", Unit::Count),
                ("busy", Unit::Ns),
                ("idle", Unit::Ns),
                ("blocked", Unit::Ns),
                ("busy", Unit::Pct),
                ("idle", Unit::Pct),
                ("blocked", Unit::Pct),
            ],
        );
        // The span of each application: every location's events.
        let d = &self.defs;
        let mut app_span: BTreeMap<u32, (i64, i64)> = BTreeMap::new();
        for (l, s) in self.pass.locs.iter().enumerate() {
            let (Some((a, b)), Some(p)) = (s.seen, d.process_of(l as LocId)) else { continue };
            let e = app_span.entry(p.app).or_insert((a, b));
            *e = (e.0.min(a), e.1.max(b));
        }
        for n in self.nodes(Level::Process) {
            let app = d.processes[d.locations[n.locs[0] as usize].process as usize].app;
            let (a, b) = app_span[&app];
            let total = (b - a) * n.locs.len() as i64;
            let st: Vec<&LocStats> = n.locs.iter().map(|&l| &self.pass.locs[l as usize]).collect();
            let busy: i64 = st.iter().map(|s| s.busy).sum();
            let blocked: i64 =
                st.iter().map(|s| s.wait_recv - s.wait_recv_any + s.wait_coll + s.wait_lock).sum();
            let idle = (total - busy - blocked).max(0);
            let pct =
                |v: i64| if total > 0 { Cell::Num(100.0 * v as f64 / total as f64) } else { Cell::Empty };
            t.push(vec![
                Cell::Text(n.name),
                Cell::Text(n.parent),
                num(n.locs.len() as u64),
                ns(busy),
                ns(idle),
                ns(blocked),
                pct(busy),
                pct(idle),
                pct(blocked),
            ]);
        }
        t.notes.push("blocked: waiting in a receive from a named source, a collective or a lock; idle: waiting in a receive from any source (for work), and the run's time before the process's first event and after its last".into());
        t
    }

    fn needs_matched(&self) -> Result<()> {
        if self.matched {
            Ok(())
        } else {
            Err(Error::Bad("message transactions need matched messages (flag MATCHED, partner annotations): run spoor-order first".into()))
        }
    }

    /// Minimum, average and maximum of each message time over all messages.
    pub fn messages_table(&self) -> Result<Table> {
        self.needs_matched()?;
        let m = &self.pass.messages;
        let mut t = Table::new(
            "messages",
            "Message transactions: summary over all messages",
            &[
                ("time", Unit::Text),
                ("messages", Unit::Count),
                ("min", Unit::Ns),
                ("avg", Unit::Ns),
                ("max", Unit::Ns),
            ],
        );
        let row = |name: &str, s: &MinAvgMax| {
            let some = |v: i64| if s.count > 0 { Cell::Num(v as f64) } else { Cell::Empty };
            vec![Cell::Text(name.into()), num(s.count), some(s.min), s.avg().into(), some(s.max)]
        };
        t.push(row("transit", &m.transit));
        t.push(row("queue", &m.queue));
        t.push(row("recv_wait", &m.recv_wait));
        t.push(row("processing", &m.processing));
        t.push(row("reply", &m.reply));
        t.notes.push(format!("{} messages", m.count));
        if m.unmatched > 0 {
            t.notes.push(format!("{} message events without a match", m.unmatched));
        }
        Ok(t)
    }

    /// The messages with the longest transit, one a row.
    pub fn transactions_table(&self) -> Result<Table> {
        self.needs_matched()?;
        let mut t = Table::new(
            "transactions",
            &format!("Message transactions: the {} longest in transit", self.opts.top),
            &[
                ("origin", Unit::Text),
                ("dest", Unit::Text),
                ("tag", Unit::Count),
                ("bytes", Unit::Bytes),
                ("start", Unit::Ns),
                ("end", Unit::Ns),
                ("transit", Unit::Ns),
                ("queue", Unit::Ns),
                ("recv_wait", Unit::Ns),
                ("processing", Unit::Ns),
                ("reply", Unit::Ns),
            ],
        );
        let opt = |v: Option<i64>| v.map_or(Cell::Empty, |v| Cell::Num(v as f64));
        for m in self.pass.messages.longest.iter().take(self.opts.top) {
            t.push(vec![
                Cell::Text(self.defs.location_name(m.origin)),
                Cell::Text(self.defs.location_name(m.dest)),
                num(m.tag as u64),
                num(m.bytes),
                ns(m.start),
                ns(m.end),
                ns(m.transit()),
                opt(m.queue()),
                opt(m.recv_wait()),
                opt(m.processing),
                opt(m.reply),
            ]);
        }
        Ok(t)
    }

    /// The longest messages kept for drawing (at most `arrows`).
    pub fn longest_messages(&self) -> &[Message] {
        let n = self.opts.arrows.min(self.pass.messages.longest.len());
        &self.pass.messages.longest[..n]
    }

    /// A time histogram: `(first bin start, bin width, values)`; an error for a metric
    /// that was not asked for.
    pub fn histogram(&self, m: Metric) -> Result<(i64, i64, Vec<f64>)> {
        self.metric_ok(m)?;
        let Some(&(_, s)) = self.pass.hist.iter().find(|h| h.0 == m) else {
            let names: Vec<&str> = self.pass.hist.iter().map(|h| h.0.name()).collect();
            return Err(Error::Bad(format!(
                "no histogram of `{}` was computed; these were: {}",
                m.name(),
                names.join(", ")
            )));
        };
        Ok(match self.pass.grid.extent() {
            Some((start, w, _)) => (start, w, self.pass.grid.values(s)),
            None => (0, 1, Vec::new()),
        })
    }

    /// The histogram metrics computed, in order.
    pub fn histogram_metrics(&self) -> Vec<Metric> {
        self.pass.hist.iter().map(|h| h.0).filter(|&m| m != Metric::Npt || self.ordered).collect()
    }

    /// A time histogram as a table: `histogram.METRIC`, one bin a row.
    pub fn histogram_table(&self, m: Metric) -> Result<Table> {
        let (start, w, v) = self.histogram(m)?;
        let mut t = Table::new(
            &format!("histogram.{}", m.name()),
            &format!("Time histogram of {} ({})", m.name(), self.focus_label()),
            &[("start", Unit::Ns), ("end", Unit::Ns), (m.name(), m.unit())],
        );
        for (i, x) in v.iter().enumerate() {
            let a = start + i as i64 * w;
            t.push(vec![ns(a), ns(a + w), Cell::Num(*x)]);
        }
        Ok(t)
    }

    /// What the focus selects, in words.
    pub fn focus_label(&self) -> String {
        if self.opts.focus.is_empty() {
            return "all locations".into();
        }
        let parts: Vec<String> = self.opts.focus.iter().map(|(l, n)| format!("{}={n}", l.name())).collect();
        parts.join(", ")
    }

    /// Space-time rows: label, locations, busy and waiting time per column.
    pub fn spacetime_rows(&self) -> Vec<SpacetimeRow> {
        self.pass
            .rows
            .iter()
            .map(|r| {
                let label = if r.locs.len() == 1 {
                    self.defs.location_name(r.locs[0])
                } else {
                    format!(
                        "{} .. {}",
                        self.defs.location_name(r.locs[0]),
                        self.defs.location_name(*r.locs.last().unwrap())
                    )
                };
                (label, r.locs.clone(), self.pass.grid.values(r.busy), self.pass.grid.values(r.wait))
            })
            .collect()
    }

    /// The grid's bins: (start, width, count).
    pub fn bins(&self) -> Option<(i64, i64, usize)> {
        self.pass.grid.extent()
    }
}
