//! spoor-exp: the program space of runs in SQLite, and Karavanic's operators over it (the
//! spoor-exp crate; formats/exp.md).

use clap::Parser;
use spoor_cli::{usage, Console, Output};
use spoor_exp::render::{self, Form};
use spoor_exp::{ops, Mapping, Runs, Side, Store};
use std::io::Write;
use std::path::{Path, PathBuf};

#[path = "args/exp.rs"]
mod args;
use args::*;

/// `5%` or `0.05`: a fraction.
fn share(option: &str, text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let bad = || usage(format!("--{option} {text}: expected a share such as 5% or 0.05"));
    let x: f64 = num.parse().map_err(|_| bad())?;
    let x = x * scale;
    if !x.is_finite() || x < 0.0 || (scale == 1.0 && x > 1.0) {
        return Err(bad());
    }
    Ok(x)
}

fn runs(store: &Store, text: &str) -> anyhow::Result<Side> {
    let r = Runs::parse(text).map_err(|e| usage(format!("`{text}`: {e}")))?;
    Ok(Side::resolve(store, &r, text)?)
}

fn mapping(path: Option<&Path>) -> anyhow::Result<Mapping> {
    match path {
        None => Ok(Mapping::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            Ok(Mapping::parse(&p.display().to_string(), &text)?)
        }
    }
}

/// `--where QUERY`, when given.
fn where_query(text: Option<&str>) -> anyhow::Result<Option<spoor_exp::Query>> {
    text.map(|q| spoor_exp::Query::parse(q).map_err(|e| usage(format!("--where `{q}`: {e}")))).transpose()
}

/// `KEY=VALUE`.
fn attr(spec: &str) -> anyhow::Result<(String, String)> {
    let (k, v) = spec.split_once('=').ok_or_else(|| usage(format!("--attr {spec}: expected KEY=VALUE")))?;
    let k = k.trim();
    let valid = !k.is_empty()
        && k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if !valid {
        return Err(usage(format!(
            "--attr {spec}: `{k}` is not an attribute name (a letter, then letters, digits, _ . -)"
        )));
    }
    Ok((k.to_owned(), v.trim().to_owned()))
}

/// Now as `YYYY-MM-DDTHH:MM:SSZ`.
fn now_utc() -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

