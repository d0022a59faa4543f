//! Placements of processes on processors (formats/placement.md): which processes share
//! a processor (a *group*, in the LBF paper's words) in the predicted configuration.

use spoor_graph::{Error, Pag, Result};
use spoor_model::Definitions;

/// A placement: `group_of[p]` is the processor (group) of process `p`; every process
/// has exactly one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Group (processor) of each process of the trace, by process id.
    pub group_of: Vec<u32>,
    /// A name per group, for the GAG's locations and reports.
    pub names: Vec<String>,
}

/// How to place processes when no explicit list is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceBy {
    /// One processor per process: the configuration the cpu-mode critical path assumes.
    Process,
    /// One processor per machine of the trace.
    Machine,
    /// K processors; processes in id order, in contiguous blocks of ceil(P/K).
    Block(u32),
    /// K processors; process i on processor i mod K.
    Cyclic(u32),
}

impl PlaceBy {
    /// Parses `process`, `machine`, `block:K` or `cyclic:K`.
    pub fn parse(s: &str) -> std::result::Result<PlaceBy, String> {
        let k = |v: &str| -> std::result::Result<u32, String> {
            match v.parse::<u32>() {
                Ok(k) if k > 0 => Ok(k),
                _ => Err(format!("`{s}`: K must be a whole number of processors, at least 1")),
            }
        };
        match s.split_once(':') {
            None if s == "process" => Ok(PlaceBy::Process),
            None if s == "machine" => Ok(PlaceBy::Machine),
            Some(("block", v)) => Ok(PlaceBy::Block(k(v)?)),
            Some(("cyclic", v)) => Ok(PlaceBy::Cyclic(k(v)?)),
            _ => Err(format!("`{s}`: expected process, machine, block:K, cyclic:K or recorded")),
        }
    }

    pub fn label(self) -> String {
        match self {
            PlaceBy::Process => "process".into(),
            PlaceBy::Machine => "machine".into(),
            PlaceBy::Block(k) => format!("block:{k}"),
            PlaceBy::Cyclic(k) => format!("cyclic:{k}"),
        }
    }
}

/// The name a placement uses for a process: its own name, or `APP/NAME` when the
/// trace has several applications with a process of that name.
pub fn process_names(defs: &Definitions) -> Vec<String> {
    let plain: Vec<String> = defs.processes.iter().map(|p| defs.strings.name(p.name).into_owned()).collect();
    plain
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if plain.iter().filter(|m| *m == n).count() > 1 {
                let app = defs.apps.get(defs.processes[i].app as usize);
                let a = app.map(|a| defs.strings.name(a.name).into_owned()).unwrap_or_default();
                format!("{a}/{n}")
            } else {
                n.clone()
            }
        })
        .collect()
}

impl Placement {
    /// A rule-based placement of the PAG's processes.
    pub fn by(pag: &Pag, rule: PlaceBy) -> Placement {
        let defs = &pag.defs;
        let p = defs.processes.len() as u32;
        let names = process_names(defs);
        match rule {
            PlaceBy::Process => Placement { group_of: (0..p).collect(), names },
            PlaceBy::Machine => {
                // Groups in order of the machines that have processes.
                let mut used: Vec<u32> = defs.processes.iter().map(|x| x.machine).collect();
                used.sort_unstable();
                used.dedup();
                let group_of =
                    defs.processes.iter().map(|x| used.binary_search(&x.machine).unwrap() as u32).collect();
                let names = used
                    .iter()
                    .map(|&m| {
                        defs.machines
                            .get(m as usize)
                            .map(|x| defs.strings.name(x.name).into_owned())
                            .unwrap_or_else(|| format!("machine {m}"))
                    })
                    .collect();
                Placement { group_of, names }
            }
            PlaceBy::Block(k) => {
                let k = k.min(p.max(1));
                let per = p.div_ceil(k).max(1);
                let group_of: Vec<u32> = (0..p).map(|i| i / per).collect();
                let groups = group_of.iter().max().map_or(0, |m| m + 1);
                Placement { group_of, names: (0..groups).map(|g| format!("cpu{g}")).collect() }
            }
            PlaceBy::Cyclic(k) => {
                let k = k.min(p.max(1));
                Placement {
                    group_of: (0..p).map(|i| i % k).collect(),
                    names: (0..k).map(|g| format!("cpu{g}")).collect(),
                }
            }
        }
    }

