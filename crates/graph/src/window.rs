//! Stretches of a run (formats/pag.md, "--window"): `--window T0..T1` and `--phase NAME`
//! resolved against a PAG, where MPI's start-up ends and its shutdown begins, and the
//! sub-PAG of a stretch, which the what-if commands predict. spoor-cp, spoor-gag and spoor-whatif
//! share this one reading of the options and its errors.

use crate::pag::{Pag, NONE};
use spoor_format::text::{describe_duration, parse_duration};
use std::fmt;

/// A stretch that cannot be had: each is a usage error of the command that asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// Both `--phase` and `--window` were given.
    Both,
    /// A bound of `--window SPEC` is not a time.
    NotATime {
        /// The option's value.
        spec: String,
        /// The bound that is not a time.
        bound: String,
    },
    /// `--window SPEC` is not of the form `T0..T1` or `@T0..T1`.
    Form {
        /// The option's value.
        spec: String,
    },
    /// The window ends before it starts.
    Reversed {
        /// The option's value.
        spec: String,
    },
    /// The trace has no activity event to count a window from.
    NoEvents {
        /// The option's value.
        spec: String,
    },
    /// No activity event lies in the window.
    Empty {
        /// The option's value.
        spec: String,
        /// The trace's first and last activity event (wall time, ns).
        span: (i64, i64),
    },
    /// `--phase NAME` of a trace without phases.
    NoPhases {
        /// The phase asked for.
        name: String,
    },
    /// `--phase NAME` that the trace lacks, or lacks a begin or an end of.
    UnknownPhase {
        /// The phase asked for.
        name: String,
        /// The phases the trace has.
        phases: Vec<String>,
    },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::Both => f.write_str("give --phase or --window, not both"),
            WindowError::NotATime { spec, bound } => {
                write!(f, "--window {spec}: `{bound}` is not a time (like 2ms, 1.5s, 300us or 1500)")
            }
            WindowError::Form { spec } => write!(f, "--window {spec}: expected T0..T1 or @T0..T1"),
            WindowError::Reversed { spec } => write!(f, "--window {spec}: the end is before the start"),
            WindowError::NoEvents { spec } => write!(f, "--window {spec}: the trace has no events"),
            WindowError::Empty { spec, span } => write!(
                f,
                "--window {spec} holds no event: the trace runs from 0 to {} after its first event (@{}..{} in ns)",
                describe_duration(span.1 - span.0),
                span.0,
                span.1
            ),
            WindowError::NoPhases { name } => write!(f, "no phase `{name}`: the trace has no phases"),
            WindowError::UnknownPhase { name, phases } => {
                write!(f, "no phase `{name}` with a begin and an end; the trace has: {}", phases.join(", "))
            }
        }
    }
}

impl std::error::Error for WindowError {}

impl From<WindowError> for crate::Error {
    fn from(e: WindowError) -> Self {
        crate::Error::Usage(e.to_string())
    }
}

/// The stretch that `--phase` or `--window` asks for (at most one of them), as wall times
/// `(t0, t1)` with both ends in it; `None` when neither is given.
pub fn stretch(
    pag: &Pag,
    phase: Option<&str>,
    window: Option<&str>,
) -> Result<Option<(i64, i64)>, WindowError> {
    match (phase, window) {
        (Some(_), Some(_)) => Err(WindowError::Both),
        (Some(p), None) => phase_window(pag, p).map(Some),
        (None, Some(w)) => parse_window(pag, w).map(Some),
        (None, None) => Ok(None),
    }
}

/// `--window T0..T1`: times from the first activity event, or absolute on the trace's
/// clock with a leading `@`; refused when malformed or when it holds no activity event.
pub fn parse_window(pag: &Pag, spec: &str) -> Result<(i64, i64), WindowError> {
    let parse = |s: &str| {
        parse_duration(s).ok_or_else(|| WindowError::NotATime { spec: spec.to_owned(), bound: s.to_owned() })
    };
    let (absolute, times) = match spec.strip_prefix('@') {
        Some(rest) => (true, rest),
        None => (false, spec),
    };
    let (a, b) = times.split_once("..").ok_or_else(|| WindowError::Form { spec: spec.to_owned() })?;
    let (a, b) = (parse(a)?, parse(b)?);
    if b < a {
        return Err(WindowError::Reversed { spec: spec.to_owned() });
    }
    let Some(span) = pag.activity_span() else {
        return Err(WindowError::NoEvents { spec: spec.to_owned() });
    };
    let base = if absolute { 0 } else { span.0 };
    let (a, b) = (a.saturating_add(base), b.saturating_add(base));
    if pag.activity_in(a, b) == 0 {
        return Err(WindowError::Empty { spec: spec.to_owned(), span });
    }
    Ok((a, b))
}

/// `--phase NAME`: from the phase's earliest begin to its latest end.
pub fn phase_window(pag: &Pag, name: &str) -> Result<(i64, i64), WindowError> {
    pag.phase_window(name).ok_or_else(|| {
        let phases = pag.phase_names();
        if phases.is_empty() {
            WindowError::NoPhases { name: name.to_owned() }
        } else {
            WindowError::UnknownPhase { name: name.to_owned(), phases }
        }
    })
}

/// The procedures whose return ends a run's start-up.
pub const INIT_PROCEDURES: [&str; 2] = ["MPI_Init", "MPI_Init_thread"];
/// The procedure whose entry begins a run's shutdown.
pub const FINALIZE_PROCEDURE: &str = "MPI_Finalize";

