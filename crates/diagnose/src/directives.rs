//! Search directives (Karavanic ch. 5; formats/diagnose.md, "Directives"): prune a
//! hypothesis at a focus and below, test a pair first (or last), set a threshold.
//!
//! ```text
//! prune     HYPOTHESIS|* FOCUS
//! priority  HYPOTHESIS|* FOCUS high|medium|low
//! threshold HYPOTHESIS [FOCUS] VALUE
//! ```

use crate::focus::{Focus, Resources};
use crate::hypothesis::Hypothesis;
use serde::Serialize;

/// How soon a hypothesis-focus pair is tested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Tested from the start of the search, whatever its parents gave.
    High,
    #[default]
    Medium,
    /// Tested after its medium siblings.
    Low,
}

/// Directives resolved against one trace.
#[derive(Clone, Debug, Default)]
pub struct Directives {
    /// (hypothesis, `None` for every one; focus): never test at the focus or below it.
    pub prunes: Vec<(Option<Hypothesis>, Focus)>,
    pub priorities: Vec<(Option<Hypothesis>, Focus, Priority)>,
    /// (hypothesis, focus, `None` for every focus; threshold).
    pub thresholds: Vec<(Hypothesis, Option<Focus>, f64)>,
}

impl Directives {
    /// Parses directives; `file` names the source in errors (`file:line: ...`).
    pub fn parse(file: &str, text: &str, res: &Resources) -> Result<Directives, String> {
        let mut d = Directives::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |m: String| format!("{file}:{}: {m}", i + 1);
            let (verb, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let (hyp, rest) = rest.trim().split_once(char::is_whitespace).unwrap_or((rest.trim(), ""));
            let rest = rest.trim();
            let any_hyp = |h: &str| if h == "*" { Ok(None) } else { Hypothesis::parse(h).map(Some) };
            let focus = |s: &str| {
                if s.is_empty() {
                    Err("expected a focus (`/` for the whole program)".to_owned())
                } else {
                    res.parse_focus(s)
                }
            };
            match verb {
                "prune" => d.prunes.push((any_hyp(hyp).map_err(at)?, focus(rest).map_err(at)?)),
                "priority" => {
                    let (f, level) = rest.rsplit_once(char::is_whitespace).unwrap_or(("", rest));
                    let level = match level {
                        "high" => Priority::High,
                        "medium" => Priority::Medium,
                        "low" => Priority::Low,
                        other => return Err(at(format!("expected high, medium or low, found `{other}`"))),
                    };
                    d.priorities.push((any_hyp(hyp).map_err(at)?, focus(f.trim()).map_err(at)?, level));
                }
                "threshold" => {
                    let h = Hypothesis::parse(hyp).map_err(at)?;
                    let (f, v) = rest.rsplit_once(char::is_whitespace).unwrap_or(("", rest));
                    let value: f64 =
                        v.parse().ok().filter(|x: &f64| x.is_finite() && *x >= 0.0).ok_or_else(|| {
                            at(format!("expected a threshold (a share like 0.15), found `{v}`"))
                        })?;
                    let f = if f.trim().is_empty() { None } else { Some(focus(f.trim()).map_err(at)?) };
                    d.thresholds.push((h, f, value));
                }
                other => {
                    return Err(at(format!(
                        "no directive `{other}`; the directives are: prune, priority, threshold"
                    )))
                }
            }
        }
        Ok(d)
    }

    /// Whether `h` at `f` is pruned.
    pub fn pruned(&self, res: &Resources, h: Hypothesis, f: &Focus) -> bool {
        self.prunes.iter().any(|(ph, pf)| ph.is_none_or(|x| x == h) && res.is_within(f, pf))
    }

    /// The priority of `h` at exactly `f` (the last directive that names the pair wins).
    pub fn priority(&self, h: Hypothesis, f: &Focus) -> Priority {
        self.priorities
            .iter()
            .rev()
            .find(|(ph, pf, _)| ph.is_none_or(|x| x == h) && pf == f)
            .map_or(Priority::Medium, |p| p.2)
    }

    /// The threshold of `h` at `f`: a directive for the pair, else one for `h`, else `default`.
    pub fn threshold(&self, h: Hypothesis, f: &Focus, default: f64) -> f64 {
        let exact = self.thresholds.iter().rev().find(|(th, tf, _)| *th == h && tf.as_ref() == Some(f));
        let any = self.thresholds.iter().rev().find(|(th, tf, _)| *th == h && tf.is_none());
        exact.or(any).map_or(default, |t| t.2)
    }
}