    /// Groups given by process names: `groups[g]` lists the names on processor g, and
    /// `lines[g]`, when given, the line of the file that lists them. Every process of the
    /// trace must be named exactly once; otherwise the error names the unknown, missing
    /// and repeated processes, with their lines.
    pub fn from_groups(
        pag: &Pag,
        source: &str,
        groups: &[(String, Vec<String>)],
        lines: Option<&[usize]>,
    ) -> Result<Placement> {
        let line = |g: usize| lines.and_then(|l| l.get(g)).copied();
        // The first line with a problem leads the message; each name carries its own.
        let first_bad = std::cell::Cell::new(None::<usize>);
        let at = |g: usize| match line(g) {
            Some(l) => {
                first_bad.set(Some(first_bad.get().map_or(l, |f: usize| f.min(l))));
                format!(" (line {l})")
            }
            None => String::new(),
        };
        let names = process_names(&pag.defs);
        let plain: Vec<String> =
            pag.defs.processes.iter().map(|p| pag.defs.strings.name(p.name).into_owned()).collect();
        let mut group_of = vec![u32::MAX; names.len()];
        let (mut unknown, mut repeated, mut ambiguous) = (Vec::new(), Vec::new(), Vec::new());
        for (g, (_, members)) in groups.iter().enumerate() {
            for m in members {
                let hits: Vec<usize> = match names.iter().position(|n| n == m) {
                    Some(i) => vec![i],
                    None => (0..plain.len()).filter(|&i| &plain[i] == m).collect(),
                };
                match hits.len() {
                    0 => unknown.push(format!("{m}{}", at(g))),
                    1 => {
                        let i = hits[0];
                        if group_of[i] != u32::MAX {
                            repeated.push(format!("{m}{}", at(g)));
                        }
                        group_of[i] = g as u32;
                    }
                    _ => ambiguous.push(format!(
                        "{m}{} (say {})",
                        at(g),
                        hits.iter().map(|&i| names[i].as_str()).collect::<Vec<_>>().join(" or ")
                    )),
                }
            }
        }
        let missing: Vec<String> =
            (0..names.len()).filter(|&i| group_of[i] == u32::MAX).map(|i| names[i].clone()).collect();
        let mut problems = Vec::new();
        if !unknown.is_empty() {
            problems.push(format!(
                "names processes the trace does not have: {} (it has: {})",
                unknown.join(", "),
                names.join(", ")
            ));
        }
        if !ambiguous.is_empty() {
            problems.push(format!("names processes of several applications: {}", ambiguous.join(", ")));
        }
        if !repeated.is_empty() {
            problems.push(format!("places these processes more than once: {}", repeated.join(", ")));
        }
        if !missing.is_empty() {
            problems.push(format!("leaves out these processes: {}", missing.join(", ")));
        }
        if let Some(empty) = groups.iter().position(|g| g.1.is_empty()) {
            problems.push(format!("processor {}{} has no process", empty + 1, at(empty)));
        }
        if !problems.is_empty() {
            let lead = first_bad.get().map(|l| format!("line {l}: ")).unwrap_or_default();
            return Err(Error::input(source, format!("{lead}the placement {}", problems.join("; "))));
        }
        Ok(Placement { group_of, names: groups.iter().map(|g| g.0.clone()).collect() })
    }

    /// The command-line form: groups separated by `;`, processes by `,`
    /// (`server,client1;client2,client3`); `source` says where it was given (the flag,
    /// or a scenario file and line) for errors.
    pub fn parse_inline(pag: &Pag, source: &str, spec: &str) -> Result<Placement> {
        let groups: Vec<(String, Vec<String>)> = spec
            .split(';')
            .enumerate()
            .map(|(g, part)| {
                let members: Vec<String> =
                    part.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
                (format!("cpu{g}"), members)
            })
            .collect();
        Self::from_groups(pag, &format!("{source} '{spec}'"), &groups, None)
    }

