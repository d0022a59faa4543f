//! The text form of a spoor trace (formats/text.md): one definition or event
//! per line, writable by hand, lossless both ways with the data model.
//!
//! Writing: [`write_header`], then [`write_definitions`], then one
//! [`write_event`] per event. Reading: [`TextParser`], which yields events and
//! gathers the definitions it meets on the way (definition lines may come
//! anywhere, before the events that need them).

use crate::{Error, ErrorKind};
use spoor_model::{
    Annotations, CollOp, DefKind, Definitions, Event, EventRef, Kind, LocId, StrId, KIND_COUNT, KIND_NAMES,
};
use std::fmt::Write as _;
use std::io::{self, BufRead, Read, Write};

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

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// Writes the version line, `spoor-text 1`.
pub fn write_header(out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"spoor-text 1\n")
}

/// Writes every definition: all strings first, in id order, then applications,
/// machines, processes, locations, communicators, metrics and properties.
pub fn write_definitions(out: &mut impl Write, defs: &Definitions) -> io::Result<()> {
    write_new_definitions(out, defs, &mut Written::default())
}

/// How much of a growing [`Definitions`] has been written: the number of
/// definitions of each kind, for [`write_new_definitions`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Strings written.
    pub strings: usize,
    /// Applications written.
    pub apps: usize,
    /// Machines written.
    pub machines: usize,
    /// Processes written.
    pub processes: usize,
    /// Locations written.
    pub locations: usize,
    /// Communicators written.
    pub comms: usize,
    /// Metrics written.
    pub metrics: usize,
    /// Properties written.
    pub properties: usize,
}

/// Writes the definitions added since `written` records (every definition, the
/// first time, with `Written::default()`), in the order of [`write_definitions`],
/// and records them as written.
///
/// For copying a trace whose definitions grow as it is read (the text form's do):
/// call it before writing each batch of events with the definitions as they stand
/// after the batch was read; the text written reads back to identical definitions
/// and events. Definitions must only grow by appending, as [`TextParser`]'s do.
pub fn write_new_definitions(
    out: &mut impl Write,
    defs: &Definitions,
    written: &mut Written,
) -> io::Result<()> {
    let mut b = String::new();
    let line = |out: &mut dyn Write, b: &mut String| -> io::Result<()> {
        b.push('\n');
        out.write_all(b.as_bytes())?;
        b.clear();
        Ok(())
    };
    for (i, s) in defs.strings.iter().enumerate().skip(written.strings) {
        let _ = write!(b, "string {i} ");
        push_text(&mut b, s);
        line(out, &mut b)?;
        written.strings = i + 1;
    }
    for (i, a) in defs.apps.iter().enumerate().skip(written.apps) {
        let _ = write!(b, "app {i} ");
        push_name(&mut b, defs, a.name);
        line(out, &mut b)?;
        written.apps = i + 1;
    }
    for (i, m) in defs.machines.iter().enumerate().skip(written.machines) {
        let _ = write!(b, "machine {i} ");
        push_name(&mut b, defs, m.name);
        line(out, &mut b)?;
        written.machines = i + 1;
    }
    for (i, p) in defs.processes.iter().enumerate().skip(written.processes) {
        let _ = write!(b, "process {i} ");
        push_name(&mut b, defs, p.name);
        let _ = write!(b, " app={} machine={} rank={}", p.app, p.machine, p.rank);
        line(out, &mut b)?;
        written.processes = i + 1;
    }
    for (i, l) in defs.locations.iter().enumerate().skip(written.locations) {
        let _ = write!(b, "location {i} ");
        push_name(&mut b, defs, l.name);
        let _ = write!(b, " process={} thread={}", l.process, l.thread);
        line(out, &mut b)?;
        written.locations = i + 1;
    }
    for (i, c) in defs.comms.iter().enumerate().skip(written.comms) {
        let _ = write!(b, "comm {i} ");
        push_name(&mut b, defs, c.name);
        b.push_str(" members=");
        for (j, m) in c.members.iter().enumerate() {
            if j > 0 {
                b.push(',');
            }
            let _ = write!(b, "{m}");
        }
        line(out, &mut b)?;
        written.comms = i + 1;
    }
    for (i, m) in defs.metrics.iter().enumerate().skip(written.metrics) {
        let _ = write!(b, "metric {i} ");
        push_name(&mut b, defs, m.name);
        b.push_str(" unit=");
        push_name(&mut b, defs, m.unit);
        line(out, &mut b)?;
        written.metrics = i + 1;
    }
    for (i, (k, v)) in defs.properties.iter().enumerate().skip(written.properties) {
        b.push_str("property ");
        push_name(&mut b, defs, *k);
        b.push(' ');
        push_name(&mut b, defs, *v);
        line(out, &mut b)?;
        written.properties = i + 1;
    }
    Ok(())
}

/// Writes one event line. Names are looked up in `defs`; a string id the table
/// does not hold is written as `@ID`, so it reads back unchanged.
pub fn write_event(out: &mut impl Write, defs: &Definitions, ev: &Event) -> io::Result<()> {
    let mut b = String::with_capacity(64);
    format_event(&mut b, defs, ev);
    out.write_all(b.as_bytes())
}