/// The ids of the procedures named `names` that the trace has.
fn procedure_ids(pag: &Pag, names: &[&str]) -> Vec<u32> {
    names.iter().filter_map(|n| pag.defs.strings.lookup(n)).collect()
}

/// The wall time at which the last `MPI_Init` or `MPI_Init_thread` returned (the latest
/// `leave` of either, over every location); `None` when the trace has none.
pub fn init_end(pag: &Pag) -> Option<i64> {
    let ids = procedure_ids(pag, &INIT_PROCEDURES);
    if ids.is_empty() {
        return None;
    }
    // The local arc into a leave runs inside the procedure it leaves: its context's.
    let leave = spoor_format::binary::kind::LEAVE;
    (0..pag.nodes())
        .filter(|&i| pag.kind[i] == leave && ids.contains(&pag.proc_of_ctx(pag.ctx[i])))
        .map(|i| pag.wall[i])
        .max()
}

/// The wall time at which the last location entered `MPI_Finalize` (over every location,
/// its first entry); `None` when the trace has none.
pub fn finalize_start(pag: &Pag) -> Option<i64> {
    let ids = procedure_ids(pag, &[FINALIZE_PROCEDURE]);
    if ids.is_empty() {
        return None;
    }
    // An enter is known by the arc after it, which runs inside what it entered.
    let enter = spoor_format::binary::kind::ENTER;
    let mut entered: Vec<Option<i64>> = vec![None; pag.defs.locations.len()];
    for i in 0..pag.nodes() {
        let (l, p) = (pag.loc[i], pag.prev[i]);
        if l == NONE || p == NONE || pag.kind[p as usize] != enter {
            continue;
        }
        if let Some(e @ None) = entered.get_mut(l as usize) {
            if ids.contains(&pag.proc_of_ctx(pag.ctx[i])) {
                *e = Some(pag.wall[p as usize]);
            }
        }
    }
    entered.into_iter().flatten().max()
}

/// The share of node `i`'s local arc, weighing `w`, that lies after `t0`, for a stretch
/// beginning at `t0` (the source arc of a location's first node in it): the weight in
/// proportion to the arc's time after `t0`; for a location's first event, its source
/// weight clamped to `wall(i) - t0`.
#[inline]
pub(crate) fn share_after(pag: &Pag, i: usize, w: i64, t0: i64) -> i64 {
    let p = pag.prev[i];
    if p == NONE {
        return w.min(pag.wall[i] - t0).max(0);
    }
    let span = (pag.wall[i] - pag.wall[p as usize]).max(1) as i128;
    let inside = (pag.wall[i] - t0).clamp(0, span as i64) as i128;
    (w as i128 * inside / span) as i64
}

impl Pag {
    /// The sub-PAG of the stretch `[t0, t1]` of wall time: the nodes within it, the
    /// remote arcs between them, and each location's first node in it given a source arc
    /// weighing the share of its local arc after `t0` (formats/pag.md, "--window"). Its
    /// critical paths are those spoor-cp finds with that window, and its `t0` is the
    /// stretch's start (the trace's, if later). A collective's virtual node none of whose
    /// begins lies in the stretch is left out, as nothing in the stretch reaches it.
    pub fn within(&self, (t0, t1): (i64, i64)) -> Pag {
        // A graph in a file is cut into the same file.
        let arena = self.arena();
        let mut id = crate::mem::filled_in(self.nodes(), NONE, arena);
        let mut out = Pag {
            defs: self.defs.clone(),
            mode: self.mode,
            t0: t0.max(self.t0),
            contexts: self.contexts.clone(),
            notes: self.notes.clone(),
            ..Pag::in_arena(arena)
        };
        if id.len() < self.nodes() {
            // The file could not hold the map (the disk full): `Pag::spill_error` says so.
            return out;
        }
        let (mut arc, mut kept) = (0, Vec::new());
        for i in 0..self.nodes() {
            let first = arc;
            while arc < self.arcs() && self.arc_to[arc] as usize == i {
                arc += 1;
            }
            if !(t0..=t1).contains(&self.wall[i]) {
                continue;
            }
            // Origins come before their targets, so their fate is known.
            kept.clear();
            kept.extend((first..arc).filter(|&a| id[self.arc_from[a] as usize] != NONE));
            if self.loc[i] == NONE && kept.is_empty() {
                continue;
            }
            let n = out.loc.len() as u32;
            id[i] = n;
            let p = self.prev[i];
            let (prev, weight) = if p != NONE && id[p as usize] != NONE {
                (id[p as usize], self.weight[i])
            } else if self.loc[i] == NONE {
                (NONE, 0)
            } else {
                (NONE, share_after(self, i, self.weight[i], t0))
            };
            out.push_node(self.loc[i], prev, self.wall[i], weight, self.ctx[i], self.kind[i]);
            for &a in &kept {
                let from = id[self.arc_from[a] as usize];
                out.push_arc(
                    n,
                    from,
                    self.arc_weight[a],
                    self.arc_kind[a],
                    self.arc_bytes[a],
                    self.arc_op[a],
                );
            }
        }
        out.phases = self
            .phases
            .iter()
            .filter(|m| id[m.node as usize] != NONE)
            .map(|m| crate::PhaseMark { node: id[m.node as usize], ..*m })
            .collect();
        out.wildcard_receives =
            self.wildcard_receives.iter().map(|&x| id[x as usize]).filter(|&x| x != NONE).collect();
        let from = self.activity_span().map_or(self.t0, |s| s.0);
        out.notes.push(format!(
            "only the stretch from {} to {} after the trace's first event (@{t0}..{t1} in ns)",
            describe_duration(t0 - from),
            describe_duration(t1 - from)
        ));
        out
    }
}
