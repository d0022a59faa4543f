//! The parser: lines in, events out, definitions gathered on the way.

use super::defs::Origin;
use super::lex::{short, tokenize, Tok};
use super::num::{parse_u32, NumErr};
use super::{DEF_KEYWORDS, MAJOR, MAX_LINE};
use crate::{Error, ErrorKind};
use spoor_model::{Definitions, Event};
use std::io::{BufRead, Read};

/// Reads the text form: yields events, gathering definitions on the way.
pub struct TextParser<R: BufRead> {
    pub(super) file: String,
    input: R,
    pub(super) line: u64,
    buf: Vec<u8>,
    pub(super) defs: Definitions,
    /// A version, definition or event line has been read.
    started: bool,
    /// The end of the input was met (and the definitions checked).
    ended: bool,
    pub(super) apps: Vec<Origin>,
    pub(super) machines: Vec<Origin>,
    pub(super) processes: Vec<Origin>,
    pub(super) locations: Vec<Origin>,
    pub(super) comms: Vec<Origin>,
    pub(super) metrics: Vec<Origin>,
}

impl<R: BufRead> TextParser<R> {
    /// A parser of `input`; `file_name` is used in error messages.
    pub fn new(file_name: &str, input: R) -> Self {
        TextParser {
            file: file_name.to_owned(),
            input,
            line: 0,
            buf: Vec::new(),
            defs: Definitions::new(),
            started: false,
            ended: false,
            apps: Vec::new(),
            machines: Vec::new(),
            processes: Vec::new(),
            locations: Vec::new(),
            comms: Vec::new(),
            metrics: Vec::new(),
        }
    }

    /// The definitions read so far.
    pub fn defs(&self) -> &Definitions {
        &self.defs
    }

    /// The definitions read so far, implicit locations included.
    pub fn into_defs(self) -> Definitions {
        self.defs
    }

    /// The number of the line last read (1-based; 0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next event; definition lines met on the way update [`defs`](Self::defs).
    /// `Ok(None)` at the end of the input. After an error, the next call goes on
    /// with the next line; a line in error changes no definition.
    pub fn next_event(&mut self) -> Result<Option<Event>, Error> {
        loop {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            let r = self.read_line(&mut buf);
            let res = match r {
                Err(e) => Err(e),
                // The end of the input is checked once; later calls find it again.
                Ok(false) if !std::mem::replace(&mut self.ended, true) => {
                    self.check_definitions().map(|()| None)
                }
                Ok(false) => Ok(None),
                Ok(true) => self.parse_line(&buf),
            };
            // Keep the buffer for the next line, unless a huge line made it huge.
            if buf.capacity() <= 1 << 20 {
                self.buf = buf;
            }
            match res {
                Ok(Some(Line::Event(ev))) => return Ok(Some(ev)),
                Ok(Some(Line::Other)) => continue,
                Ok(None) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads one line into `buf` without its line ending; false at the end of input.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> Result<bool, Error> {
        let limit = MAX_LINE as u64 + 2;
        let n = match (&mut self.input).take(limit).read_until(b'\n', buf) {
            Ok(n) => n,
            Err(e) => {
                let mut err = Error::io(&self.file, &e);
                err.line = Some(self.line + 1);
                return Err(err);
            }
        };
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        let complete = buf.last() == Some(&b'\n');
        if complete {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() > MAX_LINE {
            // Skip the rest of the line so that a next call starts on the next one.
            let mut rest = Vec::new();
            let mut at_end = complete;
            while !at_end {
                rest.clear();
                at_end = match (&mut self.input).take(1 << 16).read_until(b'\n', &mut rest) {
                    Ok(0) | Err(_) => true,
                    Ok(_) => rest.last() == Some(&b'\n'),
                };
            }
            return Err(self.err(format!("line longer than {} bytes", MAX_LINE)));
        }
        Ok(true)
    }

    fn err(&self, msg: impl Into<String>) -> Error {
        Error::at_line(&self.file, self.line, msg)
    }

    fn parse_line(&mut self, bytes: &[u8]) -> Result<Option<Line>, Error> {
        let bytes = if self.line == 1 { bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes) } else { bytes };
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                return Err(self.err(format!("not valid UTF-8 (at byte {} of the line)", e.valid_up_to() + 1)))
            }
        };
        let toks = tokenize(text).map_err(|m| self.err(m))?;
        let Some(first) = toks.first() else { return Ok(Some(Line::Other)) };
        if first.key.is_some() || first.quoted {
            return Err(self.err(format!(
                "expected an event (LOC WALL CPU KIND ...), a definition ({}) or spoor-text, found {}",
                DEF_KEYWORDS.join(", "),
                first.show()
            )));
        }
        let word = first.value.clone();
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            let ev = self.parse_event(toks).map_err(|m| self.err(m))?;
            self.started = true;
            return Ok(Some(Line::Event(ev)));
        }
        if word == "spoor-text" {
            self.parse_version(&toks)?;
            self.started = true;
            return Ok(Some(Line::Other));
        }
        if DEF_KEYWORDS.contains(&word.as_str()) {
            self.parse_definition(toks).map_err(|m| self.err(m))?;
            self.started = true;
            return Ok(Some(Line::Other));
        }
        Err(self.err(format!(
            "unknown line start {}: expected an event (LOC WALL CPU KIND ...), a definition ({}) or spoor-text",
            first.show(),
            DEF_KEYWORDS.join(", ")
        )))
    }

    fn parse_version(&mut self, toks: &[Tok]) -> Result<(), Error> {
        if self.started {
            return Err(self.err("the spoor-text line must come before every definition and event"));
        }
        let bad = || self.err("expected spoor-text MAJOR or spoor-text MAJOR.MINOR, e.g. spoor-text 1");
        let [_, v] = toks else { return Err(bad()) };
        if v.key.is_some() || v.quoted {
            return Err(bad());
        }
        let major = match v.value.split_once('.') {
            Some((ma, mi)) => {
                parse_u32(mi).map_err(|_| bad())?;
                ma
            }
            None => &v.value,
        };
        let major = match parse_u32(major) {
            Ok(m) => m,
            Err(NumErr::Range(_)) => u32::MAX,
            Err(_) => return Err(bad()),
        };
        if major != MAJOR {
            let advice = if major > MAJOR {
                "a newer spoor is needed to read it"
            } else {
                "it was written by an older spoor; convert it with that version"
            };
            return Err(Error {
                kind: ErrorKind::Version,
                file: self.file.clone(),
                offset: None,
                line: Some(self.line),
                message: format!(
                    "text form version {} is not supported (this spoor reads version {MAJOR}); {advice}",
                    short(&v.value)
                ),
            });
        }
        Ok(())
    }
}

enum Line {
    Event(Event),
    Other,
}