fn format_event(b: &mut String, defs: &Definitions, ev: &Event) {
    let _ = write!(b, "{} {} ", ev.loc, ev.wall);
    match ev.cpu {
        Some(c) => {
            let _ = write!(b, "{c}");
        }
        None => b.push('-'),
    }
    b.push(' ');
    b.push_str(ev.kind.name());
    match &ev.kind {
        Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => {
            if let Some(p) = parent {
                let _ = write!(b, " parent={p}");
            }
        }
        Kind::ProcessEnd | Kind::ThreadEnd => {}
        Kind::Enter { proc: name }
        | Kind::Leave { proc: name }
        | Kind::PhaseBegin { name }
        | Kind::PhaseEnd { name } => {
            b.push(' ');
            push_name(b, defs, *name);
        }
        Kind::Send { to, comm, tag, bytes } => {
            let _ = write!(b, " to={to} tag={tag} bytes={bytes}");
            push_comm(b, *comm);
        }
        Kind::RecvBegin { from, comm, tag } => {
            if let Some(f) = from {
                let _ = write!(b, " from={f}");
            }
            if let Some(t) = tag {
                let _ = write!(b, " tag={t}");
            }
            push_comm(b, *comm);
        }
        Kind::RecvEnd { from, comm, tag, bytes } => {
            let _ = write!(b, " from={from} tag={tag} bytes={bytes}");
            push_comm(b, *comm);
        }
        Kind::Isend { to, comm, tag, bytes, request } => {
            let _ = write!(b, " to={to} tag={tag} bytes={bytes} req={request}");
            push_comm(b, *comm);
        }
        Kind::IsendComplete { request } => {
            let _ = write!(b, " req={request}");
        }
        Kind::IrecvRequest { from, comm, tag, request } => {
            if let Some(f) = from {
                let _ = write!(b, " from={f}");
            }
            if let Some(t) = tag {
                let _ = write!(b, " tag={t}");
            }
            let _ = write!(b, " req={request}");
            push_comm(b, *comm);
        }
        Kind::IrecvComplete { request, from, comm, tag, bytes } => {
            let _ = write!(b, " req={request} from={from} tag={tag} bytes={bytes}");
            push_comm(b, *comm);
        }
        Kind::CollBegin { op, comm } => {
            let _ = write!(b, " {}", op.name());
            push_comm(b, *comm);
        }
        Kind::CollEnd { op, comm, root, sent, received } => {
            let _ = write!(b, " {}", op.name());
            push_comm(b, *comm);
            if let Some(r) = root {
                let _ = write!(b, " root={r}");
            }
            if *sent != 0 {
                let _ = write!(b, " sent={sent}");
            }
            if *received != 0 {
                let _ = write!(b, " recv={received}");
            }
        }
        Kind::LockRequest { lock } | Kind::LockAcquire { lock } | Kind::LockRelease { lock } => {
            let _ = write!(b, " lock={lock}");
        }
        Kind::Metric { metric, value } => {
            let _ = write!(b, " metric={metric} value=");
            push_f64(b, *value);
        }
        Kind::ClockOffset { reference, offset, error } => {
            let _ = write!(b, " ref={reference} offset={offset} error={error}");
        }
    }
    if let Some(p) = ev.ann.partner {
        let _ = write!(b, " partner={}:{}", p.loc, p.index);
    }
    if let Some(l) = ev.ann.lamport {
        let _ = write!(b, " lamport={l}");
    }
    if let Some(r) = ev.ann.raw_wall {
        let _ = write!(b, " raw_wall={r}");
    }
    b.push('\n');
}

fn push_comm(b: &mut String, comm: u32) {
    if comm != 0 {
        let _ = write!(b, " comm={comm}");
    }
}

/// `{:?}` round-trips every f64 except NaNs other than the canonical one,
/// which are written as their raw bits, `0x` and 16 hex digits.
fn push_f64(b: &mut String, v: f64) {
    if v.is_nan() {
        if v.to_bits() == CANONICAL_NAN {
            b.push_str("NaN");
        } else {
            let _ = write!(b, "0x{:016x}", v.to_bits());
        }
    } else {
        let _ = write!(b, "{v:?}");
    }
}

/// A string id as its text, or `@ID` when the table does not hold it.
fn push_name(b: &mut String, defs: &Definitions, id: StrId) {
    match defs.strings.get(id) {
        Some(s) => push_text(b, s),
        None => {
            let _ = write!(b, "@{id}");
        }
    }
}

fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.starts_with('@')
        || s.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '=' | '#' | '\\'))
}

/// `s` as a bare word if it can be one, else as a quoted string.
fn push_text(b: &mut String, s: &str) {
    if !needs_quotes(s) {
        b.push_str(s);
        return;
    }
    b.push('"');
    for c in s.chars() {
        match c {
            '"' => b.push_str("\\\""),
            '\\' => b.push_str("\\\\"),
            '\n' => b.push_str("\\n"),
            '\t' => b.push_str("\\t"),
            '\r' => b.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(b, "\\u{{{:x}}}", c as u32);
            }
            c => b.push(c),
        }
    }
    b.push('"');
}

