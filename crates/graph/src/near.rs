//! Near-critical paths: the K longest distinct paths, in order.
//!
//! A path is named by where it ends (the last node of a location in scope) and the
//! arcs it takes, walking backwards, that are not the longest way into their node
//! ("sidetracks", as in Eppstein's k-shortest-paths method). The critical path takes
//! none; every other path is its parent path plus one sidetrack at or before the
//! parent's last one, so each distinct path is generated once, from a heap ordered by
//! length.

use crate::cp::{CpOptions, Pass, Pred, NEG};
use crate::pag::{Pag, NONE};
use serde::Serialize;
use std::cmp::Ordering;

/// A path nearly as long as the critical one, and where it leaves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NearPath {
    /// Its length.
    pub length_ns: i64,
    /// The location the path ends on.
    pub end: String,
    /// Arcs where it leaves the longest way (0 for the critical path).
    pub sidetracks: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Cand {
    length: i64,
    /// Generation order: ties in length come out in the order they were made.
    seq: u64,
    end: u32,
    /// Where the backward walk continues along longest ways (`NONE`: at the source).
    from: u32,
    sidetracks: usize,
}

impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.length.cmp(&o.length).then_with(|| o.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The lengths of the `k` longest distinct paths from the source to a location's last
/// node in scope, longest first; the first is the critical path.
pub fn longest_paths(pag: &Pag, opts: &CpOptions, k: usize) -> Vec<NearPath> {
    let pass = Pass::new(pag, opts);
    let (dist, _) = pass.forward();
    let mut last = vec![NONE; pag.defs.locations.len()];
    for i in 0..pag.nodes() {
        if dist[i] > NEG && pass.end_ok(i) {
            last[pag.loc[i] as usize] = i as u32;
        }
    }
    let mut seq = 0u64;
    let mut heap: Vec<Cand> = Vec::new();
    for &e in last.iter().filter(|&&e| e != NONE) {
        heap.push(Cand { length: dist[e as usize], seq, end: e, from: e, sidetracks: 0 });
        seq += 1;
    }
    let mut out = Vec::new();
    while out.len() < k {
        // The longest candidate (a plain vector: it is kept short by the pruning below).
        let Some(best) = heap.iter().enumerate().max_by(|a, b| a.1.cmp(b.1)).map(|(i, _)| i) else { break };
        let c = heap.swap_remove(best);
        out.push(NearPath {
            length_ns: c.length,
            end: pag.defs.location_name(pag.loc[c.end as usize]),
            sidetracks: c.sidetracks,
        });
        // Children: one more sidetrack anywhere along the longest way back from `from`.
        let mut y = c.from;
        while y != NONE {
            let yi = y as usize;
            let (dy, best_pred) = pass.relax(yi, &dist, pag.arcs_into(y));
            let Some(best_pred) = best_pred else { break };
            pass.each_candidate(yi, &dist, pag.arcs_into(y), |cand, p| {
                if p != best_pred {
                    let from = match p {
                        Pred::Source => NONE,
                        Pred::Local(q) => q,
                        Pred::Arc(a) => pag.arc_from[a as usize],
                    };
                    heap.push(Cand {
                        length: c.length - (dy - cand),
                        seq,
                        end: c.end,
                        from,
                        sidetracks: c.sidetracks + 1,
                    });
                    seq += 1;
                }
            });
            y = match best_pred {
                Pred::Source => NONE,
                Pred::Local(q) => q,
                Pred::Arc(a) => pag.arc_from[a as usize],
            };
        }
        // Only the longest k - found candidates can still be reported.
        let keep = k - out.len();
        if heap.len() > 2 * keep.max(16) {
            heap.sort_unstable_by(|a, b| b.cmp(a));
            heap.truncate(keep);
        }
    }
    out
}
