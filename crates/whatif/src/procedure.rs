//! Procedure LBF (the LBF paper's §4 and Figure 8): the predicted time if procedure F
//! ran on the receiving side of the messages it now precedes on the sending side,
//! beside critical-path zeroing of F (the paper's Figure 10).
//!
//! Figure 8 carries, with every message, the time F ran on the sender since the
//! sender's previous inter-process event (`rmtF`), takes it off the sender's path and
//! gives the receiver `max(Cs - rmtF, Cr + rmtF)` at the receive. Offline the same is a
//! change of the PAG's local weights ([`move_weights`]): F's time in the segment before
//! each send is taken off the sending location's arcs and put on the local arc into the
//! receive (the wait before it, which weighs nothing in cpu mode); the longest path of
//! the changed PAG is then the paper's value at every receive, with the message's
//! transfer time added (`Cs - rmtF + transfer`). F's time in a segment that ends in any
//! other inter-process event (a receive, a collective, a lock, a spawn) stays where it is,
//! as the paper's conservative reset does. F's time is inclusive (F on the call stack),
//! as the paper's entry and exit timers measure it; so the zeroing to compare a move
//! with is the inclusive one (F with everything it calls), given beside the exclusive.

use crate::gag::{self, Costs};
use crate::interval::Spread;
use crate::placement::Placement;
use spoor_graph::pag::{ArcKind, Pag, Reach, NONE};
use spoor_graph::{cp, CpOptions, Error, Mode, Result};
use spoor_model::StrId;

/// The weights after moving, and how much time moved.
#[derive(Clone, Debug)]
pub struct Moved {
    pub weight: spoor_format::spill::SpillVec<i64>,
    /// F's time taken off senders and given to receivers.
    pub moved_ns: i64,
    /// Messages that carried some of F.
    pub messages: u64,
}

/// The procedure named `name`, or an error naming the procedures the PAG has.
pub fn procedure_id(pag: &Pag, name: &str) -> Result<StrId> {
    let id = pag.defs.strings.lookup(name).filter(|id| pag.contexts.iter().any(|c| c.proc == *id));
    id.ok_or_else(|| {
        let mut names: Vec<String> = pag.contexts[1..].iter().map(|c| pag.proc_name(c.proc)).collect();
        names.sort();
        names.dedup();
        Error::Usage(format!("no procedure named `{name}` in the trace; it has: {}", names.join(", ")))
    })
}

/// The local weights of `pag` with procedure `proc` moved from the sending to the
/// receiving side of every message, beside the graph (in its file where it has one: an
/// error where that file is full).
pub fn move_weights(pag: &Pag, proc: StrId) -> Result<Moved> {
    let in_f = pag.zeroed_contexts(&[proc], Reach::Inclusive);
    let mut origin = spoor_graph::mem::filled_in(pag.nodes(), 0u8, pag.arena());
    let mut weight = pag.weight.copy_beside();
    pag.spill_error()?;
    for a in 0..pag.arcs() {
        let o = &mut origin[pag.arc_from[a] as usize];
        *o |= if pag.arc_kind[a] == ArcKind::Message { 2 } else { 1 };
    }
    let locs = pag
        .defs
        .locations
        .len()
        .max(pag.loc.iter().filter(|&&l| l != NONE).map(|&l| l as usize + 1).max().unwrap_or(0));
    let mut seg: Vec<Vec<u32>> = vec![Vec::new(); locs];
    let mut facc = vec![0i64; locs];
    let mut carried = rustc_hash::FxHashMap::<u32, i64>::default();
    let (mut moved_ns, mut messages) = (0i64, 0u64);
    let mut cursor = 0usize;
    for i in 0..pag.nodes() {
        let start = cursor;
        while cursor < pag.arcs() && pag.arc_to[cursor] as usize == i {
            cursor += 1;
        }
        let l = pag.loc[i];
        if l == NONE {
            continue;
        }
        let l = l as usize;
        if in_f[pag.ctx[i] as usize] && weight[i] > 0 {
            seg[l].push(i as u32);
            facc[l] += weight[i];
        }
        for a in start..cursor {
            if pag.arc_kind[a] == ArcKind::Message {
                if let Some(f) = carried.remove(&pag.arc_from[a]) {
                    weight[i] += f;
                }
            }
        }
        let out = origin[i];
        if out & 2 != 0 && facc[l] > 0 {
            for &s in &seg[l] {
                weight[s as usize] = 0;
            }
            carried.insert(i as u32, facc[l]);
            moved_ns += facc[l];
            messages += 1;
        }
        if out != 0 || cursor > start {
            seg[l].clear();
            facc[l] = 0;
        }
    }
    Ok(Moved { weight, moved_ns, messages })
}

