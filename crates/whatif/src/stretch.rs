//! The stretch of a run a prediction covers (formats/scenarios.md, "Stretches"): the one
//! `--phase` or `--window` names, else, in an MPI run, from where the last `MPI_Init`
//! returned to where the last rank entered `MPI_Finalize`. Start-up and shutdown are the
//! launcher's and the MPI library's time, which no placement, network or procedure move
//! changes and which the model does not predict: a measured time that held them would
//! make every prediction look short.

use spoor_format::text::describe_duration;
use spoor_graph::window::{self, finalize_start, init_end};
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
/// are spoor-cp's, usage errors), else the run between the last return of `MPI_Init` and
/// the last entry of `MPI_Finalize`, when the trace has either inside its span.
pub fn choose(pag: &Pag, phase: Option<&str>, window: Option<&str>) -> Result<Stretch> {
    if let Some(w) = window::stretch(pag, phase, window)? {
        return Ok(Stretch { window: Some(w), note: None });
    }
    let Some((first, last)) = pag.activity_span() else { return Ok(Stretch::default()) };
    let begin = init_end(pag).filter(|&t| t > first);
    let end = finalize_start(pag).filter(|&t| t < last && t > begin.unwrap_or(first));
    let (what, cut) = match (begin, end) {
        (None, None) => return Ok(Stretch::default()),
        (Some(_), None) => ("after the last MPI_Init's return", "start-up"),
        (None, Some(_)) => ("up to the last MPI_Finalize's entry", "shutdown"),
        (Some(_), Some(_)) => {
            ("from the last MPI_Init's return to the last MPI_Finalize's entry", "start-up and shutdown")
        }
    };
    let (a, b) = (begin.unwrap_or(first), end.unwrap_or(last));
    let run = last - first;
    let since = |t: i64| describe_duration(t - first);
    let note = format!(
        "predicting the run {what} ({} to {} after its first event): {cut}, {:.1} % of the {} \
         measured, no model predicts; --window 0..{} predicts the whole run, --window or --phase \
         another stretch",
        since(a),
        since(b),
        100.0 * (run - (b - a)) as f64 / run as f64,
        describe_duration(run),
        describe_duration(run).replace(' ', "")
    );
    Ok(Stretch { window: Some((a, b)), note: Some(note) })
}

/// The PAG a prediction runs on: the sub-PAG of the chosen stretch, or the PAG itself;
/// an error where the graph's file could not hold the sub-PAG (the disk full).
pub fn cut(pag: Pag, stretch: &Stretch) -> Result<Pag> {
    let cut = match stretch.window {
        Some(w) => pag.within(w),
        None => pag,
    };
    cut.spill_error()?;
    Ok(cut)
}