    /// The file form of formats/placement.md: one processor a line, `[NAME:] P, P, ...`;
    /// `#` starts a comment.
    pub fn parse_file(pag: &Pag, file: &str, text: &str) -> Result<Placement> {
        let (mut groups, mut lines) = (Vec::new(), Vec::new());
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (name, rest) = match line.split_once(':') {
                Some((a, b)) if !a.contains(',') => (a.trim().to_owned(), b),
                _ => (format!("cpu{}", groups.len()), line),
            };
            if name.is_empty() {
                return Err(Error::input(
                    file,
                    format!("line {}: a processor name before `:` is empty", n + 1),
                ));
            }
            let members: Vec<String> =
                rest.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
            if members.is_empty() {
                return Err(Error::input(file, format!("line {}: processor `{name}` has no process", n + 1)));
            }
            groups.push((name, members));
            lines.push(n + 1);
        }
        if groups.is_empty() {
            return Err(Error::input(
                file,
                "the placement has no processor (expected one line per processor)",
            ));
        }
        Self::from_groups(pag, file, &groups, Some(&lines))
    }

    pub fn groups(&self) -> usize {
        self.names.len()
    }

    /// The group of each location (through its process).
    pub fn group_of_locations(&self, pag: &Pag) -> Vec<u32> {
        pag.defs
            .locations
            .iter()
            .map(|l| self.group_of.get(l.process as usize).copied().unwrap_or(0))
            .collect()
    }

    /// The inline form of this placement (`a,b;c`), by the given process names.
    pub fn describe(&self, names: &[String]) -> String {
        (0..self.groups() as u32)
            .map(|g| {
                (0..self.group_of.len())
                    .filter(|&p| self.group_of[p] == g)
                    .map(|p| names[p].as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join(";")
    }
}

impl Placement {
    /// The placement of a rule's name: `recorded` ([`Placement::recorded`]) or one of
    /// [`PlaceBy::parse`].
    pub fn by_name(pag: &Pag, rule: &str) -> std::result::Result<Placement, String> {
        if rule == "recorded" {
            Placement::recorded(pag)
        } else {
            PlaceBy::parse(rule).map(|r| Placement::by(pag, r))
        }
    }

    /// The placement the run was recorded under (formats/trace.md, "Recorded placement"):
    /// the processes pinned to one CPU of a machine share that processor; a process
    /// whose CPUs no other process was allowed has a processor of its own. Refused when
    /// the trace does not say where every process ran, or when processes shared several
    /// CPUs (not a placement on single processors).
    pub fn recorded(pag: &Pag) -> std::result::Result<Placement, String> {
        let defs = &pag.defs;
        let names = process_names(defs);
        let cpus: Vec<_> = (0..defs.processes.len() as u32).map(|p| defs.recorded_cpus(p)).collect();
        let unknown: Vec<&str> =
            (0..cpus.len()).filter(|&p| cpus[p].is_none()).map(|p| names[p].as_str()).collect();
        if !unknown.is_empty() {
            return Err(format!(
                "recorded: the trace does not say where {} ran (spoor-record notes it; imported traces \
                 do not): give the placement with --place or --place-file",
                unknown.join(", ")
            ));
        }
        let cpus: Vec<_> = cpus.into_iter().flatten().collect();
        let machine = |p: usize| defs.processes[p].machine;
        let machine_name = |p: usize| {
            defs.machines
                .get(machine(p) as usize)
                .map_or_else(String::new, |m| defs.strings.name(m.name).into_owned())
        };
        let overlaps = |p: usize, q: usize| {
            machine(p) == machine(q)
                && cpus[p].allowed.iter().any(|c| cpus[q].allowed.binary_search(c).is_ok())
        };
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for p in 0..cpus.len() {
            let allowed = &cpus[p].allowed;
            let key = if allowed.len() == 1 {
                format!("{}:cpu{}", machine_name(p), allowed[0])
            } else {
                let sharing: Vec<usize> = (0..cpus.len()).filter(|&q| q != p && overlaps(p, q)).collect();
                if !sharing.is_empty() {
                    let who: Vec<&str> =
                        std::iter::once(p).chain(sharing).map(|q| names[q].as_str()).collect();
                    return Err(format!(
                        "recorded: {} could run on CPUs {} of {} together, which is not a placement on \
                         single processors: give the placement with --place or --place-file",
                        who.join(", "),
                        spoor_model::placement::cpu_list(allowed),
                        machine_name(p)
                    ));
                }
                format!("{}:{}", machine_name(p), names[p])
            };
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(p),
                None => groups.push((key, vec![p])),
            }
        }
        let mut group_of = vec![0; cpus.len()];
        for (g, (_, members)) in groups.iter().enumerate() {
            for &p in members {
                group_of[p] = g as u32;
            }
        }
        Ok(Placement { group_of, names: groups.into_iter().map(|g| g.0).collect() })
    }
}

/// The placement a command line asks for: exactly one of an inline list (`--place`), a
/// placement file (`--place-file`) or a rule (`--place-by`); the rule `process` when
/// none is given.
pub fn from_args(pag: &Pag, inline: Option<&str>, file: Option<&str>, by: Option<&str>) -> Result<Placement> {
    match (inline, file, by) {
        (Some(s), None, None) => Placement::parse_inline(pag, "--place", s),
        (None, Some(f), None) => Placement::parse_file(pag, f, &spoor_format::read_text(f)?),
        (None, None, Some(b)) => {
            Placement::by_name(pag, b).map_err(|m| Error::Usage(format!("--place-by {m}")))
        }
        (None, None, None) => Ok(Placement::by(pag, PlaceBy::Process)),
        _ => Err(Error::Usage("give one of --place, --place-file and --place-by".into())),
    }
}