/// One procedure's what-if: moved (procedure LBF) and zeroed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProcedureWhatIf {
    pub procedure: String,
    /// The cpu-mode critical path as measured.
    pub original_ns: i64,
    /// Procedure LBF: the critical path with the procedure moved.
    pub moved_ns: i64,
    /// F's time that moved.
    pub time_moved_ns: i64,
    /// Critical-path zeroing: the critical path with the procedure's exclusive time 0.
    pub zeroed_ns: i64,
    /// The critical path with the procedure and everything it calls taking no time: the
    /// bound of what a move (which carries the callees along) can save.
    pub zeroed_inclusive_ns: i64,
    /// The moved prediction's interval (formats/scenarios.md, "Intervals"); `None`
    /// when the recording's computation does not repeat enough to give one.
    pub moved_low_ns: Option<i64>,
    pub moved_high_ns: Option<i64>,
}

impl ProcedureWhatIf {
    /// `(original - v) / original`: the improvement of a predicted time `v`.
    pub fn improvement(&self, v: i64) -> f64 {
        if self.original_ns == 0 {
            0.0
        } else {
            (self.original_ns - v) as f64 / self.original_ns as f64
        }
    }

    /// Gives the moved prediction the interval of `spread`.
    pub fn with_interval(mut self, spread: Option<&Spread>) -> Self {
        let (lo, hi) = spread.map(|s| s.interval(self.moved_ns)).unzip();
        (self.moved_low_ns, self.moved_high_ns) = (lo, hi);
        self
    }

    /// The move's saving as a fraction of the inclusive zeroing's; `None` when the
    /// zeroing saves nothing.
    pub fn move_share_of_zeroing(&self) -> Option<f64> {
        let bound = self.original_ns - self.zeroed_inclusive_ns;
        (bound > 0).then(|| (self.original_ns - self.moved_ns) as f64 / bound as f64)
    }
}

/// Procedure LBF and zeroing of `proc` with one processor per process (the paper's
/// Figure 10), or on a placement when one is given, simulated with what `base` says of
/// waiting and of receives for any source.
/// The PAG's local weights are swapped for the moved ones during the moved critical
/// path (no copy of the graph) and are back when it returns.
pub fn procedure_whatif(
    pag: &mut Pag,
    proc: StrId,
    place: Option<&Placement>,
    base: &Costs,
) -> Result<ProcedureWhatIf> {
    if pag.mode != Mode::Cpu {
        return Err(Error::Usage("procedure LBF needs a PAG weighted in cpu mode".into()));
    }
    let mut m = move_weights(pag, proc)?;
    let (original_ns, moved_ns, zeroed_ns, zeroed_inclusive_ns) = match place {
        None => {
            let original = cp::length(pag, &CpOptions::default());
            let zeroed = |zero_inclusive| {
                cp::length(pag, &CpOptions { zero: vec![proc], zero_inclusive, ..CpOptions::default() })
            };
            let (exclusive, inclusive) = (zeroed(false), zeroed(true));
            std::mem::swap(&mut pag.weight, &mut m.weight);
            let moved = cp::length(pag, &CpOptions::default());
            std::mem::swap(&mut pag.weight, &mut m.weight);
            (original, moved, exclusive, inclusive)
        }
        Some(p) => {
            let base = Costs {
                waits: base.waits,
                wildcards: base.wildcards,
                sharing: base.sharing,
                ..Costs::default()
            };
            let original = gag::predict(pag, p, &base)?.time_ns;
            let moved = gag::predict(pag, p, &Costs { local: Some(&m.weight), ..base.clone() })?.time_ns;
            let zeroed = |zero_inclusive| {
                gag::predict(pag, p, &Costs { zero: vec![proc], zero_inclusive, ..base.clone() })
                    .map(|r| r.time_ns)
            };
            (original, moved, zeroed(false)?, zeroed(true)?)
        }
    };
    Ok(ProcedureWhatIf {
        procedure: pag.proc_name(proc),
        original_ns,
        moved_ns,
        time_moved_ns: m.moved_ns,
        zeroed_ns,
        zeroed_inclusive_ns,
        moved_low_ns: None,
        moved_high_ns: None,
    })
}
