//! SVG pictures: time histograms (several series overlaid) and the space-time diagram
//! (Enterprise's transaction time-line) with a path overlay drawn on top.

use crate::metric::Metric;
use crate::overlay::Overlay;
use crate::table::Unit;
use crate::tables::SpacetimeRow;
use crate::{Analysis, Result};
use spoor_model::LocId;
use std::collections::HashMap;
use std::fmt::Write as _;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

/// Where an axis tick's label hangs from its tick: the last one ends at its tick, so that
/// it is not cut off at the picture's right edge.
fn tick_anchor(i: usize, last: usize) -> &'static str {
    if i == last {
        "end"
    } else {
        "middle"
    }
}

/// `label` shortened from the left (keeping its most specific end, e.g. the rank) to fit
/// `width` pixels at `font` size, with an ellipsis where it was cut.
fn fit_label(label: &str, width: f64, font: f64) -> String {
    // Sans-serif glyphs average a little over half the font size in width.
    let max = (width / (font * 0.6)).floor().max(4.0) as usize;
    let n = label.chars().count();
    if n <= max {
        return label.to_owned();
    }
    let tail: String = label.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}

/// One curve of a time histogram.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    /// Time the curve's x axis starts from (its run's start), ns.
    pub origin: i64,
    pub start: i64,
    pub width: i64,
    pub values: Vec<f64>,
}

const COLORS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];

/// The y value plotted for a bin: time metrics as the average number of locations in
/// that state (time / bin width); counts and bytes per millisecond.
fn rate(m: Metric, v: f64, width: i64) -> f64 {
    match m.unit() {
        Unit::Ns => v / width as f64,
        _ => v / width as f64 * 1e6,
    }
}

fn y_label(m: Metric) -> String {
    match m.unit() {
        Unit::Ns => format!("{}: average locations (time / bin)", m.name()),
        _ => format!("{} per ms", m.name()),
    }
}

/// A time histogram of `metric`, the series overlaid (x: time since each series' origin).
pub fn histogram(metric: Metric, series: &[Series], id: &str) -> String {
    let (w, h, left, top, bottom) = (900.0, 260.0, 84.0, 30.0, 40.0);
    let pw = w - left - 20.0;
    let ph = h - top - bottom;
    let mut xmax: f64 = 1.0;
    let mut ymax: f64 = 0.0;
    for s in series {
        let end = s.start + s.width * s.values.len() as i64 - s.origin;
        xmax = xmax.max(end as f64);
        for v in &s.values {
            ymax = ymax.max(rate(metric, *v, s.width));
        }
    }
    if ymax <= 0.0 {
        ymax = 1.0;
    }
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" id="{}" class="histogram" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#,
        esc(id)
    );
    let _ = write!(o, r#"<title>{}</title>"#, esc(&format!("Time histogram of {}", metric.name())));
    let _ = write!(
        o,
        r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/>"##
    );
    let _ = write!(o, r#"<text x="{left}" y="18">{}</text>"#, esc(&y_label(metric)));
    for i in 0..=4 {
        let f = i as f64 / 4.0;
        let x = left + f * pw;
        let y = top + ph - f * ph;
        let _ = write!(
            o,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="{}">{}</text>"#,
            h - 22.0,
            tick_anchor(i, 4),
            ms(f * xmax)
        );
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{:.3}</text>"#,
            left - 4.0,
            y + 4.0,
            f * ymax
        );
    }
    for (k, s) in series.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let mut pts = String::new();
        for (i, v) in s.values.iter().enumerate() {
            let x0 = left + (s.start + i as i64 * s.width - s.origin) as f64 / xmax * pw;
            let x1 = left + (s.start + (i as i64 + 1) * s.width - s.origin) as f64 / xmax * pw;
            let y = top + ph - rate(metric, *v, s.width) / ymax * ph;
            let _ = write!(pts, "{:.2},{:.2} {:.2},{:.2} ", x0.max(left), y, x1.min(left + pw), y);
        }
        let _ = write!(
            o,
            r#"<polyline class="series" fill="none" stroke="{c}" stroke-width="1.5" points="{}"><title>{}</title></polyline>"#,
            pts.trim_end(),
            esc(&s.label)
        );
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" fill="{c}">{}</text>"#,
            left + pw - 200.0,
            top + 14.0 + 13.0 * k as f64,
            esc(&s.label)
        );
    }
    o.push_str("</svg>");
    o
}

