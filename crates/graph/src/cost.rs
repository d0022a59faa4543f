//! What an arc weighs (formats/pag.md, "Cost model"): the weight mode and the
//! communication-cost table (formats/nettable.md).

use crate::error::{Error, Result};
use spoor_model::Feedback;

/// How local arcs are weighed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Process (CPU) time; waiting weighs nothing: the ideal time with one processor
    /// per process.
    #[default]
    Cpu,
    /// Elapsed time: the chain that determined the measured end time.
    Wall,
}

impl Mode {
    /// The mode's name in options and reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Cpu => "cpu",
            Mode::Wall => "wall",
        }
    }

    /// The mode's code in a PAG file's header.
    pub fn code(self) -> u8 {
        match self {
            Mode::Cpu => 0,
            Mode::Wall => 1,
        }
    }

    /// The mode `name` gives, if any.
    pub fn from_name(s: &str) -> Option<Mode> {
        match s {
            "cpu" => Some(Mode::Cpu),
            "wall" => Some(Mode::Wall),
            _ => None,
        }
    }

    /// The mode of a PAG file's code, if any.
    pub fn from_code(c: u8) -> Option<Mode> {
        match c {
            0 => Some(Mode::Cpu),
            1 => Some(Mode::Wall),
            _ => None,
        }
    }
}

/// `cpu` or `wall`, as command lines give it.
impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Mode, String> {
        Mode::from_name(s).ok_or_else(|| format!("expected cpu or wall, found `{s}`"))
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The value at `x` of the line through `rows` (`key` strictly increasing, at least one
/// row): linear between rows, the first row's value below it, extended along the last
/// two rows above the last (a one-row table is constant).
pub(crate) fn interpolate<R>(rows: &[R], x: u64, key: impl Fn(&R) -> u64, value: impl Fn(&R) -> f64) -> f64 {
    let i = rows.partition_point(|r| key(r) <= x);
    if i == 0 {
        value(&rows[0])
    } else if key(&rows[i - 1]) == x || rows.len() == 1 {
        value(&rows[i - 1])
    } else {
        let (a, b) = if i == rows.len() { (&rows[i - 2], &rows[i - 1]) } else { (&rows[i - 1], &rows[i]) };
        let f = (x as f64 - key(a) as f64) / (key(b) as f64 - key(a) as f64);
        value(a) + f * (value(b) - value(a))
    }
}

/// Which messages take a table's local time (formats/nettable.md, "Local").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// Both ends share a processor (of the placement; without one, a process).
    Processor,
    /// Both ends are on one machine.
    Machine,
    /// None: every message is remote (processes that really talk over TCP).
    Never,
}

impl Local {
    /// The meanings by name, as `parse` takes them.
    pub const NAMES: [&'static str; 3] = ["processor", "machine", "never"];

    /// The meaning's name, as `parse` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Local::Processor => "processor",
            Local::Machine => "machine",
            Local::Never => "never",
        }
    }

    /// `processor`, `machine` or `never`.
    pub fn parse(s: &str) -> std::result::Result<Local, String> {
        match s {
            "processor" => Ok(Local::Processor),
            "machine" => Ok(Local::Machine),
            "never" => Ok(Local::Never),
            _ => Err(format!("`{s}` is not a meaning of local: expected {}", Local::NAMES.join(", "))),
        }
    }
}

/// A communication-cost table: the time a message of a given size takes, between
/// locations on one machine (local) and on different machines (remote).
#[derive(Clone, Debug, PartialEq)]
pub struct NetTable {
    /// (bytes, local ns, remote ns), bytes strictly increasing.
    rows: Vec<(u64, f64, f64)>,
    /// What local means, when the user said (`None`: the command's own meaning).
    pub local: Option<Local>,
}

impl NetTable {
    /// The table with `local` as the meaning of local (`None`: the command's own).
    pub fn with_local(mut self, local: Option<Local>) -> NetTable {
        self.local = local;
        self
    }

