//! Writing the text form: definitions, then one line an event.

use super::CANONICAL_NAN;
use spoor_model::{Definitions, Event, Kind, StrId};
use std::fmt::Write as _;
use std::io::{self, Write};

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
/// and events. Definitions must only grow by appending, as [`TextParser`](super::TextParser)'s do.
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
    push_kind_args(b, defs, &ev.kind);
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

/// The arguments after the kind's name; messages in [`push_message_args`].
fn push_kind_args(b: &mut String, defs: &Definitions, kind: &Kind) {
    match kind {
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
        Kind::Send { .. }
        | Kind::RecvBegin { .. }
        | Kind::RecvEnd { .. }
        | Kind::Isend { .. }
        | Kind::IsendComplete { .. }
        | Kind::IrecvRequest { .. }
        | Kind::IrecvComplete { .. } => push_message_args(b, kind),
    }
}

/// The arguments of point-to-point kinds (blocking and not); nothing for the others.
fn push_message_args(b: &mut String, kind: &Kind) {
    match kind {
        Kind::Send { to, comm, tag, bytes } => {
            let _ = write!(b, " to={to} tag={tag} bytes={bytes}");
            push_comm(b, *comm);
        }
        Kind::RecvBegin { from, comm, tag } => {
            push_any_source(b, *from, *tag);
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
            push_any_source(b, *from, *tag);
            let _ = write!(b, " req={request}");
            push_comm(b, *comm);
        }
        Kind::IrecvComplete { request, from, comm, tag, bytes } => {
            let _ = write!(b, " req={request} from={from} tag={tag} bytes={bytes}");
            push_comm(b, *comm);
        }
        _ => {} // the other kinds are written by push_kind_args
    }
}

/// A posted receive's source and tag, each left out when it is a wildcard.
fn push_any_source(b: &mut String, from: Option<u32>, tag: Option<u32>) {
    if let Some(f) = from {
        let _ = write!(b, " from={f}");
    }
    if let Some(t) = tag {
        let _ = write!(b, " tag={t}");
    }
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

pub(super) fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.starts_with('@')
        || s.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '=' | '#' | '\\'))
}

/// `s` as a bare word if it can be one, else as a quoted string.
pub(super) fn push_text(b: &mut String, s: &str) {
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
