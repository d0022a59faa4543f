//! A table of the report and its text, CSV and JSON forms (formats/report.md).

use serde_json::{json, Value};
use std::fmt::Write as _;

/// What a column holds, which decides how each form writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Text (names).
    Text,
    /// A count.
    Count,
    /// Bytes.
    Bytes,
    /// Nanoseconds; the text form shows milliseconds.
    Ns,
    /// A percentage (0 to 100).
    Pct,
    /// A plain number.
    Number,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Text => "text",
            Unit::Count => "count",
            Unit::Bytes => "bytes",
            Unit::Ns => "ns",
            Unit::Pct => "percent",
            Unit::Number => "number",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Num(f64),
    /// No value (a message without a reply, a run without that node).
    Empty,
}

impl Cell {
    pub fn num(&self) -> Option<f64> {
        match self {
            Cell::Num(v) => Some(*v),
            _ => None,
        }
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_owned())
    }
}
impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Num(v)
    }
}
impl From<Option<f64>> for Cell {
    fn from(v: Option<f64>) -> Cell {
        v.map_or(Cell::Empty, Cell::Num)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub unit: Unit,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Identifier, e.g. `metrics.process` (formats/report.md lists them).
    pub name: String,
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines printed under the table in the text form (and kept in JSON).
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(name: &str, title: &str, columns: &[(&str, Unit)]) -> Table {
        Table {
            name: name.to_owned(),
            title: title.to_owned(),
            columns: columns.iter().map(|&(n, u)| Column { name: n.to_owned(), unit: u }).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "{}", self.name);
        self.rows.push(row);
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The text form: a title, aligned columns, notes.
    pub fn to_text(&self) -> String {
        let head: Vec<String> = self
            .columns
            .iter()
            .map(|c| match c.unit {
                Unit::Ns => format!("{} (ms)", c.name),
                Unit::Pct => format!("{} %", c.name),
                _ => c.name.clone(),
            })
            .collect();
        let body: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().zip(&self.columns).map(|(v, c)| text_cell(v, c.unit)).collect())
            .collect();
        let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
        for r in &body {
            for (i, s) in r.iter().enumerate() {
                width[i] = width[i].max(s.chars().count());
            }
        }
        let mut out = format!("{}\n", self.title);
        let line = |cells: &[String], out: &mut String| {
            let mut l = String::new();
            for (i, s) in cells.iter().enumerate() {
                let pad = width[i] - s.chars().count();
                if i > 0 {
                    l.push_str("  ");
                }
                if self.columns[i].unit == Unit::Text {
                    l.push_str(s);
                    l.extend(std::iter::repeat_n(' ', pad));
                } else {
                    l.extend(std::iter::repeat_n(' ', pad));
                    l.push_str(s);
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&head, &mut out);
        for r in &body {
            line(r, &mut out);
        }
        if self.rows.is_empty() {
            out.push_str("(no rows)\n");
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }

    /// CSV (RFC 4180): a header of column names, then the rows; times in ns.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let names: Vec<String> = self.columns.iter().map(|c| spoor_format::csv::field(&c.name)).collect();
        out.push_str(&names.join(","));
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::Text(s) => spoor_format::csv::field(s),
                    Cell::Num(v) => plain_number(*v),
                    Cell::Empty => String::new(),
                })
                .collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    pub fn to_json(&self) -> Value {
        let cols: Vec<Value> =
            self.columns.iter().map(|c| json!({"name": c.name, "unit": c.unit.name()})).collect();
        let rows: Vec<Value> =
            self.rows.iter().map(|r| Value::Array(r.iter().map(json_cell).collect())).collect();
        json!({"name": self.name, "title": self.title, "columns": cols, "rows": rows, "notes": self.notes})
    }
}

pub fn json_cell(c: &Cell) -> Value {
    match c {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Num(v) => json_number(*v),
        Cell::Empty => Value::Null,
    }
}

/// An integer when the value is one (so nanoseconds stay exact), else a float; null
/// for NaN and infinities.
pub fn json_number(v: f64) -> Value {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// The shortest text that reads back to `v`; integers without a fraction.
pub fn plain_number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn text_cell(c: &Cell, unit: Unit) -> String {
    match c {
        Cell::Text(s) => s.clone(),
        Cell::Empty => "-".into(),
        Cell::Num(v) => match unit {
            Unit::Ns => format!("{:.3}", v / 1e6),
            Unit::Pct => format!("{v:.1}"),
            Unit::Count | Unit::Bytes => plain_number(*v),
            Unit::Number | Unit::Text => {
                if v.fract() == 0.0 {
                    plain_number(*v)
                } else {
                    format!("{v:.3}")
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let mut t = Table::new("x", "X", &[("name", Unit::Text), ("time", Unit::Ns), ("n", Unit::Count)]);
        t.push(vec!["a,b".into(), 1_500_000.0.into(), 3.0.into()]);
        t.push(vec!["c".into(), 0.5.into(), Cell::Empty]);
        assert_eq!(t.to_csv(), "name,time,n\n\"a,b\",1500000,3\nc,0.5,\n");
        assert_eq!(t.to_text(), "X\nname  time (ms)  n\na,b       1.500  3\nc         0.000  -\n");
        assert_eq!(t.to_json()["rows"][0][1], json!(1500000));
        assert_eq!(t.to_json()["rows"][1][1], json!(0.5));
    }
}