// ---------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Reading: lexing
// ---------------------------------------------------------------------------

/// One whitespace-separated item of a line: `value`, `"value"`, `key=value` or `key="value"`.
#[derive(Debug)]
struct Tok {
    key: Option<String>,
    value: String,
    quoted: bool,
}

impl Tok {
    /// How the token looked, for messages.
    fn show(&self) -> String {
        let mut s = String::new();
        if let Some(k) = &self.key {
            s.push_str(k);
            s.push('=');
        }
        if self.quoted {
            push_quoted_always(&mut s, &self.value);
        } else {
            s.push_str(&self.value);
        }
        short(&s)
    }
}

/// `s`, cut to 60 characters: messages stay short whatever the input.
fn short(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_owned(),
    }
}

fn push_quoted_always(b: &mut String, s: &str) {
    if needs_quotes(s) {
        push_text(b, s);
    } else {
        b.push('"');
        b.push_str(s);
        b.push('"');
    }
}

fn quote(s: &str) -> String {
    let mut b = String::new();
    push_quoted_always(&mut b, s);
    b
}

fn is_bare_char(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '"' | '=' | '#'))
}

/// Splits a line into tokens; a `#` at the start of a token starts a comment.
fn tokenize(line: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut it = line.chars().peekable();
    loop {
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        let Some(&c) = it.peek() else { break };
        if c == '#' {
            break;
        }
        let tok = if c == '"' {
            it.next();
            Tok { key: None, value: lex_quoted(&mut it)?, quoted: true }
        } else if c == '=' {
            return Err("'=' without a key before it".into());
        } else {
            let word = lex_bare(&mut it);
            if it.peek() == Some(&'=') {
                it.next();
                if it.peek() == Some(&'"') {
                    it.next();
                    Tok { key: Some(word), value: lex_quoted(&mut it)?, quoted: true }
                } else {
                    let value = lex_bare(&mut it);
                    Tok { key: Some(word), value, quoted: false }
                }
            } else {
                Tok { key: None, value: word, quoted: false }
            }
        };
        match it.peek() {
            None => {}
            Some(c) if c.is_whitespace() => {}
            Some(&c) => {
                let what = match c {
                    '#' => "a comment needs whitespace before its '#'".to_string(),
                    _ => format!("unexpected {c:?}"),
                };
                return Err(format!(
                    "{what} after {} (quote text containing whitespace, '\"', '=' or '#')",
                    tok.show()
                ));
            }
        }
        toks.push(tok);
    }
    Ok(toks)
}

fn lex_bare(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut s = String::new();
    while let Some(&c) = it.peek() {
        if !is_bare_char(c) {
            break;
        }
        s.push(c);
        it.next();
    }
    s
}

/// The rest of a quoted string whose opening quote was consumed.
fn lex_quoted(it: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<String, String> {
    let mut s = String::new();
    loop {
        match it.next() {
            None => return Err("unterminated quoted string (expected a closing '\"')".into()),
            Some('"') => return Ok(s),
            Some('\\') => match it.next() {
                Some('"') => s.push('"'),
                Some('\\') => s.push('\\'),
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some('r') => s.push('\r'),
                Some('u') => {
                    if it.next() != Some('{') {
                        return Err("bad escape: expected \\u{XXXX}".into());
                    }
                    let mut code: u32 = 0;
                    let mut digits = 0;
                    loop {
                        match it.next() {
                            Some('}') if digits > 0 => break,
                            Some(h) if h.is_ascii_hexdigit() && digits < 6 => {
                                code = code * 16 + h.to_digit(16).unwrap_or(0);
                                digits += 1;
                            }
                            _ => return Err("bad escape: expected \\u{XXXX} with 1 to 6 hex digits".into()),
                        }
                    }
                    match char::from_u32(code) {
                        Some(ch) => s.push(ch),
                        None => {
                            return Err(format!("bad escape: \\u{{{code:x}}} is not a Unicode scalar value"))
                        }
                    }
                }
                Some(other) => {
                    return Err(format!(
                        "unknown escape \\{other} (expected \\\", \\\\, \\n, \\t, \\r or \\u{{XXXX}})"
                    ))
                }
                None => return Err("unterminated quoted string (expected a closing '\"')".into()),
            },
            Some(c) => s.push(c),
        }
    }
}

// ---------------------------------------------------------------------------
// Reading: numbers
// ---------------------------------------------------------------------------

enum NumErr {
    /// Not the expected syntax.
    Syntax,
    /// Too large or too small for its field.
    Range(String),
    /// A time that is not a whole number of nanoseconds.
    Fraction,
}

fn parse_uint(s: &str, max: u64) -> Result<u64, NumErr> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NumErr::Syntax);
    }
    let mut v: u64 = 0;
    for b in s.bytes() {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .filter(|&v| v <= max)
            .ok_or_else(|| NumErr::Range(format!("at most {max}")))?;
    }
    Ok(v)
}

fn parse_u32(s: &str) -> Result<u32, NumErr> {
    parse_uint(s, u64::from(u32::MAX)).map(|v| v as u32)
}

fn parse_u64(s: &str) -> Result<u64, NumErr> {
    parse_uint(s, u64::MAX)
}

