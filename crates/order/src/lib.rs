//! From per-process traces to one causally ordered trace (design.md: spoor-merge,
//! spoor-align, spoor-order).
//!
//! * [`merge`]: k-way merge of traces, unifying their definitions;
//! * [`align`]: every location on one time base (offset interpolation, drift from
//!   messages, controlled logical clock);
//! * [`order`]: match sends and receives, group collectives, link lock hand-offs and
//!   spawns, and emit a causally consistent total order with Lamport clocks.
//!
//! [`scan`], [`matching`] and [`replay`] are the shared pieces: the first pass over a
//! trace, matching under MPI's rules, and replay in causal order.

pub mod align;
pub mod coded;
pub mod describe;
mod encode;
mod error;
mod fasthash;
mod hull;
mod input;
pub mod matching;
pub mod merge;
mod merge_blocks;
pub mod order;
mod passthrough;
pub mod replay;
pub mod scan;
pub mod times;

pub use error::{Error, Result};
pub use input::Input;

/// What the unit tests of several modules share.
#[cfg(test)]
mod testdefs {
    use spoor_model::Definitions;

    /// An application of `n` processes on one machine, a location each.
    pub(crate) fn ranks(app: &str, n: u32) -> Definitions {
        let mut defs = Definitions::new();
        let app = defs.add_app(app);
        let m = defs.add_machine("node0");
        for r in 0..n {
            let p = defs.add_process(&format!("rank{r}"), app, m, r);
            defs.add_location(&format!("rank{r}"), p, 0);
        }
        defs
    }
}