/// The series of one run's histogram of `m`.
pub fn series_of(a: &Analysis, m: Metric, label: &str) -> Result<Series> {
    let (start, width, values) = a.histogram(m)?;
    Ok(Series { label: label.to_owned(), origin: a.span().map_or(start, |s| s.0), start, width, values })
}

/// The space-time diagram: a line per location (or per group of consecutive locations
/// when there are more than the rows allowed), green where busy, red where waiting,
/// each a share of the line's height; message lines for the longest transits; the
/// overlay in black on top.
pub fn spacetime(a: &Analysis, overlay: Option<&Overlay>) -> String {
    let rows = a.spacetime_rows();
    let Some((t0, t1)) = a.span() else {
        return r#"<svg xmlns="http://www.w3.org/2000/svg" id="spacetime" width="400" height="40"><text x="10" y="20">no events</text></svg>"#.into();
    };
    let nrows = rows.len().max(1);
    let f = Frame {
        t0,
        t1,
        span: (t1 - t0).max(1) as f64,
        rh: (720.0 / nrows as f64).clamp(3.0, 24.0),
        left: 170.0,
        top: 40.0,
        pw: 1000.0,
    };
    let h = f.top + f.rh * nrows as f64 + 70.0;
    let w = f.left + f.pw + 20.0;
    let mut row_of: HashMap<LocId, usize> = HashMap::new();
    let mut most = 1;
    for (r, row) in rows.iter().enumerate() {
        most = most.max(row.1.len());
        for &l in &row.1 {
            row_of.insert(l, r);
        }
    }
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" id="spacetime" class="spacetime" width="{w}" height="{h:.0}" viewBox="0 0 {w} {h:.0}" font-family="sans-serif" font-size="10">"#
    );
    o.push_str("<title>Space-time diagram</title>");
    spacetime_caption(&mut o, &f, a, &rows, most);
    spacetime_legend(&mut o, &f, overlay);
    spacetime_rows(&mut o, &f, a.bins(), &rows);
    spacetime_messages(&mut o, &f, a, &row_of);
    spacetime_waits(&mut o, &f, a, &row_of);
    if let Some(ov) = overlay.filter(|o| !o.marks.is_empty()) {
        spacetime_marks(&mut o, &f, ov, &row_of);
    }
    if let Some(ov) = overlay.filter(|o| o.has_path()) {
        spacetime_overlay(&mut o, &f, ov, &row_of);
    }
    spacetime_axis(&mut o, &f, nrows);
    o.push_str("</svg>");
    o
}

/// The space-time diagram's geometry: the time span and where it is drawn.
struct Frame {
    t0: i64,
    t1: i64,
    span: f64,
    /// A row's height.
    rh: f64,
    left: f64,
    top: f64,
    /// The plot's width.
    pw: f64,
}

impl Frame {
    /// The x of time `t`.
    fn x(&self, t: i64) -> f64 {
        self.left + (t - self.t0) as f64 / self.span * self.pw
    }

    /// The y of row `r`'s middle.
    fn cy(&self, r: usize) -> f64 {
        self.top + self.rh * r as f64 + self.rh / 2.0
    }
}