/// A time as the text form writes it (`1500`, `1.5us`, `10ms`, `2s`) in nanoseconds,
/// for command-line options that take times; `None` when it is not one.
pub fn parse_duration(s: &str) -> Option<i64> {
    parse_time(s.trim()).ok().and_then(|v| i64::try_from(v).ok())
}

/// A time in nanoseconds: `-`? DIGITS, or `-`? DIGITS (`.` DIGITS)? UNIT with
/// UNIT one of ns, us, ms, s; the value must be a whole number of nanoseconds.
fn parse_time(s: &str) -> Result<i128, NumErr> {
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (num, scale) = if let Some(n) = rest.strip_suffix("ns") {
        (n, Some(0u32))
    } else if let Some(n) = rest.strip_suffix("us") {
        (n, Some(3))
    } else if let Some(n) = rest.strip_suffix("ms") {
        (n, Some(6))
    } else if let Some(n) = rest.strip_suffix('s') {
        (n, Some(9))
    } else {
        (rest, None)
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) || (frac.is_some() && scale.is_none()) {
        return Err(NumErr::Syntax);
    }
    let scale = scale.unwrap_or(0);
    let frac = frac.unwrap_or("").trim_end_matches('0');
    if frac.len() > scale as usize {
        return Err(NumErr::Fraction);
    }
    let range = || NumErr::Range("beyond 64 bits".into());
    let mut v: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        v = v.checked_mul(10).and_then(|v| v.checked_add(i128::from(b - b'0'))).ok_or_else(range)?;
        if v > i128::from(u64::MAX) * 1_000_000_000 {
            return Err(range());
        }
    }
    let shift = scale as usize - frac.len();
    for _ in 0..shift {
        v = v.checked_mul(10).ok_or_else(range)?;
    }
    Ok(if neg { -v } else { v })
}

fn parse_i64_time(s: &str) -> Result<i64, NumErr> {
    let v = parse_time(s)?;
    i64::try_from(v).map_err(|_| NumErr::Range(format!("between {} and {}", i64::MIN, i64::MAX)))
}

fn parse_u64_time(s: &str) -> Result<u64, NumErr> {
    let v = parse_time(s)?;
    u64::try_from(v).map_err(|_| NumErr::Range(format!("between 0 and {}", u64::MAX)))
}

fn parse_f64(s: &str) -> Result<f64, NumErr> {
    if let Some(h) = s.strip_prefix("0x") {
        if h.is_empty() || h.len() > 16 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(NumErr::Syntax);
        }
        return u64::from_str_radix(h, 16).map(f64::from_bits).map_err(|_| NumErr::Syntax);
    }
    if s.eq_ignore_ascii_case("nan") {
        return Ok(f64::from_bits(CANONICAL_NAN));
    }
    s.parse::<f64>().map_err(|_| NumErr::Syntax)
}

fn parse_loc_or_any(s: &str) -> Result<Option<u32>, NumErr> {
    if s == "any" {
        Ok(None)
    } else {
        parse_u32(s).map(Some)
    }
}

fn parse_partner(s: &str) -> Result<EventRef, NumErr> {
    let (l, i) = s.split_once(':').ok_or(NumErr::Syntax)?;
    Ok(EventRef { loc: parse_u32(l)?, index: parse_u64(i)? })
}

fn parse_members(s: &str) -> Result<Vec<LocId>, NumErr> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    s.split(',').map(parse_u32).collect()
}

/// A time given as a value where one is expected, for messages.
const TIME_HINT: &str = "integer nanoseconds, or a number with unit ns, us, ms or s";

// ---------------------------------------------------------------------------
// Reading: arguments
// ---------------------------------------------------------------------------

/// A name: text to intern, or `@ID` naming a string id directly.
enum NameRef {
    Text(String),
    Id(StrId),
}

fn name_ref(what: &str, role: &str, tok: &Tok) -> Result<NameRef, String> {
    if tok.quoted {
        return Ok(NameRef::Text(tok.value.clone()));
    }
    if let Some(d) = tok.value.strip_prefix('@') {
        return match parse_u32(d) {
            Ok(id) => Ok(NameRef::Id(id)),
            Err(_) => Err(format!(
                "{what}: expected {role} (a name or @ID), found {} (quote names that start with '@')",
                tok.show()
            )),
        };
    }
    if tok.value.is_empty() {
        return Err(format!("{what}: expected {role}, found an empty value (write \"\" for an empty name)"));
    }
    Ok(NameRef::Text(tok.value.clone()))
}

/// The `key=value` arguments of one line, each to be taken once.
struct Args<'a> {
    what: &'a str,
    items: Vec<(String, String, bool)>,
    used: Vec<bool>,
    /// The keys asked for so far, to list them when an unknown key is found.
    asked: Vec<&'static str>,
}

