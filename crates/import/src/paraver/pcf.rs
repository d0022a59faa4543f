//! The `.pcf` file: Paraver's configuration, of which spoor reads the names.
//!
//! Sections start with a keyword alone on its line and end at a blank line:
//! `STATES` (`value name` lines), `EVENT_TYPE` (`color type label` lines, one
//! or more types sharing the `VALUES` block that may follow: `value name`
//! lines). Every other section (`DEFAULT_OPTIONS`, `STATES_COLOR`,
//! `GRADIENT_COLOR`, ...) is skipped.

use spoor_format::Error;
use std::collections::HashMap;

/// An event type's label and the names of its values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventType {
    pub label: String,
    pub values: HashMap<i64, String>,
}

/// The names a `.pcf` gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pcf {
    pub states: HashMap<u64, String>,
    pub types: HashMap<u64, EventType>,
}

impl Pcf {
    /// The name of `value` of event `ty`, if the file gives one.
    pub fn value_name(&self, ty: u64, value: i64) -> Option<&str> {
        self.types.get(&ty)?.values.get(&value).map(String::as_str)
    }
}

enum Section {
    None,
    Skip,
    States,
    Types(Vec<u64>),
    Values(Vec<u64>),
}

fn is_keyword(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && s.bytes().all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit())
}

/// Splits `n rest` into the number and the trimmed rest.
fn split_number(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses a `.pcf` file's text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Pcf, Error> {
    let mut pcf = Pcf::default();
    let mut section = Section::None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let line = raw.trim();
        if line.is_empty() {
            section = Section::None;
            continue;
        }
        if is_keyword(line) {
            section = match line {
                "STATES" => Section::States,
                "EVENT_TYPE" => Section::Types(Vec::new()),
                "VALUES" => match std::mem::replace(&mut section, Section::None) {
                    Section::Types(t) if !t.is_empty() => Section::Values(t),
                    _ => return Err(Error::at_line(file, line_no, "VALUES outside an EVENT_TYPE block")),
                },
                _ => Section::Skip,
            };
            continue;
        }
        match &mut section {
            Section::None | Section::Skip => {}
            Section::States => {
                let (n, name) = split_number(line);
                let n: u64 = n.parse().map_err(|_| {
                    Error::at_line(file, line_no, format!("expected `state name` in STATES, found {line:?}"))
                })?;
                pcf.states.insert(n, name.to_string());
            }
            Section::Types(types) => {
                let mut it = line.split_whitespace();
                let color = it.next().and_then(|c| c.parse::<i64>().ok());
                let ty = it.next().and_then(|t| t.parse::<u64>().ok());
                let (Some(_), Some(ty)) = (color, ty) else {
                    return Err(Error::at_line(
                        file,
                        line_no,
                        format!("expected `color type label` in EVENT_TYPE, found {line:?}"),
                    ));
                };
                // The label is what follows the second number.
                let (_, after_color) = split_number(line);
                let (_, label) = split_number(after_color);
                pcf.types.insert(ty, EventType { label: label.to_string(), values: HashMap::new() });
                types.push(ty);
            }
            Section::Values(types) => {
                let (v, name) = split_number(line);
                let v = v.parse::<i64>().or_else(|_| v.parse::<u64>().map(|u| u as i64)).map_err(|_| {
                    Error::at_line(file, line_no, format!("expected `value name` in VALUES, found {line:?}"))
                })?;
                for ty in types.iter() {
                    if let Some(t) = pcf.types.get_mut(ty) {
                        t.values.insert(v, name.to_string());
                    }
                }
            }
        }
    }
    Ok(pcf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_values_states() {
        let text = "DEFAULT_OPTIONS\n\nLEVEL THREAD\nUNITS NANOSEC\n\nSTATES\n0    Idle\n1    Running\n\n\
                    STATES_COLOR\n0 {1,2,3}\n\nEVENT_TYPE\n9   50000001    MPI Point-to-point\nVALUES\n41   MPI_Sendrecv\n0   Outside MPI\n\n\
                    EVENT_TYPE\n0 70000001 Caller at level 1\n0 70000002 Caller at level 2\nVALUES\n3 foo [bar]\n\n\
                    EVENT_TYPE\n6    40000033    Executing CPU\n";
        let p = parse("x.pcf", text).unwrap();
        assert_eq!(p.states[&1], "Running");
        assert_eq!(p.types[&50000001].label, "MPI Point-to-point");
        assert_eq!(p.value_name(50000001, 41), Some("MPI_Sendrecv"));
        assert_eq!(p.value_name(70000002, 3), Some("foo [bar]"));
        assert_eq!(p.types[&40000033].label, "Executing CPU");
        assert!(p.types[&40000033].values.is_empty());
    }

    #[test]
    fn malformed() {
        for (text, line) in [
            ("EVENT_TYPE\nnine 5 x\n", 2),
            ("EVENT_TYPE\n9 50000001 x\nVALUES\nforty one\n", 4),
            ("VALUES\n1 x\n", 1),
            ("\n\nSTATES\nx Idle\n", 4),
        ] {
            let e = parse("x.pcf", text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
        }
    }
}