    /// Parses the CSV form of formats/nettable.md. Returns the table and warnings
    /// (times that fall as sizes grow are accepted with a warning).
    pub fn parse(file: &str, text: &str) -> Result<(NetTable, Vec<String>)> {
        let mut rows: Vec<(u64, f64, f64)> = Vec::new();
        let mut header_seen = false;
        for (n, raw) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            if !header_seen {
                if cols != ["bytes", "local_ns", "remote_ns"] {
                    return Err(Error::input(
                        file,
                        format!(
                            "line {line_no}: expected the header `bytes,local_ns,remote_ns`, found `{line}`"
                        ),
                    ));
                }
                header_seen = true;
                continue;
            }
            if cols.len() != 3 {
                return Err(Error::input(
                    file,
                    format!(
                        "line {line_no}: expected 3 columns (bytes,local_ns,remote_ns), found {}",
                        cols.len()
                    ),
                ));
            }
            let bytes: u64 = cols[0].parse().map_err(|_| {
                Error::input(file, format!("line {line_no}: bytes `{}` is not a whole number", cols[0]))
            })?;
            let time = |s: &str, what: &str| -> Result<f64> {
                match s.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                    _ => Err(Error::input(
                        file,
                        format!("line {line_no}: {what} `{s}` is not a non-negative number of nanoseconds"),
                    )),
                }
            };
            let (local, remote) = (time(cols[1], "local_ns")?, time(cols[2], "remote_ns")?);
            if let Some(&(last, _, _)) = rows.last() {
                if bytes <= last {
                    return Err(Error::input(
                        file,
                        format!("line {line_no}: sizes must increase: {bytes} after {last}"),
                    ));
                }
            }
            rows.push((bytes, local, remote));
        }
        if rows.is_empty() {
            return Err(Error::input(
                file,
                "the table has no rows (expected `bytes,local_ns,remote_ns` lines)",
            ));
        }
        let mut warnings = Vec::new();
        for w in rows.windows(2) {
            for (col, a, b) in [("local", w[0].1, w[1].1), ("remote", w[0].2, w[1].2)] {
                if b < a {
                    warnings.push(format!(
                        "{file}: {col} time falls from {a} ns at {} bytes to {b} ns at {} bytes (not monotone)",
                        w[0].0, w[1].0
                    ));
                }
            }
        }
        Ok((NetTable { rows, local: None }, warnings))
    }

    /// Reads and parses the table at `path`; its warnings go to `feedback`.
    pub fn load(path: &str, feedback: &dyn Feedback) -> Result<NetTable> {
        let text = spoor_format::read_text(path)?;
        let (table, warnings) = NetTable::parse(path, &text)?;
        for w in &warnings {
            feedback.warn(w);
        }
        Ok(table)
    }

    /// The time of a message of `bytes`: linear between rows, the first row's time
    /// below it, extended along the last two rows above the last.
    pub fn time(&self, bytes: u64, local: bool) -> i64 {
        let t = interpolate(&self.rows, bytes, |r| r.0, |r| if local { r.1 } else { r.2 });
        t.max(0.0).round() as i64
    }

    /// The rows: (bytes, local ns, remote ns), bytes strictly increasing.
    pub fn rows(&self) -> &[(u64, f64, f64)] {
        &self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_extrapolates() {
        let (t, w) = NetTable::parse("t", "bytes,local_ns,remote_ns\n0,100,1000\n1000,200,3000\n").unwrap();
        assert!(w.is_empty());
        assert_eq!(t.time(0, true), 100);
        assert_eq!(t.time(500, true), 150);
        assert_eq!(t.time(500, false), 2000);
        assert_eq!(t.time(2000, false), 5000);
        let (one, _) = NetTable::parse("t", "bytes,local_ns,remote_ns\n64,7,9\n").unwrap();
        assert_eq!(one.time(1, true), 7);
        assert_eq!(one.time(1 << 20, false), 9);
    }

    #[test]
    fn refuses_bad_tables_and_warns_on_non_monotone() {
        assert!(NetTable::parse("t", "bytes,local_ns\n1,2\n").is_err());
        let e = NetTable::parse("t.csv", "bytes,local_ns,remote_ns\n10,1,1\n5,1,1\n").unwrap_err();
        assert!(e.to_string().contains("t.csv: line 3: sizes must increase"), "{e}");
        assert!(NetTable::parse("t", "bytes,local_ns,remote_ns\n1,-2,3\n").is_err());
        assert!(NetTable::parse("t", "bytes,local_ns,remote_ns\n").is_err());
        let (_, w) = NetTable::parse("t", "bytes,local_ns,remote_ns\n1,5,5\n2,4,6\n").unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("local time falls"), "{w:?}");
    }
}