fn main() {
    let args = Args::parse();
    // Its phases free large tables that the next one allocates again.
    spoor_format::mem::keep_freed_memory();
    spoor_cli::run("spoor-exp", || {
        let db = args
            .db
            .clone()
            .or_else(|| std::env::var_os("SPOOR_DB").filter(|v| !v.is_empty()).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("spoor.db"));
        let form = match args.format {
            Format::Text => Form::Text,
            Format::Csv => Form::Csv,
            Format::Json => Form::Json,
        };
        let console = Console::new("spoor-exp", args.quiet);
        let mut store = Store::open(&db)?;
        let mut failed: Option<String> = None;
        let text = match &args.command {
            Verb::Add { traces, attrs, again, tmpdir } => {
                let attrs = attrs.iter().map(|a| attr(a)).collect::<anyhow::Result<Vec<_>>>()?;
                let spill = spoor_cli::SpillDir::new("spoor-exp", tmpdir.as_deref());
                let mut lines = String::new();
                for t in traces {
                    let path = t.display().to_string();
                    let waits_in = spoor_cli::spill::wait_state_arena(&path, None, &spill)?;
                    let d = spoor_exp::derive_within(&path, spoor_cli::graph_budget(), waits_in, &console)?;
                    for w in &d.warnings {
                        spoor_model::Feedback::warn(&console, w);
                    }
                    if !again {
                        if let Some(id) = store.run_with_hash(&d.hash)? {
                            return Err(usage(format!(
                                "{path}: run {id} already holds a trace of this content; --again adds it anyway"
                            )));
                        }
                    }
                    let id = store.add(&d, &attrs, &now_utc())?;
                    lines.push_str(&format!("{id}\t{path}\n"));
                }
                lines
            }
            Verb::List { query } => {
                let q = where_query(query.as_deref())?;
                let ids = store.select(q.as_ref())?;
                let list = ids.iter().map(|&id| store.expect_run(id)).collect::<Result<Vec<_>, _>>()?;
                render::tables(&[render::runs(&list, form)], form)
            }
            Verb::Show { run } => {
                let r = store.expect_run(*run)?;
                let status = spoor_exp::TraceStatus::of(&r).describe(&r);
                if let Some(s) = &status {
                    spoor_model::Feedback::warn(&console, s);
                }
                let program: Vec<(String, f64)> = store
                    .metrics(*run)?
                    .into_iter()
                    .filter(|(f, _, _)| f == "/")
                    .map(|(_, m, v)| (m, v))
                    .collect();
                render::tables(&render::show(&r, &store.findings(*run)?, &program, status, form), form)
            }
            Verb::Rm { runs } => {
                let missing = store.remove(runs)?;
                if !missing.is_empty() {
                    let list: Vec<String> = missing.iter().map(|i| i.to_string()).collect();
                    return Err(usage(format!("{}: no run {}", db.display(), list.join(", "))));
                }
                String::new()
            }
            Verb::Structure { a, b, map } => {
                let (sa, sb) = (runs(&store, a)?, runs(&store, b)?);
                let map = mapping(map.as_deref())?;
                let (x, y) = (ops::structure(&store, &sa, &map)?, ops::structure(&store, &sb, &map)?);
                let d = ops::struct_diff(&x, &y);
                let suggestion = if d.only_a.is_empty() && d.only_b.is_empty() {
                    Default::default()
                } else {
                    ops::suggest_mapping(&x, &y)
                };
                render::tables(&render::structure(&d, &sa.label, &sb.label, suggestion.pairs()), form)
            }
            Verb::Diff { a, b, threshold, min_share, metrics, map } => {
                let (threshold, min_share) = (share("threshold", threshold)?, share("min-share", min_share)?);
                let (sa, sb) = (runs(&store, a)?, runs(&store, b)?);
                let map = mapping(map.as_deref())?;
                let (mut x, mut y) =
                    (ops::metrics(&store, &sa, &map)?, ops::metrics(&store, &sb, &Mapping::default())?);
                if !metrics.is_empty() {
                    x.retain(|k, _| metrics.contains(&k.1));
                    y.retain(|k, _| metrics.contains(&k.1));
                }
                let ds = ops::difference(&x, &y, threshold, min_share);
                render::tables(&[render::diff(&ds, &sa.label, &sb.label, threshold, form)], form)
            }
            Verb::Scaling { query } => {
                let q = where_query(query.as_deref())?;
                let ids = store.select(q.as_ref())?;
                if ids.is_empty() {
                    return Err(usage(format!("{}: no run to scale", db.display())));
                }
                render::tables(&[render::scaling(&ops::scaling(&store, &ids)?)], form)
            }
            Verb::Directives { runs: names, no_prune, margin } => {
                if !(margin.is_finite() && *margin > 0.0 && *margin <= 1.0) {
                    return Err(usage(format!("--margin {margin}: expected a share in (0, 1]")));
                }
                let mut ids = Vec::new();
                for n in names {
                    ids.extend(runs(&store, n)?.ids);
                }
                ids.sort_unstable();
                ids.dedup();
                ops::directives(&store, &ids, !no_prune, *margin)?
            }
            Verb::Check { baseline, new, max_regression, map } => {
                let max = share("max-regression", max_regression)?;
                let (sa, sb) = (runs(&store, baseline)?, runs(&store, new)?);
                let map = mapping(map.as_deref())?;
                let (x, y) =
                    (ops::metrics(&store, &sa, &map)?, ops::metrics(&store, &sb, &Mapping::default())?);
                let rs = ops::check(&x, &y, max);
                if !rs.is_empty() {
                    const NAMED: usize = 5;
                    let mut named: Vec<String> =
                        rs.iter().take(NAMED).map(|r| format!("{} {}", r.focus, r.metric)).collect();
                    if rs.len() > NAMED {
                        named.push(format!("and {} more", rs.len() - NAMED));
                    }
                    failed = Some(format!(
                        "{} regressed beyond {} against {}: {}",
                        sb.label,
                        max_regression,
                        sa.label,
                        named.join("; ")
                    ));
                }
                render::tables(&[render::check(&rs, max, form)], form)
            }
        };
        let mut out = Output::create(args.output.as_deref())?;
        out.write_all(text.as_bytes())?;
        out.commit()?;
        match failed {
            Some(why) => Err(anyhow::anyhow!(why)),
            None => Ok(()),
        }
    })
}
