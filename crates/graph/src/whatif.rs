//! Critical-path zeroing: the critical path's length if a procedure took no time,
//! exclusive (its own time) and inclusive (with everything it calls).

use crate::cp::{self, CpOptions, CriticalPath};
use crate::pag::{Pag, Reach};
use crate::profile::procedure_times;
use rayon::prelude::*;

/// One procedure's zeroing result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Zeroing {
    /// The procedure zeroed.
    pub procedure: String,
    /// Its exclusive time on the critical path.
    pub on_path_ns: i64,
    /// The critical path's length with the procedure's exclusive time set to zero.
    pub length_ns: i64,
    /// Its inclusive time on the critical path (itself and what it calls).
    pub inclusive_on_path_ns: i64,
    /// The critical path's length with the procedure and everything it calls set to zero.
    pub inclusive_length_ns: i64,
}

/// Zeroing of the `top` procedures with the most exclusive time on `path` and the `top`
/// with the most inclusive time (a caller whose work sits in helpers has little of its
/// own), exclusive and inclusive, in parallel; results by inclusive time on the path.
pub fn zeroing(pag: &Pag, opts: &CpOptions, path: &CriticalPath, top: usize) -> Vec<Zeroing> {
    let exclusive = procedure_times(pag, path, Reach::Exclusive);
    let inclusive = procedure_times(pag, path, Reach::Inclusive);
    let mut chosen: Vec<u32> = exclusive.iter().take(top).map(|p| p.0).collect();
    for &(p, _) in inclusive.iter().take(top) {
        if !chosen.contains(&p) {
            chosen.push(p);
        }
    }
    // Every procedure with exclusive time has inclusive time: the order is inclusive's.
    chosen.sort_by_key(|p| inclusive.iter().position(|q| q.0 == *p));
    let time = |v: &[(u32, i64)], p: u32| v.iter().find(|q| q.0 == p).map_or(0, |q| q.1);
    chosen
        .par_iter()
        .map(|&proc| {
            let zero = |reach: Reach| {
                let mut o = opts.clone();
                o.zero.push(proc);
                o.zero_inclusive = reach == Reach::Inclusive;
                cp::length(pag, &o)
            };
            // Arcs off the path cannot shorten it: a procedure with no time of its own on
            // the path (chosen for its callees') leaves the length as it is.
            let on_path_ns = time(&exclusive, proc);
            let length_ns = if on_path_ns > 0 { zero(Reach::Exclusive) } else { path.length };
            // Without callees on any stack the two zeroings are one.
            let has_callees = pag.zeroed_contexts(&[proc], Reach::Exclusive)
                != pag.zeroed_contexts(&[proc], Reach::Inclusive);
            Zeroing {
                procedure: pag.proc_name(proc),
                on_path_ns,
                length_ns,
                inclusive_on_path_ns: time(&inclusive, proc),
                inclusive_length_ns: if has_callees { zero(Reach::Inclusive) } else { length_ns },
            }
        })
        .collect()
}
