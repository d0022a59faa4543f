//! The placement a run was recorded under: the processors each process was allowed to run
//! on and ran on, as the recorder notes them in the definitions' properties
//! (formats/trace.md, "Recorded placement").

use crate::defs::{Definitions, ProcId};

/// Key prefix of the property holding the CPUs a process was allowed to run on.
pub const ALLOWED_KEY: &str = "cpus_allowed:";
/// Key prefix of the property holding the CPUs a process was seen running on.
pub const USED_KEY: &str = "cpus_used:";

/// The property key of `prefix` for process `app/name`.
pub fn key(prefix: &str, app: &str, name: &str) -> String {
    format!("{prefix}{app}/{name}")
}

/// A set of CPU numbers as a list of ranges: `0-3,8`.
pub fn cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j { v[i].to_string() } else { format!("{}-{}", v[i], v[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// The CPU numbers of a list as [`cpu_list`] writes it; `None` if it is not one (or
/// names a CPU past 2^20).
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    const MAX: u32 = 1 << 20;
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let a = part.parse::<u32>().ok()?;
                (a, a)
            }
        };
        if a > b || b >= MAX || v.len() + (b - a) as usize >= MAX as usize {
            return None;
        }
        v.extend(a..=b);
    }
    v.sort_unstable();
    v.dedup();
    Some(v)
}

/// Where one process ran when it was recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedCpus {
    /// The CPUs it was allowed to run on (its affinity mask).
    pub allowed: Vec<u32>,
    /// The CPUs it was seen running on (empty when not noted).
    pub used: Vec<u32>,
}

/// Processes of one machine that had fewer CPUs between them than there were processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    /// The machine (its name).
    pub machine: String,
    /// The processes, by id.
    pub processes: Vec<ProcId>,
    /// The CPUs they were allowed to run on, all together.
    pub cpus: Vec<u32>,
}

impl Definitions {
    /// Where process `p` ran when it was recorded; `None` when the trace does not say
    /// (or says it in a form that is not a CPU list).
    pub fn recorded_cpus(&self, p: ProcId) -> Option<RecordedCpus> {
        let proc = self.processes.get(p as usize)?;
        let app = self.apps.get(proc.app as usize).and_then(|a| self.strings.get(a.name)).unwrap_or("");
        let name = self.strings.get(proc.name).unwrap_or("");
        let allowed = parse_cpu_list(self.property(&key(ALLOWED_KEY, app, name))?)?;
        let used = self.property(&key(USED_KEY, app, name)).and_then(parse_cpu_list).unwrap_or_default();
        (!allowed.is_empty()).then_some(RecordedCpus { allowed, used })
    }

    /// The groups of processes that shared processors when the run was recorded: on one
    /// machine, for each distinct set of CPUs a process was allowed, the processes
    /// allowed no more than those CPUs, where they outnumber the CPUs. Largest
    /// oversubscription first; empty when the trace does not say where processes ran
    /// or none shared.
    pub fn shared_processors(&self) -> Vec<Shared> {
        let recorded: Vec<(ProcId, u32, RecordedCpus)> = (0..self.processes.len() as ProcId)
            .filter_map(|p| Some((p, self.processes[p as usize].machine, self.recorded_cpus(p)?)))
            .collect();
        let mut found: Vec<Shared> = Vec::new();
        for (_, machine, cpus) in &recorded {
            let set = &cpus.allowed;
            let within: Vec<ProcId> = (recorded.iter())
                .filter(|(_, m, c)| m == machine && c.allowed.iter().all(|x| set.binary_search(x).is_ok()))
                .map(|(q, _, _)| *q)
                .collect();
            let name =
                self.machines.get(*machine as usize).and_then(|m| self.strings.get(m.name)).unwrap_or("");
            if within.len() > set.len() && !found.iter().any(|f| f.machine == name && &f.cpus == set) {
                found.push(Shared { machine: name.to_owned(), processes: within, cpus: set.clone() });
            }
        }
        found.sort_by(|a, b| {
            let ratio = |s: &Shared| s.processes.len() as f64 / s.cpus.len() as f64;
            ratio(b).total_cmp(&ratio(a)).then_with(|| a.machine.cmp(&b.machine)).then(a.cpus.cmp(&b.cpus))
        });
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_back() {
        assert_eq!(cpu_list(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(parse_cpu_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        for bad in ["3-1", "x", "0-99999999", "1,,-"] {
            assert_eq!(parse_cpu_list(bad), None, "{bad}");
        }
    }

    fn defs(allowed: &[&str]) -> Definitions {
        let mut d = Definitions::new();
        let app = d.add_app("a");
        let m = d.add_machine("node0");
        for (k, a) in allowed.iter().enumerate() {
            let name = format!("rank {k}");
            d.add_process(&name, app, m, k as u32);
            d.set_property(&key(ALLOWED_KEY, "a", &name), a);
        }
        d
    }

    #[test]
    fn sharing_is_found_where_processes_outnumber_their_cpus() {
        // Pinned one a core: nothing shared.
        assert!(defs(&["0", "1"]).shared_processors().is_empty());
        // Two a core: two groups.
        let d = defs(&["0", "1", "0", "1"]);
        let s = d.shared_processors();
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!((s[0].processes.clone(), s[0].cpus.clone()), (vec![0, 2], vec![0]));
        // Four free on two cores: one group of the machine.
        let s = defs(&["0-1", "0-1", "0-1", "0-1"]).shared_processors();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].processes.len(), s[0].cpus.clone()), (4, vec![0, 1]));
        // Two free on two cores: not shared.
        assert!(defs(&["0-1", "0-1"]).shared_processors().is_empty());
        // Three on core 0 and one free: core 0 is shared.
        let s = defs(&["0", "0", "0", "0-1"]).shared_processors();
        assert_eq!((s[0].processes.clone(), s[0].cpus.clone()), (vec![0, 1, 2], vec![0]));
        assert_eq!(s.len(), 2, "{s:?}");
    }
}
