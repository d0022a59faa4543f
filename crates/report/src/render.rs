//! Putting the report together in each output form (formats/report.md).

use crate::html::{self, Section};
use crate::metric::{Level, Metric};
use crate::overlay::Overlay;
use crate::svg;
use crate::table::Table;
use crate::tables::TableKind;
use crate::{compare, Analysis, Error, Result};
use serde_json::{json, Value};
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
    Svg,
    Html,
}

/// What the report holds: the tables asked for (empty: the full report), the level of
/// the metric and profile tables, and the profile's metric.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub tables: Vec<TableKind>,
    pub level: Option<Level>,
    pub metric: Option<String>,
    /// Why no critical path is drawn (the HTML summary says so instead of its figures).
    pub no_path: Option<String>,
}

enum Item {
    Table(Table),
    Histogram(Metric),
    Spacetime,
}

fn multi_threaded(a: &Analysis) -> bool {
    let mut seen = std::collections::HashSet::new();
    a.defs.locations.iter().any(|l| !seen.insert(l.process))
}

fn profile(a: &Analysis, sel: &Selection) -> Result<Table> {
    let level = sel.level.unwrap_or(Level::Procedure);
    let Some(m) = &sel.metric else {
        let names: Vec<&str> = level.metrics().iter().map(|m| m.name()).collect();
        return Err(Error::Bad(format!(
            "the profile table needs --metric; the metrics of the {} level are: {}",
            level.name(),
            names.join(", ")
        )));
    };
    let metric = Metric::parse(m, level).map_err(Error::Bad)?;
    a.profile_table(level, metric)
}

fn items(a: &Analysis, sel: &Selection, pictures: bool) -> Result<Vec<Item>> {
    let mut out = Vec::new();
    let levels: Vec<Level> = match sel.level {
        Some(l) => vec![l],
        None => Level::ALL.iter().copied().filter(|&l| l != Level::Thread || multi_threaded(a)).collect(),
    };
    let only_waits = !sel.tables.is_empty() && sel.tables.iter().all(|&k| k == TableKind::Waits);
    if !a.stats() && (pictures || !only_waits) {
        return Err(Error::Bad(
            "the statistics were not computed (Options::stats): only the wait states can be shown".into(),
        ));
    }
    if sel.tables.is_empty() {
        for &l in &levels {
            out.push(Item::Table(a.metric_table(l)));
        }
        if sel.metric.is_some() {
            out.push(Item::Table(profile(a, sel)?));
        }
        out.push(Item::Table(a.callgraph_table()));
        if a.ordered {
            out.push(Item::Table(a.npt_table()?));
        }
        out.push(Item::Table(a.utilization_table()));
        if a.matched {
            out.push(Item::Table(a.messages_table()?));
            out.push(Item::Table(a.transactions_table()?));
        }
        if a.wait_states().is_ok() {
            out.extend(a.waits_tables()?.into_iter().map(Item::Table));
        }
        for m in a.histogram_metrics() {
            out.push(Item::Histogram(m));
        }
        if pictures {
            out.push(Item::Spacetime);
        }
        return Ok(out);
    }
    for &k in &sel.tables {
        match k {
            TableKind::Metrics => {
                for &l in &levels {
                    out.push(Item::Table(a.metric_table(l)));
                }
            }
            TableKind::Profile => out.push(Item::Table(profile(a, sel)?)),
            TableKind::Callgraph => out.push(Item::Table(a.callgraph_table())),
            TableKind::Npt => out.push(Item::Table(a.npt_table()?)),
            TableKind::Utilization => out.push(Item::Table(a.utilization_table())),
            TableKind::Messages => out.push(Item::Table(a.messages_table()?)),
            TableKind::Transactions => out.push(Item::Table(a.transactions_table()?)),
            TableKind::Histogram => {
                for m in &a.opts.hist {
                    a.histogram(*m)?;
                    out.push(Item::Histogram(*m));
                }
            }
            TableKind::Spacetime => out.push(Item::Spacetime),
            TableKind::Waits => out.extend(a.waits_tables()?.into_iter().map(Item::Table)),
        }
    }
    Ok(out)
}

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A text sparkline of at most `width` characters (adjacent bins summed), scaled to its
/// largest value; empty bins are blanks.
pub fn sparkline(values: &[f64], width: usize) -> String {
    if values.is_empty() {
        return String::new();
    }
    let per = values.len().div_ceil(width.max(1));
    let sums: Vec<f64> = values.chunks(per).map(|c| c.iter().sum()).collect();
    let max = sums.iter().cloned().fold(0.0, f64::max);
    sums.iter()
        .map(
            |&v| {
                if v <= 0.0 || max <= 0.0 {
                    ' '
                } else {
                    SPARKS[(((v / max) * 7.0).round() as usize).min(7)]
                }
            },
        )
        .collect()
}

