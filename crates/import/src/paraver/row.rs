//! The `.row` file: names of the objects of each level of Paraver's process
//! and resource models, as blocks
//!
//! ```text
//! LEVEL <CPU|NODE|THREAD|TASK|APPL|WORKLOAD|SYSTEM> SIZE <n>
//! <n lines, one name each>
//! ```
//!
//! separated by blank lines.

use spoor_format::Error;
use std::collections::HashMap;

/// The names per level (upper case level name -> names in object order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub levels: HashMap<String, Vec<String>>,
}

impl Row {
    pub fn level(&self, name: &str) -> Option<&[String]> {
        self.levels.get(name).map(Vec::as_slice)
    }
}

/// Parses a `.row` file's text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Row, Error> {
    let mut row = Row::default();
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let line_no = i as u64 + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let (level, n) = match f.as_slice() {
            ["LEVEL", level, "SIZE", n] => match n.parse::<u64>() {
                Ok(n) => (level.to_ascii_uppercase(), n),
                Err(_) => return Err(Error::at_line(file, line_no, format!("bad size {n:?} in {line:?}"))),
            },
            _ => {
                return Err(Error::at_line(
                    file,
                    line_no,
                    format!("expected `LEVEL <name> SIZE <n>`, found {line:?}"),
                ))
            }
        };
        let mut names = Vec::new();
        for k in 0..n {
            match lines.next() {
                Some((_, name)) => names.push(name.trim().to_string()),
                None => {
                    return Err(Error::at_line(
                        file,
                        line_no,
                        format!("LEVEL {level} announces {n} names but the file ends after {k}"),
                    ))
                }
            }
        }
        if row.levels.insert(level.clone(), names).is_some() {
            return Err(Error::at_line(file, line_no, format!("LEVEL {level} given twice")));
        }
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        let r = parse(
            "x.row",
            "LEVEL CPU SIZE 2\n1.s01\n2.s01\n\nLEVEL NODE SIZE 1\ns01\n\nLEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n",
        )
        .unwrap();
        assert_eq!(r.level("NODE").unwrap(), ["s01"]);
        assert_eq!(r.level("THREAD").unwrap()[1], "THREAD 1.2.1");
        assert!(r.level("TASK").is_none());
    }

    #[test]
    fn malformed() {
        assert_eq!(parse("x.row", "LEVEL CPU SIZE 3\na\nb\n").unwrap_err().line, Some(1));
        assert_eq!(parse("x.row", "\nLEVEL CPU SIZE x\n").unwrap_err().line, Some(2));
        assert_eq!(parse("x.row", "LEVEL CPU SIZE 1\na\nstray\n").unwrap_err().line, Some(3));
        assert_eq!(parse("x.row", "LEVEL CPU SIZE 99999999999999\n").unwrap_err().line, Some(1));
    }
}
