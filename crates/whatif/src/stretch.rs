//! The stretch of a run a prediction covers (formats/scenarios.md, "Stretches"): the one
//! `--phase` or `--window` names, else, in a trace with `MPI_Init`, from where the last
//! `MPI_Init` returned to the end. Start-up is the launcher's and the MPI library's time,
//! which no placement, network or procedure move changes and which the model does not
//! predict: a measured time that held it would make every prediction look short.

use spoor_format::text::describe_duration;
use spoor_graph::window::{self, init_end};
use spoor_graph::{Pag, Result};

/// What a prediction covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stretch {
    /// The wall-time window predicted (`None`: the whole run).
    pub window: Option<(i64, i64)>,
    /// Why the command chose it, when the user did not: a sentence for standard error.
    pub note: Option<String>,
}

/// The stretch to predict: `--phase NAME` or `--window T0..T1` (at most one; their errors
/// are spoor-cp's, usage errors), else the run after the last `MPI_Init` when the trace
/// has one that returned after its first event.
pub fn choose(pag: &Pag, phase: Option<&str>, window: Option<&str>) -> Result<Stretch> {
    if let Some(w) = window::stretch(pag, phase, window)? {
        return Ok(Stretch { window: Some(w), note: None });
    }
    let (Some((first, last)), Some(init)) = (pag.activity_span(), init_end(pag)) else {
        return Ok(Stretch::default());
    };
    if init <= first {
        return Ok(Stretch::default());
    }
    let (before, run) = (init - first, last - first);
    let note = format!(
        "predicting the run after the last MPI_Init returned, {} after its first event: the \
         start-up before it ({:.1} % of the {} measured) is no model's to predict; \
         --window 0..{} predicts the whole run, --window or --phase another stretch",
        describe_duration(before),
        100.0 * before as f64 / run as f64,
        describe_duration(run),
        describe_duration(run).replace(' ', "")
    );
    Ok(Stretch { window: Some((init, last)), note: Some(note) })
}

/// The PAG a prediction runs on: the sub-PAG of the chosen stretch, or the PAG itself.
pub fn cut(pag: Pag, stretch: &Stretch) -> Pag {
    match stretch.window {
        Some(w) => pag.within(w),
        None => pag,
    }
}