fn histogram_text(a: &Analysis, m: Metric) -> Result<String> {
    let (_, w, v) = a.histogram(m)?;
    let max = v.iter().cloned().fold(0.0, f64::max);
    let total: f64 = v.iter().sum();
    let per = v.len().div_ceil(60).max(1);
    Ok(format!(
        "Time histogram of {} ({}): |{}|\n  {} bins of {:.3} ms (a character: {:.3} ms); largest bin {}; total {}\n",
        m.name(),
        a.focus_label(),
        sparkline(&v, 60),
        v.len(),
        w as f64 / 1e6,
        (w as f64 * per as f64) / 1e6,
        crate::table::plain_number(max),
        crate::table::plain_number(total)
    ))
}

fn histogram_json(a: &Analysis, m: Metric) -> Result<Value> {
    let (start, w, v) = a.histogram(m)?;
    Ok(json!({
        "metric": m.name(), "unit": m.unit().name(), "focus": a.focus_label(),
        "start_ns": start, "bin_ns": w,
        "values": v.iter().map(|x| crate::table::json_number(*x)).collect::<Vec<_>>(),
    }))
}

fn stack_svgs(parts: &[String]) -> String {
    // Several pictures in one SVG document: nested <svg> elements one under another.
    let mut y = 0.0;
    let mut body = String::new();
    let mut width: f64 = 0.0;
    for p in parts {
        let w = attr(p, "width").unwrap_or(900.0);
        let h = attr(p, "height").unwrap_or(300.0);
        body.push_str(&p.replacen("<svg ", &format!("<svg y=\"{y}\" "), 1));
        y += h;
        width = width.max(w);
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" viewBox="0 0 {width} {y}">{body}</svg>"#
    )
}

fn attr(svg: &str, name: &str) -> Option<f64> {
    let head = &svg[..svg.find('>')?];
    let at = head.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = head[at..].find('"')? + at;
    head[at..end].parse().ok()
}

/// Writes the report of one run.
pub fn render(
    a: &Analysis,
    sel: &Selection,
    format: Format,
    overlay: Option<&Overlay>,
    out: &mut dyn Write,
) -> Result<()> {
    let pictures = matches!(format, Format::Svg | Format::Html);
    let items = items(a, sel, pictures)?;
    match format {
        Format::Text => render_text(a, &items, out),
        Format::Csv => render_csv(a, &items, out),
        Format::Json => render_json(a, &items, out),
        Format::Svg => render_svg(a, sel, &items, overlay, out),
        Format::Html => render_html(a, sel, &items, overlay, out),
    }
}

/// The error for a picture asked for in a format of text.
fn spacetime_not_text() -> Error {
    Error::Bad("the space-time diagram is a picture: use --format svg or html".into())
}

fn render_text(a: &Analysis, items: &[Item], out: &mut dyn Write) -> Result<()> {
    let mut first = true;
    for it in items {
        if !first {
            writeln!(out)?;
        }
        first = false;
        match it {
            Item::Table(t) => out.write_all(t.to_text().as_bytes())?,
            Item::Histogram(m) => out.write_all(histogram_text(a, *m)?.as_bytes())?,
            Item::Spacetime => return Err(spacetime_not_text()),
        }
    }
    for n in a.notes() {
        writeln!(out, "note: {n}")?;
    }

    Ok(())
}

fn render_csv(a: &Analysis, items: &[Item], out: &mut dyn Write) -> Result<()> {
    let many = items.len() > 1;
    for (i, it) in items.iter().enumerate() {
        let t = match it {
            Item::Table(t) => t.clone(),
            Item::Histogram(m) => a.histogram_table(*m)?,
            Item::Spacetime => return Err(spacetime_not_text()),
        };
        if many {
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "# {}", t.name)?;
        }
        out.write_all(t.to_csv().as_bytes())?;
    }

    Ok(())
}

fn render_json(a: &Analysis, items: &[Item], out: &mut dyn Write) -> Result<()> {
    let mut tables = Vec::new();
    let mut hists = Vec::new();
    for it in items {
        match it {
            Item::Table(t) => tables.push(t.to_json()),
            Item::Histogram(m) => hists.push(histogram_json(a, *m)?),
            Item::Spacetime => return Err(spacetime_not_text()),
        }
    }
    let span = a.span().map(|(s, e)| json!({"start_ns": s, "end_ns": e}));
    let doc = json!({
        "trace": a.name, "events": a.events(), "ordered": a.ordered, "matched": a.matched,
        "focus": a.focus_label(), "phase": a.opts.phase, "span": span,
        "notes": a.notes(), "tables": tables, "histograms": hists,
    });
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(|e| Error::Io(e.into()))?;
    writeln!(out)?;

    Ok(())
}

/// The pictures alone: the space-time diagram, or the pictures of the tables asked for.
fn render_svg(
    a: &Analysis,
    sel: &Selection,
    items: &[Item],
    overlay: Option<&Overlay>,
    out: &mut dyn Write,
) -> Result<()> {
    let mut parts = Vec::new();
    let pics: Vec<&Item> = if sel.tables.is_empty() {
        items.iter().filter(|i| matches!(i, Item::Spacetime)).collect()
    } else {
        items.iter().filter(|i| !matches!(i, Item::Table(_))).collect()
    };
    if pics.is_empty() {
        return Err(Error::Bad("--format svg draws pictures: --table spacetime or --table histogram".into()));
    }
    for it in pics {
        match it {
            Item::Histogram(m) => {
                let s = svg::series_of(a, *m, &a.name)?;
                parts.push(svg::histogram(*m, &[s], &format!("histogram-{}", m.name())));
            }
            Item::Spacetime => parts.push(svg::spacetime(a, overlay)),
            Item::Table(_) => {}
        }
    }
    let doc = if parts.len() == 1 { parts.pop().unwrap() } else { stack_svgs(&parts) };
    writeln!(out, "{doc}")?;

    Ok(())
}

