//! Critical-path zeroing: the critical path's length if a procedure took no time.

use crate::cp::{self, CpOptions, CriticalPath};
use crate::pag::Pag;
use crate::profile::procedure_times;
use rayon::prelude::*;

/// One procedure's zeroing result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Zeroing {
    pub procedure: String,
    /// Its exclusive time on the critical path.
    pub on_path_ns: i64,
    /// The critical path's length with the procedure's time set to zero.
    pub length_ns: i64,
}

/// Zeroing of the `top` procedures with the most exclusive time on `path`, one
/// forward pass each, in parallel; results in the order of their time on the path.
pub fn zeroing(pag: &Pag, opts: &CpOptions, path: &CriticalPath, top: usize) -> Vec<Zeroing> {
    let chosen: Vec<(u32, i64)> = procedure_times(pag, path).into_iter().take(top).collect();
    chosen
        .par_iter()
        .map(|&(proc, on_path)| {
            let mut o = opts.clone();
            o.zero.push(proc);
            Zeroing { procedure: pag.proc_name(proc), on_path_ns: on_path, length_ns: cp::length(pag, &o) }
        })
        .collect()
}