impl<'a> Args<'a> {
    /// Splits `toks` into leading positional tokens and `key=value` items.
    fn new(what: &'a str, toks: Vec<Tok>) -> Result<(Vec<Tok>, Args<'a>), String> {
        let mut pos = Vec::new();
        let mut items: Vec<(String, String, bool)> = Vec::new();
        for t in toks {
            match t.key {
                None => {
                    if !items.is_empty() {
                        return Err(format!(
                            "{what}: unexpected {} after key=value arguments",
                            Tok { key: None, ..t }.show()
                        ));
                    }
                    pos.push(t);
                }
                Some(k) => {
                    if items.iter().any(|(ik, _, _)| *ik == k) {
                        return Err(format!("{what}: duplicate key {k}="));
                    }
                    items.push((k, t.value, t.quoted));
                }
            }
        }
        let used = vec![false; items.len()];
        Ok((pos, Args { what, items, used, asked: Vec::new() }))
    }

    fn take(&mut self, key: &'static str) -> Option<(String, bool)> {
        self.asked.push(key);
        let i = self.items.iter().position(|(k, _, _)| k == key)?;
        self.used[i] = true;
        Some((std::mem::take(&mut self.items[i].1), self.items[i].2))
    }

    fn opt<T>(
        &mut self,
        key: &'static str,
        hint: &str,
        parse: impl Fn(&str) -> Result<T, NumErr>,
    ) -> Result<Option<T>, String> {
        let Some((v, quoted)) = self.take(key) else { return Ok(None) };
        let what = self.what;
        if quoted {
            return Err(format!("{what}: expected {key}={hint}, found {key}={}", short(&quote(&v))));
        }
        match parse(&v) {
            Ok(x) => Ok(Some(x)),
            Err(e) => {
                let v = short(&v);
                Err(match e {
                    NumErr::Syntax => format!("{what}: expected {key}={hint}, found {key}={v}"),
                    NumErr::Range(r) => format!("{what}: {key}={v} is out of range ({r})"),
                    NumErr::Fraction => format!("{what}: {key}={v} is not a whole number of nanoseconds"),
                })
            }
        }
    }

    fn req<T>(
        &mut self,
        key: &'static str,
        hint: &str,
        parse: impl Fn(&str) -> Result<T, NumErr>,
    ) -> Result<T, String> {
        match self.opt(key, hint, parse)? {
            Some(x) => Ok(x),
            None => Err(format!("{}: expected {key}={hint}", self.what)),
        }
    }

    fn name(&mut self, key: &'static str, role: &str) -> Result<NameRef, String> {
        let what = self.what;
        match self.take(key) {
            Some((value, quoted)) => {
                name_ref(what, &format!("{key}={role}"), &Tok { key: Some(key.into()), value, quoted })
            }
            None => Err(format!("{what}: expected {key}={role}")),
        }
    }

    /// Errors on any key no one asked for.
    fn finish(self) -> Result<(), String> {
        if let Some(i) = self.used.iter().position(|u| !u) {
            let mut expected = String::new();
            for (j, k) in self.asked.iter().enumerate() {
                expected.push_str(if j == 0 { "" } else { ", " });
                expected.push_str(k);
                expected.push('=');
            }
            let expected = if expected.is_empty() { "none".to_string() } else { expected };
            return Err(format!("{}: unknown key {}= (expected {expected})", self.what, self.items[i].0));
        }
        Ok(())
    }
}

/// Errors unless there are exactly `n` positional arguments.
fn positional(what: &str, pos: &[Tok], n: usize, expected: &str) -> Result<(), String> {
    if pos.len() < n {
        return Err(format!("{what}: expected {expected}"));
    }
    if let Some(t) = pos.get(n) {
        return Err(format!("{what}: unexpected argument {}", t.show()));
    }
    Ok(())
}

fn coll_op(what: &str, pos: &[Tok]) -> Result<CollOp, String> {
    let names = || CollOp::ALL.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ");
    match pos.first() {
        Some(t) if !t.quoted => CollOp::from_name(&t.value).ok_or_else(|| {
            format!("{what}: unknown collective operation {} (expected {})", t.show(), names())
        }),
        Some(t) => Err(format!("{what}: unknown collective operation {} (expected {})", t.show(), names())),
        None => Err(format!("{what}: expected a collective operation ({})", names())),
    }
}

// ---------------------------------------------------------------------------
// Reading: the parser
// ---------------------------------------------------------------------------

/// Where a definition came from, for "already defined" messages.
#[derive(Clone, Copy)]
struct Origin {
    line: u64,
    implicit: bool,
}

/// Reads the text form: yields events, gathering definitions on the way.
pub struct TextParser<R: BufRead> {
    file: String,
    input: R,
    line: u64,
    buf: Vec<u8>,
    defs: Definitions,
    /// A version, definition or event line has been read.
    started: bool,
    /// The end of the input was met (and the definitions checked).
    ended: bool,
    apps: Vec<Origin>,
    machines: Vec<Origin>,
    processes: Vec<Origin>,
    locations: Vec<Origin>,
    comms: Vec<Origin>,
    metrics: Vec<Origin>,
}

/// The definition kinds with numbered ids, to pick their origin lists.
#[derive(Clone, Copy)]
enum Def {
    App,
    Machine,
    Process,
    Location,
    Comm,
    Metric,
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

