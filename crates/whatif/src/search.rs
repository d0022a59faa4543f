//! A good placement of the processes on K processors (the LBF paper's future work:
//! automatic selection of candidate configurations): greedy, then local search, each
//! candidate judged by its predicted time; compared with block and cyclic placement.
//!
//! Greedy: processes by CPU time, largest first, each on the processor with the least
//! CPU time so far (longest processing time first). Local search: in each round every
//! move of one process to another processor (and, up to 64 processes, every swap of two
//! processes on different processors) is predicted, in parallel; the best one that
//! shortens the prediction is taken (ties: the first in a fixed order), until none does
//! or `rounds` rounds have run. The result does not depend on the number of threads.

use crate::gag::{self, Costs};
use crate::placement::{PlaceBy, Placement};
use rayon::prelude::*;
use spoor_graph::pag::NONE;
use spoor_graph::{Error, Pag, Result};

/// One strategy's placement and prediction.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Candidate {
    pub strategy: String,
    /// The inline form (`a,b;c`).
    pub placement: String,
    pub processors: usize,
    pub predicted_ns: i64,
}

/// The result of a search: block, cyclic, greedy and the local search's best.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchResult {
    pub candidates: Vec<Candidate>,
    /// Predictions made by the local search.
    pub evaluations: u64,
    pub rounds: u32,
}

fn with_k(group_of: Vec<u32>, k: u32) -> Placement {
    Placement { group_of, names: (0..k).map(|g| format!("cpu{g}")).collect() }
}

/// Searches a placement on `k` processors.
pub fn search(pag: &Pag, k: u32, costs: &Costs, rounds: u32) -> Result<SearchResult> {
    if k == 0 {
        return Err(Error::Usage("a placement on 0 processors: give at least 1".into()));
    }
    let procs = pag.defs.processes.len();
    let names = crate::placement::process_names(&pag.defs);
    let eval = |p: &Placement| gag::predict(pag, p, costs).map(|x| x.time_ns);
    let cand = |strategy: &str, p: &Placement, t: i64| Candidate {
        strategy: strategy.into(),
        placement: p.describe(&names),
        processors: p.groups(),
        predicted_ns: t,
    };
    let mut candidates = Vec::new();
    for rule in [PlaceBy::Block(k), PlaceBy::Cyclic(k)] {
        let p = Placement::by(pag, rule);
        let t = eval(&p)?;
        candidates.push(cand(&rule.label(), &p, t));
    }
    // Greedy: longest processing time first.
    let mut cpu = vec![0i64; procs];
    for i in 0..pag.nodes() {
        let l = pag.loc[i];
        if l != NONE {
            if let Some(loc) = pag.defs.locations.get(l as usize) {
                cpu[loc.process as usize] += pag.weight[i];
            }
        }
    }
    let mut order: Vec<usize> = (0..procs).collect();
    order.sort_by_key(|&p| (std::cmp::Reverse(cpu[p]), p));
    let kk = (k as usize).min(procs.max(1));
    let mut load = vec![0i64; kk];
    let mut group_of = vec![0u32; procs];
    for p in order {
        let g = (0..kk).min_by_key(|&g| (load[g], g)).unwrap();
        group_of[p] = g as u32;
        load[g] += cpu[p];
    }
    let mut best = with_k(group_of, kk as u32);
    let mut best_t = eval(&best)?;
    candidates.push(cand("greedy", &best, best_t));
    // Local search.
    let (mut evaluations, mut done) = (0u64, 0u32);
    for _ in 0..rounds {
        done += 1;
        let mut moves: Vec<Vec<u32>> = Vec::new();
        for p in 0..procs {
            for g in 0..kk as u32 {
                if g != best.group_of[p] {
                    let mut v = best.group_of.clone();
                    v[p] = g;
                    moves.push(v);
                }
            }
        }
        if procs <= 64 {
            for a in 0..procs {
                for b in a + 1..procs {
                    if best.group_of[a] != best.group_of[b] {
                        let mut v = best.group_of.clone();
                        v.swap(a, b);
                        moves.push(v);
                    }
                }
            }
        }
        evaluations += moves.len() as u64;
        let results: Vec<Result<i64>> =
            moves.par_iter().map(|v| eval(&with_k(v.clone(), kk as u32))).collect();
        let mut pick: Option<(i64, usize)> = None;
        for (i, r) in results.into_iter().enumerate() {
            let t = r?;
            if t < best_t && pick.is_none_or(|(bt, _)| t < bt) {
                pick = Some((t, i));
            }
        }
        match pick {
            Some((t, i)) => {
                best = with_k(moves.swap_remove(i), kk as u32);
                best_t = t;
            }
            None => break,
        }
    }
    candidates.push(cand("local search", &best, best_t));
    Ok(SearchResult { candidates, evaluations, rounds: done })
}