/// A page opening with the summary, then a section per item.
fn render_html(
    a: &Analysis,
    sel: &Selection,
    items: &[Item],
    overlay: Option<&Overlay>,
    out: &mut dyn Write,
) -> Result<()> {
    let mut sections = vec![Section {
        title: "Summary".into(),
        body: crate::summary::html(a, overlay, sel.no_path.as_deref()),
    }];
    for it in items {
        match it {
            Item::Table(t) => sections.push(Section { title: t.title.clone(), body: html::table(t) }),
            Item::Histogram(m) => {
                let s = svg::series_of(a, *m, &a.name)?;
                sections.push(Section {
                    title: format!("Time histogram of {} ({})", m.name(), a.focus_label()),
                    body: svg::histogram(*m, &[s], &format!("histogram-{}", m.name())),
                });
            }
            Item::Spacetime => sections
                .push(Section { title: "Space-time diagram".into(), body: svg::spacetime(a, overlay) }),
        }
    }
    let mut intro = vec![format!(
        "{} events; {}; {}",
        a.events(),
        if a.ordered { "globally ordered" } else { "not ordered" },
        if a.matched { "messages matched" } else { "messages not matched" }
    )];
    intro.extend(a.notes());
    out.write_all(html::page(&format!("spoor report: {}", a.name), &intro, &sections).as_bytes())?;

    Ok(())
}

/// Writes the comparison of several runs: the metric table of the level (default:
/// application) side by side, and each histogram overlaid.
pub fn render_compare(runs: &[Analysis], sel: &Selection, format: Format, out: &mut dyn Write) -> Result<()> {
    let levels: Vec<Level> = match sel.level {
        Some(l) => vec![l],
        None => vec![Level::Application, Level::Process, Level::Procedure],
    };
    let tables: Vec<Table> = levels.iter().map(|&l| compare::table(runs, l)).collect();
    let labels = compare::labels(runs);
    let metrics = runs[0].histogram_metrics();
    match format {
        Format::Text => {
            for t in &tables {
                out.write_all(t.to_text().as_bytes())?;
                writeln!(out)?;
            }
            for m in &metrics {
                writeln!(out, "Time histogram of {} (each run from its start):", m.name())?;
                for (r, l) in runs.iter().zip(&labels) {
                    let (_, _, v) = r.histogram(*m)?;
                    writeln!(out, "  |{}|  {l}", sparkline(&v, 60))?;
                }
            }
        }
        Format::Csv => {
            for (i, t) in tables.iter().enumerate() {
                if tables.len() > 1 {
                    if i > 0 {
                        writeln!(out)?;
                    }
                    writeln!(out, "# {}", t.name)?;
                }
                out.write_all(t.to_csv().as_bytes())?;
            }
        }
        Format::Json => {
            let mut hists = Vec::new();
            for (r, l) in runs.iter().zip(&labels) {
                for m in &metrics {
                    let mut h = histogram_json(r, *m)?;
                    h["run"] = json!(l);
                    hists.push(h);
                }
            }
            let doc = json!({
                "runs": labels,
                "tables": tables.iter().map(|t| t.to_json()).collect::<Vec<_>>(),
                "histograms": hists,
            });
            serde_json::to_writer_pretty(&mut *out, &doc).map_err(|e| Error::Io(e.into()))?;
            writeln!(out)?;
        }
        Format::Svg | Format::Html => {
            let mut pics = Vec::new();
            for m in &metrics {
                let series: Vec<svg::Series> =
                    runs.iter().zip(&labels).map(|(r, l)| svg::series_of(r, *m, l)).collect::<Result<_>>()?;
                pics.push((m, svg::histogram(*m, &series, &format!("histogram-{}", m.name()))));
            }
            if format == Format::Svg {
                if pics.is_empty() {
                    return Err(Error::Bad("no histogram to draw: give --hist METRIC".into()));
                }
                let parts: Vec<String> = pics.into_iter().map(|p| p.1).collect();
                writeln!(out, "{}", if parts.len() == 1 { parts[0].clone() } else { stack_svgs(&parts) })?;
            } else {
                let mut sections: Vec<Section> =
                    tables.iter().map(|t| Section { title: t.title.clone(), body: html::table(t) }).collect();
                for (m, p) in pics {
                    sections.push(Section {
                        title: format!("Time histograms of {}, overlaid", m.name()),
                        body: p,
                    });
                }
                let intro = vec![format!("runs: {}", labels.join(", "))];
                out.write_all(html::page("spoor report: comparison", &intro, &sections).as_bytes())?;
            }
        }
    }
    Ok(())
}