    /// At the end of the input every id a definition refers to must be defined, as the
    /// binary reader requires of a definitions chunk (`Definitions::check`); the error
    /// names the line of the definition at fault.
    fn check_definitions(&mut self) -> Result<(), Error> {
        let Err(e) = self.defs.check() else { return Ok(()) };
        let def = match e.kind {
            DefKind::App => Some(Def::App),
            DefKind::Machine => Some(Def::Machine),
            DefKind::Process => Some(Def::Process),
            DefKind::Location => Some(Def::Location),
            DefKind::Comm => Some(Def::Comm),
            DefKind::Metric => Some(Def::Metric),
            DefKind::Property => None,
        };
        let line = def.and_then(|d| self.origins(d).get(e.index).map(|o| o.line)).unwrap_or(self.line);
        Err(Error::at_line(&self.file, line, format!("{e} (by the end of the input)")))
    }

    fn origins(&mut self, d: Def) -> &mut Vec<Origin> {
        match d {
            Def::App => &mut self.apps,
            Def::Machine => &mut self.machines,
            Def::Process => &mut self.processes,
            Def::Location => &mut self.locations,
            Def::Comm => &mut self.comms,
            Def::Metric => &mut self.metrics,
        }
    }

    /// Checks that `id` is the next id of its kind.
    fn check_id(&mut self, d: Def, what: &str, id: u32) -> Result<(), String> {
        let origins = self.origins(d);
        let next = origins.len();
        match origins.get(id as usize) {
            _ if id as usize == next => Ok(()),
            Some(o) if o.implicit => {
                Err(format!("{what} {id} is already defined (implicitly at line {})", o.line))
            }
            Some(o) => Err(format!("{what} {id} is already defined at line {}", o.line)),
            None => Err(format!("{what} {id}: expected id {next} (ids are given in order 0, 1, 2, ...)")),
        }
    }

    fn note(&mut self, d: Def, implicit: bool) {
        let line = self.line;
        self.origins(d).push(Origin { line, implicit });
    }

    fn resolve(&mut self, n: NameRef) -> StrId {
        match n {
            NameRef::Id(id) => id,
            NameRef::Text(t) => self.defs.strings.intern(&t),
        }
    }

    fn parse_definition(&mut self, mut toks: Vec<Tok>) -> Result<(), String> {
        let head = toks.remove(0);
        let what: &'static str =
            DEF_KEYWORDS.iter().copied().find(|k| *k == head.value).unwrap_or("definition");
        let (pos, mut args) = Args::new(what, toks)?;
        if what == "property" {
            positional(what, &pos, 2, "KEY VALUE")?;
            args.finish()?;
            let k = name_ref(what, "KEY", &pos[0])?;
            let v = name_ref(what, "VALUE", &pos[1])?;
            let (k, v) = (self.resolve(k), self.resolve(v));
            self.defs.properties.push((k, v));
            return Ok(());
        }
        let expected = if what == "string" { "ID TEXT" } else { "ID NAME" };
        positional(what, &pos, 2, expected)?;
        let id = match (&pos[0].key, pos[0].quoted) {
            (None, false) => parse_u32(&pos[0].value).ok(),
            _ => None,
        };
        let Some(id) = id else {
            return Err(format!("{what}: expected {expected}, found {} as ID", pos[0].show()));
        };
        if what == "string" {
            args.finish()?;
            let t = &pos[1];
            if !t.quoted && t.value.starts_with('@') {
                return Err(format!("string: TEXT starting with '@' must be quoted, found {}", t.show()));
            }
            let next = self.defs.strings.len();
            if id as usize != next {
                return Err(if (id as usize) < next {
                    format!("string {id} is already defined (strings are given in order 0, 1, 2, ...)")
                } else {
                    format!("string {id}: expected id {next} (strings are given in order 0, 1, 2, ...)")
                });
            }
            if let Some(j) = self.defs.strings.lookup(&t.value) {
                return Err(format!("string {id}: {} is already string {j} (strings are unique)", t.show()));
            }
            self.defs.strings.intern(&t.value);
            return Ok(());
        }
        let name = name_ref(what, "NAME", &pos[1])?;
        match what {
            "app" => {
                args.finish()?;
                self.check_id(Def::App, what, id)?;
                let name = self.resolve(name);
                self.defs.apps.push(spoor_model::Application { name });
                self.note(Def::App, false);
            }
            "machine" => {
                args.finish()?;
                self.check_id(Def::Machine, what, id)?;
                let name = self.resolve(name);
                self.defs.machines.push(spoor_model::Machine { name });
                self.note(Def::Machine, false);
            }
            "process" => {
                let app = args.req("app", "ID", parse_u32)?;
                let machine = args.req("machine", "ID", parse_u32)?;
                let rank = args.req("rank", "N", parse_u32)?;
                args.finish()?;
                self.check_id(Def::Process, what, id)?;
                let name = self.resolve(name);
                self.defs.processes.push(spoor_model::Process { name, app, machine, rank });
                self.note(Def::Process, false);
            }
            "location" => {
                let process = args.req("process", "ID", parse_u32)?;
                let thread = args.req("thread", "N", parse_u32)?;
                args.finish()?;
                self.check_id(Def::Location, what, id)?;
                let name = self.resolve(name);
                self.defs.locations.push(spoor_model::Location { name, process, thread });
                self.note(Def::Location, false);
            }
            "comm" => {
                let members = args.req("members", "LOC,LOC,... (may be empty)", parse_members)?;
                args.finish()?;
                self.check_id(Def::Comm, what, id)?;
                let name = self.resolve(name);
                self.defs.comms.push(spoor_model::Communicator { name, members });
                self.note(Def::Comm, false);
            }
            "metric" => {
                let unit = args.name("unit", "NAME")?;
                args.finish()?;
                self.check_id(Def::Metric, what, id)?;
                let name = self.resolve(name);
                let unit = self.resolve(unit);
                self.defs.metrics.push(spoor_model::Metric { name, unit });
                self.note(Def::Metric, false);
            }
            _ => return Err(format!("unknown definition {what}")),
        }
        Ok(())
    }

