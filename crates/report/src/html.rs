//! The HTML report: one self-contained file (inline style, inline SVG, no scripts, no
//! external resources) with every table and picture.

use crate::svg::esc;
use crate::table::{Cell, Table, Unit};
use std::fmt::Write as _;

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:12px;margin:.4em 0}\
th,td{border:1px solid #ddd;padding:2px 6px}th{background:#f0f0f0}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
p.note{color:#666;font-size:12px;margin:.2em 0}\
svg{display:block;margin:.5em 0;max-width:100%;height:auto}";

/// A table as an HTML `<table>` whose id is the table's name; times in ms. The title is
/// the heading of the section that holds the table, so it is not repeated as a caption.
pub fn table(t: &Table) -> String {
    let mut o = String::new();
    let _ = write!(o, r#"<table id="{}" class="report-table"><thead><tr>"#, esc(&t.name));
    for c in &t.columns {
        let head = match c.unit {
            Unit::Ns => format!("{} (ms)", c.name),
            Unit::Pct => format!("{} %", c.name),
            _ => c.name.clone(),
        };
        let _ = write!(o, "<th>{}</th>", esc(&head));
    }
    o.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        o.push_str("<tr>");
        for (v, c) in r.iter().zip(&t.columns) {
            match v {
                Cell::Text(s) => {
                    let _ = write!(o, "<td>{}</td>", esc(s));
                }
                Cell::Empty => o.push_str(r#"<td class="num">-</td>"#),
                Cell::Num(x) => {
                    let s = match c.unit {
                        Unit::Ns => format!("{:.3}", x / 1e6),
                        Unit::Pct => format!("{x:.1}"),
                        _ if x.fract() == 0.0 => crate::table::plain_number(*x),
                        _ => format!("{x:.3}"),
                    };
                    let _ = write!(o, r#"<td class="num">{s}</td>"#);
                }
            }
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>");
    for n in &t.notes {
        let _ = write!(o, r#"<p class="note">{}</p>"#, esc(n));
    }
    o
}

/// A section of the page: a heading and its HTML.
pub struct Section {
    pub title: String,
    pub body: String,
}

/// The whole page.
pub fn page(title: &str, intro: &[String], sections: &[Section]) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    );
    for p in intro {
        let _ = writeln!(o, r#"<p class="note">{}</p>"#, esc(p));
    }
    o.push_str("<nav><ul>");
    for (i, s) in sections.iter().enumerate() {
        let _ = write!(o, r##"<li><a href="#s{i}">{}</a></li>"##, esc(&s.title));
    }
    o.push_str("</ul></nav>\n");
    for (i, s) in sections.iter().enumerate() {
        let _ = writeln!(o, r#"<section id="s{i}"><h2>{}</h2>{}</section>"#, esc(&s.title), s.body);
    }
    o.push_str("</body></html>\n");
    o
}