fn spacetime_caption(o: &mut String, f: &Frame, a: &Analysis, rows: &[SpacetimeRow], most: usize) {
    let nlocs: usize = rows.iter().map(|r| r.1.len()).sum();
    let msgs = a.messages();
    let drawn = if a.matched { a.longest_messages().len() } else { 0 };
    let mut caption = format!("{nlocs} locations");
    if most > 1 {
        let _ = write!(
            caption,
            " in {} rows of up to {most} consecutive locations (each row shows their summed time)",
            rows.len()
        );
    }
    if a.matched {
        if drawn as u64 == msgs.count {
            let _ = write!(caption, "; all {} messages drawn", msgs.count);
        } else {
            let _ = write!(caption, "; {} messages, the {drawn} longest in transit drawn", msgs.count);
        }
    }
    if let Some((_, bw, _)) = a.bins() {
        let _ = write!(caption, "; columns of {}", ms(bw as f64));
    }
    let _ = write!(o, r#"<text class="caption" x="{}" y="16">{}</text>"#, f.left, esc(&caption));
}

fn spacetime_legend(o: &mut String, f: &Frame, overlay: Option<&Overlay>) {
    let left = f.left;
    let _ = write!(
        o,
        r##"<g class="legend"><rect x="{left}" y="22" width="10" height="8" fill="#2ca02c"/><text x="{}" y="30">busy</text><rect x="{}" y="22" width="10" height="8" fill="#d62728"/><text x="{}" y="30">waiting</text><line x1="{}" y1="26" x2="{}" y2="26" stroke="#1f77b4"/><text x="{}" y="30">message</text>"##,
        left + 14.0,
        left + 60.0,
        left + 74.0,
        left + 130.0,
        left + 150.0,
        left + 154.0
    );
    if let Some(ov) = overlay.filter(|o| o.has_path()) {
        let _ = write!(
            o,
            r##"<line x1="{}" y1="26" x2="{}" y2="26" stroke="#000" stroke-width="3"/><text x="{}" y="30">{}</text>"##,
            left + 215.0,
            left + 235.0,
            left + 239.0,
            esc(if ov.name.is_empty() { "path" } else { &ov.name })
        );
    }
    if overlay.is_some_and(|o| !o.marks.is_empty()) {
        let x = left + if overlay.is_some_and(|o| o.has_path()) { 400.0 } else { 215.0 };
        let _ = write!(
            o,
            r##"<rect x="{x}" y="21" width="10" height="10" fill="#ff7f0e" fill-opacity="0.35" stroke="#ff7f0e"/><text x="{}" y="30">annotation (straying from its peers)</text>"##,
            x + 14.0
        );
    }
    o.push_str("</g>");
}

/// Each row's label and base line, then its busy and waiting shares per column.
fn spacetime_rows(o: &mut String, f: &Frame, bins: Option<(i64, i64, usize)>, rows: &[SpacetimeRow]) {
    let (left, rh) = (f.left, f.rh);
    o.push_str(r#"<g class="rows">"#);
    for (r, (label, locs, busy, wait)) in rows.iter().enumerate() {
        let y = f.top + rh * r as f64;
        let _ = write!(
            o,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="{:.0}">{}</text><line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#ddd"/>"##,
            left - 4.0,
            y + rh * 0.75,
            (rh * 0.8).clamp(3.0, 10.0),
            esc(&fit_label(label, left - 8.0, (rh * 0.8).clamp(3.0, 10.0))),
            f.cy(r),
            left + f.pw,
            f.cy(r)
        );
        let Some((b0, bw, _)) = bins else { continue };
        spacetime_shares(o, f, y, (b0, bw), (bw as f64) * locs.len() as f64, busy, wait);
    }
    o.push_str("</g>");
}

/// One row's busy (green) and waiting (red) shares of `cap`, per column of `bw` from `b0`.
fn spacetime_shares(
    o: &mut String,
    f: &Frame,
    y: f64,
    (b0, bw): (i64, i64),
    cap: f64,
    busy: &[f64],
    wait: &[f64],
) {
    let rh = f.rh;
    // Merge runs of columns with the same (quantized) shares into one rectangle.
    let q = |v: f64| ((v / cap) * 32.0).round() as i32;
    let mut i = 0;
    while i < busy.len() {
        let (qb, qw) = (q(busy[i]), q(wait[i]));
        let mut j = i + 1;
        while j < busy.len() && q(busy[j]) == qb && q(wait[j]) == qw {
            j += 1;
        }
        if qb > 0 || qw > 0 {
            let xa = f.x((b0 + i as i64 * bw).max(f.t0));
            let xb = f.x((b0 + j as i64 * bw).min(f.t1));
            let hb = rh * 0.9 * qb as f64 / 32.0;
            let hw = rh * 0.9 * qw as f64 / 32.0;
            if qb > 0 {
                let _ = write!(
                    o,
                    r##"<rect x="{xa:.2}" y="{:.2}" width="{:.2}" height="{hb:.2}" fill="#2ca02c"/>"##,
                    y + rh * 0.05,
                    (xb - xa).max(0.3)
                );
            }
            if qw > 0 {
                let _ = write!(
                    o,
                    r##"<rect x="{xa:.2}" y="{:.2}" width="{:.2}" height="{hw:.2}" fill="#d62728"/>"##,
                    y + rh * 0.05 + hb,
                    (xb - xa).max(0.3)
                );
            }
        }
        i = j;
    }
}

fn spacetime_messages(o: &mut String, f: &Frame, a: &Analysis, row_of: &HashMap<LocId, usize>) {
    o.push_str(r##"<g class="messages" stroke="#1f77b4" stroke-width="0.8">"##);
    if a.matched {
        for m in a.longest_messages() {
            let (Some(&ra), Some(&rb)) = (row_of.get(&m.origin), row_of.get(&m.dest)) else { continue };
            let _ = write!(
                o,
                r#"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}"><title>{}</title></line>"#,
                f.x(m.start),
                f.cy(ra),
                f.x(m.end),
                f.cy(rb),
                esc(&format!(
                    "{} to {}: {} B, transit {}",
                    a.defs.location_name(m.origin),
                    a.defs.location_name(m.dest),
                    m.bytes,
                    ms(m.transit() as f64)
                ))
            );
        }
    }
    o.push_str("</g>");
}

/// The largest waits, outlined on their rows.
fn spacetime_waits(o: &mut String, f: &Frame, a: &Analysis, row_of: &HashMap<LocId, usize>) {
    let largest = a.largest_waits();
    if largest.is_empty() {
        return;
    }
    let rh = f.rh;
    o.push_str(r##"<g class="wait-states" stroke="#ff7f0e" stroke-width="1.5" fill="none">"##);
    for i in largest {
        let Some(&r) = row_of.get(&i.loc) else { continue };
        let (xa, xb) = (f.x(i.start), f.x(i.start + i.duration));
        let _ = write!(
            o,
            r#"<rect class="wait-state" x="{xa:.2}" y="{:.2}" width="{:.2}" height="{:.2}"><title>{}</title></rect>"#,
            f.top + rh * r as f64 + rh * 0.05,
            (xb - xa).max(0.6),
            rh * 0.9,
            esc(&format!(
                "{}: {} waits {}",
                i.pattern.name(),
                a.defs.location_label(i.loc),
                ms(i.duration as f64)
            ))
        );
    }
    o.push_str("</g>");
}

/// Each mark as a translucent band over its row, its label as the band's tooltip and, where
/// the row is tall enough, written at its start.
fn spacetime_marks(o: &mut String, f: &Frame, ov: &Overlay, row_of: &HashMap<LocId, usize>) {
    o.push_str(r##"<g class="marks" fill="#ff7f0e" fill-opacity="0.35" stroke="#ff7f0e">"##);
    for m in &ov.marks {
        let Some(&r) = row_of.get(&m.loc) else { continue };
        let (x0, x1) = (f.x(m.start.max(f.t0)), f.x(m.end.min(f.t1)));
        let y = f.cy(r) - f.rh / 2.0;
        let _ = write!(
            o,
            r#"<rect class="mark" x="{x0:.2}" y="{y:.2}" width="{:.2}" height="{:.2}"><title>{}</title></rect>"#,
            (x1 - x0).max(1.0),
            f.rh,
            esc(&m.label)
        );
        if f.rh >= 10.0 {
            let _ = write!(
                o,
                r##"<text x="{:.2}" y="{:.2}" fill="#000" fill-opacity="1" stroke="none" font-size="{:.0}">{}</text>"##,
                x0 + 2.0,
                f.cy(r) + f.rh * 0.3,
                (f.rh * 0.7).min(10.0),
                esc(&m.label)
            );
        }
    }
    o.push_str("</g>");
}

fn spacetime_overlay(o: &mut String, f: &Frame, ov: &Overlay, row_of: &HashMap<LocId, usize>) {
    o.push_str(r##"<g class="overlay" stroke="#000" stroke-width="3" fill="none">"##);
    for s in &ov.segments {
        let Some(&r) = row_of.get(&s.loc) else { continue };
        let _ = write!(
            o,
            r#"<line class="segment" x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}"/>"#,
            f.x(s.start),
            f.cy(r),
            f.x(s.end),
            f.cy(r)
        );
    }
    for arc in &ov.arcs {
        let (Some(&ra), Some(&rb)) = (row_of.get(&arc.from_loc), row_of.get(&arc.to_loc)) else {
            continue;
        };
        let _ = write!(
            o,
            r#"<line class="arc" stroke-dasharray="4 2" x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}"/>"#,
            f.x(arc.from_time),
            f.cy(ra),
            f.x(arc.to_time),
            f.cy(rb)
        );
    }
    o.push_str("</g>");
}

/// The time axis under the rows: six ticks and its title.
fn spacetime_axis(o: &mut String, f: &Frame, nrows: usize) {
    let (left, pw) = (f.left, f.pw);
    let base = f.top + f.rh * nrows as f64;
    for i in 0..=5 {
        let fr = i as f64 / 5.0;
        let _ = write!(
            o,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#999"/><text x="{0:.1}" y="{3:.1}" text-anchor="{5}">{4}</text>"##,
            left + fr * pw,
            base,
            base + 5.0,
            base + 17.0,
            ms(fr * f.span),
            tick_anchor(i, 5)
        );
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">time since the first event</text>"#,
        left + pw / 2.0,
        base + 32.0
    );
}