    /// Defines locations up to `loc` implicitly (see formats/text.md).
    fn define_implicitly(&mut self, loc: LocId) {
        while self.defs.locations.len() <= loc as usize {
            if self.defs.apps.is_empty() {
                self.defs.add_app("app");
                self.note(Def::App, true);
            }
            if self.defs.machines.is_empty() {
                self.defs.add_machine("localhost");
                self.note(Def::Machine, true);
            }
            let n = self.defs.locations.len();
            let name = format!("p{n}");
            let p = self.defs.add_process(&name, 0, 0, n as u32);
            self.note(Def::Process, true);
            self.defs.add_location(&name, p, 0);
            self.note(Def::Location, true);
        }
    }

    fn parse_event(&mut self, toks: Vec<Tok>) -> Result<Event, String> {
        let mut it = toks.into_iter();
        let mut next_plain = |what: &str| -> Result<Tok, String> {
            match it.next() {
                Some(t) if t.key.is_none() && !t.quoted => Ok(t),
                Some(t) => {
                    Err(format!("an event is LOC WALL CPU KIND ARGS...: expected {what}, found {}", t.show()))
                }
                None => Err(format!("an event is LOC WALL CPU KIND ARGS...: expected {what}")),
            }
        };
        let t = next_plain("LOC")?;
        let loc = match parse_u32(&t.value) {
            Ok(l) => l,
            Err(NumErr::Range(r)) => {
                return Err(format!("location {} is out of range ({r})", short(&t.value)))
            }
            Err(_) => return Err(format!("expected LOC, a location id, found {}", t.show())),
        };
        if loc as usize >= self.defs.locations.len() && loc > MAX_IMPLICIT_LOC {
            return Err(format!(
                "location {loc} is not defined (only locations up to {MAX_IMPLICIT_LOC} are defined \
                 implicitly; add location lines)"
            ));
        }
        let t = next_plain("WALL")?;
        let wall = parse_i64_time(&t.value).map_err(|e| time_msg("WALL", &t.value, e))?;
        let t = next_plain("CPU (a time, or - when unknown)")?;
        let cpu = if t.value == "-" {
            None
        } else {
            Some(parse_i64_time(&t.value).map_err(|e| time_msg("CPU", &t.value, e))?)
        };
        let t = next_plain("KIND")?;
        let Some(code) = KIND_NAMES.iter().position(|k| *k == t.value) else {
            return Err(format!(
                "unknown event kind {} (expected one of {})",
                t.show(),
                KIND_NAMES.join(", ")
            ));
        };
        debug_assert!(code < KIND_COUNT as usize);
        let what: &'static str = KIND_NAMES[code];
        let rest: Vec<Tok> = it.collect();
        let (pos, mut a) = Args::new(what, rest)?;

        let mut name: Option<NameRef> = None;
        let comm = |a: &mut Args| a.opt("comm", "ID", parse_u32).map(|c| c.unwrap_or(0));
        let kind = match what {
            "process_begin" | "thread_begin" => {
                positional(what, &pos, 0, "")?;
                let parent = a.opt("parent", "LOC", parse_u32)?;
                if what == "process_begin" {
                    Kind::ProcessBegin { parent }
                } else {
                    Kind::ThreadBegin { parent }
                }
            }
            "process_end" => {
                positional(what, &pos, 0, "")?;
                Kind::ProcessEnd
            }
            "thread_end" => {
                positional(what, &pos, 0, "")?;
                Kind::ThreadEnd
            }
            "enter" | "leave" | "phase_begin" | "phase_end" => {
                let role = if what.starts_with("phase") { "a phase NAME" } else { "a procedure NAME" };
                positional(what, &pos, 1, role)?;
                name = Some(name_ref(what, role, &pos[0])?);
                match what {
                    "enter" => Kind::Enter { proc: 0 },
                    "leave" => Kind::Leave { proc: 0 },
                    "phase_begin" => Kind::PhaseBegin { name: 0 },
                    _ => Kind::PhaseEnd { name: 0 },
                }
            }
            "send" => {
                positional(what, &pos, 0, "")?;
                let to = a.req("to", "LOC", parse_u32)?;
                let tag = a.req("tag", "N", parse_u32)?;
                let bytes = a.req("bytes", "N", parse_u64)?;
                let comm = comm(&mut a)?;
                Kind::Send { to, comm, tag, bytes }
            }
            "recv_begin" => {
                positional(what, &pos, 0, "")?;
                let from = a.opt("from", "LOC|any", parse_loc_or_any)?.flatten();
                let tag = a.opt("tag", "N|any", parse_loc_or_any)?.flatten();
                let comm = comm(&mut a)?;
                Kind::RecvBegin { from, comm, tag }
            }
            "recv_end" => {
                positional(what, &pos, 0, "")?;
                let from = a.req("from", "LOC", parse_u32)?;
                let tag = a.req("tag", "N", parse_u32)?;
                let bytes = a.req("bytes", "N", parse_u64)?;
                let comm = comm(&mut a)?;
                Kind::RecvEnd { from, comm, tag, bytes }
            }
            "isend" => {
                positional(what, &pos, 0, "")?;
                let to = a.req("to", "LOC", parse_u32)?;
                let tag = a.req("tag", "N", parse_u32)?;
                let bytes = a.req("bytes", "N", parse_u64)?;
                let request = a.req("req", "N", parse_u64)?;
                let comm = comm(&mut a)?;
                Kind::Isend { to, comm, tag, bytes, request }
            }
            "isend_complete" => {
                positional(what, &pos, 0, "")?;
                Kind::IsendComplete { request: a.req("req", "N", parse_u64)? }
            }
            "irecv_request" => {
                positional(what, &pos, 0, "")?;
                let from = a.opt("from", "LOC|any", parse_loc_or_any)?.flatten();
                let tag = a.opt("tag", "N|any", parse_loc_or_any)?.flatten();
                let request = a.req("req", "N", parse_u64)?;
                let comm = comm(&mut a)?;
                Kind::IrecvRequest { from, comm, tag, request }
            }
            "irecv_complete" => {
                positional(what, &pos, 0, "")?;
                let request = a.req("req", "N", parse_u64)?;
                let from = a.req("from", "LOC", parse_u32)?;
                let tag = a.req("tag", "N", parse_u32)?;
                let bytes = a.req("bytes", "N", parse_u64)?;
                let comm = comm(&mut a)?;
                Kind::IrecvComplete { request, from, comm, tag, bytes }
            }
            "coll_begin" => {
                let op = coll_op(what, &pos)?;
                positional(what, &pos, 1, "a collective operation")?;
                let comm = comm(&mut a)?;
                Kind::CollBegin { op, comm }
            }
            "coll_end" => {
                let op = coll_op(what, &pos)?;
                positional(what, &pos, 1, "a collective operation")?;
                let comm = comm(&mut a)?;
                let root = a.opt("root", "LOC", parse_u32)?;
                let sent = a.opt("sent", "N", parse_u64)?.unwrap_or(0);
                let received = a.opt("recv", "N", parse_u64)?.unwrap_or(0);
                Kind::CollEnd { op, comm, root, sent, received }
            }
            "lock_request" | "lock_acquire" | "lock_release" => {
                positional(what, &pos, 0, "")?;
                let lock = a.req("lock", "N", parse_u64)?;
                match what {
                    "lock_request" => Kind::LockRequest { lock },
                    "lock_acquire" => Kind::LockAcquire { lock },
                    _ => Kind::LockRelease { lock },
                }
            }
            "metric" => {
                positional(what, &pos, 0, "")?;
                let metric = a.req("metric", "ID", parse_u32)?;
                let value =
                    a.req("value", "F (a number, NaN, inf, -inf or 0x and 16 hex digits)", parse_f64)?;
                Kind::Metric { metric, value }
            }
            "clock_offset" => {
                positional(what, &pos, 0, "")?;
                let reference = a.req("ref", "LOC", parse_u32)?;
                let offset = a.req("offset", "N (a time in ns)", parse_i64_time)?;
                let error = a.req("error", "N (a time in ns, not negative)", parse_u64_time)?;
                Kind::ClockOffset { reference, offset, error }
            }
            _ => return Err(format!("unknown event kind {what}")),
        };
        let ann = Annotations {
            partner: a.opt("partner", "LOC:INDEX", parse_partner)?,
            lamport: a.opt("lamport", "N", parse_u64)?,
            raw_wall: a.opt("raw_wall", "N (a time in ns)", parse_i64_time)?,
        };
        a.finish()?;

        // Valid: now change the definitions.
        self.define_implicitly(loc);
        let mut kind = kind;
        if let Some(n) = name {
            let id = self.resolve(n);
            match &mut kind {
                Kind::Enter { proc: p } | Kind::Leave { proc: p } => *p = id,
                Kind::PhaseBegin { name: p } | Kind::PhaseEnd { name: p } => *p = id,
                _ => {}
            }
        }
        Ok(Event { loc, wall, cpu, kind, ann })
    }
}

enum Line {
    Event(Event),
    Other,
}

fn time_msg(field: &str, v: &str, e: NumErr) -> String {
    let v = short(v);
    match e {
        NumErr::Syntax => format!("expected {field}, a time ({TIME_HINT}), found {v}"),
        NumErr::Range(r) => format!("{field} {v} is out of range ({r} nanoseconds)"),
        NumErr::Fraction => format!("{field} {v} is not a whole number of nanoseconds"),
    }
}
