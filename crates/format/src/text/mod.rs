//! The text form of a spoor trace (formats/text.md): one definition or event
//! per line, writable by hand, lossless both ways with the data model.
//!
//! Writing: [`write_header`], then [`write_definitions`], then one
//! [`write_event`] per event. Reading: [`TextParser`], which yields events and
//! gathers the definitions it meets on the way (definition lines may come
//! anywhere, before the events that need them).

mod args;
mod defs;
mod event;
mod lex;
mod num;
mod parse;
mod write;

pub use num::{describe_duration, parse_duration};
pub use parse::TextParser;
pub use write::{write_definitions, write_event, write_header, write_new_definitions, Written};

/// The major version of the text form this module writes and reads.
const MAJOR: u32 = 1;

/// The words that start a definition line.
const DEF_KEYWORDS: [&str; 8] =
    ["string", "app", "machine", "process", "location", "comm", "metric", "property"];

/// An event at a location that is not defined defines the missing locations
/// implicitly, but only up to this id; larger ones need a `location` line.
const MAX_IMPLICIT_LOC: u32 = 65_535;

/// The longest line read, in bytes (newline excluded): bounds memory on hostile input.
/// The importers' line readers share it.
pub const MAX_LINE: usize = 64 << 20;

/// The bits of the NaN written as `NaN`; any other NaN is written as raw bits.
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// True if `first_bytes` (the start of a file, possibly cut anywhere) is UTF-8
/// text whose first line that is neither blank nor a comment starts with
/// `spoor-text`, a definition keyword or a digit; also true for a start made
/// only of comment (and blank) lines, as long as there is at least one comment.
pub fn looks_like_text(first_bytes: &[u8]) -> bool {
    let text = match std::str::from_utf8(first_bytes) {
        Ok(t) => t,
        // Cut inside a multi-byte character at the very end: judge what is complete.
        Err(e) if e.error_len().is_none() => match std::str::from_utf8(&first_bytes[..e.valid_up_to()]) {
            Ok(t) => t,
            Err(_) => return false,
        },
        Err(_) => return false,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut saw_comment = false;
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        let is_last = lines.peek().is_none();
        let l = line.trim_start();
        if l.trim_end().is_empty() {
            continue;
        }
        if l.starts_with('#') {
            saw_comment = true;
            continue;
        }
        let word = l.split(char::is_whitespace).next().unwrap_or("");
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            return true;
        }
        if word == "spoor-text" || DEF_KEYWORDS.contains(&word) {
            return true;
        }
        // The start was cut inside the first word: a prefix of a keyword will do.
        let cut_in_word = is_last && word.len() == l.len();
        return cut_in_word
            && ("spoor-text".starts_with(word) || DEF_KEYWORDS.iter().any(|k| k.starts_with(word)));
    }
    saw_comment
}
