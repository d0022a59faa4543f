//! Event lines: LOC WALL CPU KIND ARGS...

use super::args::{coll_op, name_ref, positional, Args, NameRef};
use super::lex::{short, Tok};
use super::num::{
    parse_f64, parse_i64_time, parse_loc_or_any, parse_partner, parse_u32, parse_u64, parse_u64_time, NumErr,
    TIME_HINT,
};
use super::{TextParser, MAX_IMPLICIT_LOC};
use spoor_model::{Annotations, Event, Kind, LocId, KIND_COUNT, KIND_NAMES};
use std::io::BufRead;

/// The fixed part of an event line: LOC WALL CPU KIND.
struct Head {
    loc: LocId,
    wall: i64,
    cpu: Option<i64>,
    /// The kind's name.
    what: &'static str,
}

impl<R: BufRead> TextParser<R> {
    pub(super) fn parse_event(&mut self, toks: Vec<Tok>) -> Result<Event, String> {
        let mut it = toks.into_iter();
        let Head { loc, wall, cpu, what } = self.parse_head(&mut it)?;
        let rest: Vec<Tok> = it.collect();
        let (pos, mut a) = Args::new(what, rest)?;
        let (mut kind, name) = parse_kind(what, &pos, &mut a)?;
        let ann = Annotations {
            partner: a.opt("partner", "LOC:INDEX", parse_partner)?,
            lamport: a.opt("lamport", "N", parse_u64)?,
            raw_wall: a.opt("raw_wall", "N (a time in ns)", parse_i64_time)?,
        };
        a.finish()?;

        // Valid: now change the definitions.
        self.define_implicitly(loc);
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

    fn parse_head(&self, it: &mut std::vec::IntoIter<Tok>) -> Result<Head, String> {
        let t = next_plain(it, "LOC")?;
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
        let t = next_plain(it, "WALL")?;
        let wall = parse_i64_time(&t.value).map_err(|e| time_msg("WALL", &t.value, e))?;
        let t = next_plain(it, "CPU (a time, or - when unknown)")?;
        let cpu = if t.value == "-" {
            None
        } else {
            Some(parse_i64_time(&t.value).map_err(|e| time_msg("CPU", &t.value, e))?)
        };
        let t = next_plain(it, "KIND")?;
        let Some(code) = KIND_NAMES.iter().position(|k| *k == t.value) else {
            return Err(format!(
                "unknown event kind {} (expected one of {})",
                t.show(),
                KIND_NAMES.join(", ")
            ));
        };
        debug_assert!(code < KIND_COUNT as usize);
        Ok(Head { loc, wall, cpu, what: KIND_NAMES[code] })
    }
}

/// The next token, which must be a plain value (no key, not quoted).
fn next_plain(it: &mut std::vec::IntoIter<Tok>, what: &str) -> Result<Tok, String> {
    match it.next() {
        Some(t) if t.key.is_none() && !t.quoted => Ok(t),
        Some(t) => Err(format!("an event is LOC WALL CPU KIND ARGS...: expected {what}, found {}", t.show())),
        None => Err(format!("an event is LOC WALL CPU KIND ARGS...: expected {what}")),
    }
}

fn comm_arg(a: &mut Args) -> Result<u32, String> {
    a.opt("comm", "ID", parse_u32).map(|c| c.unwrap_or(0))
}

/// The kind `what` from its arguments; a named kind's name is given apart, to be
/// interned only once the whole line is known to be valid.
fn parse_kind(what: &str, pos: &[Tok], a: &mut Args) -> Result<(Kind, Option<NameRef>), String> {
    let kind = match what {
        "process_begin" | "thread_begin" => {
            positional(what, pos, 0, "")?;
            let parent = a.opt("parent", "LOC", parse_u32)?;
            if what == "process_begin" {
                Kind::ProcessBegin { parent }
            } else {
                Kind::ThreadBegin { parent }
            }
        }
        "process_end" => {
            positional(what, pos, 0, "")?;
            Kind::ProcessEnd
        }
        "thread_end" => {
            positional(what, pos, 0, "")?;
            Kind::ThreadEnd
        }
        "enter" | "leave" | "phase_begin" | "phase_end" => {
            let role = if what.starts_with("phase") { "a phase NAME" } else { "a procedure NAME" };
            positional(what, pos, 1, role)?;
            let name = name_ref(what, role, &pos[0])?;
            let kind = match what {
                "enter" => Kind::Enter { proc: 0 },
                "leave" => Kind::Leave { proc: 0 },
                "phase_begin" => Kind::PhaseBegin { name: 0 },
                _ => Kind::PhaseEnd { name: 0 },
            };
            return Ok((kind, Some(name)));
        }
        "coll_begin" | "coll_end" => parse_collective(what, pos, a)?,
        "lock_request" | "lock_acquire" | "lock_release" => {
            positional(what, pos, 0, "")?;
            let lock = a.req("lock", "N", parse_u64)?;
            match what {
                "lock_request" => Kind::LockRequest { lock },
                "lock_acquire" => Kind::LockAcquire { lock },
                _ => Kind::LockRelease { lock },
            }
        }
        "metric" => {
            positional(what, pos, 0, "")?;
            let metric = a.req("metric", "ID", parse_u32)?;
            let value = a.req("value", "F (a number, NaN, inf, -inf or 0x and 16 hex digits)", parse_f64)?;
            Kind::Metric { metric, value }
        }
        "clock_offset" => {
            positional(what, pos, 0, "")?;
            let reference = a.req("ref", "LOC", parse_u32)?;
            let offset = a.req("offset", "N (a time in ns)", parse_i64_time)?;
            let error = a.req("error", "N (a time in ns, not negative)", parse_u64_time)?;
            Kind::ClockOffset { reference, offset, error }
        }
        _ => parse_message(what, pos, a)?,
    };
    Ok((kind, None))
}

/// Point-to-point kinds, blocking and not; an error for any other `what`.
fn parse_message(what: &str, pos: &[Tok], a: &mut Args) -> Result<Kind, String> {
    Ok(match what {
        "send" => {
            positional(what, pos, 0, "")?;
            let to = a.req("to", "LOC", parse_u32)?;
            let tag = a.req("tag", "N", parse_u32)?;
            let bytes = a.req("bytes", "N", parse_u64)?;
            let comm = comm_arg(a)?;
            Kind::Send { to, comm, tag, bytes }
        }
        "recv_begin" => {
            positional(what, pos, 0, "")?;
            let from = a.opt("from", "LOC|any", parse_loc_or_any)?.flatten();
            let tag = a.opt("tag", "N|any", parse_loc_or_any)?.flatten();
            let comm = comm_arg(a)?;
            Kind::RecvBegin { from, comm, tag }
        }
        "recv_end" => {
            positional(what, pos, 0, "")?;
            let from = a.req("from", "LOC", parse_u32)?;
            let tag = a.req("tag", "N", parse_u32)?;
            let bytes = a.req("bytes", "N", parse_u64)?;
            let comm = comm_arg(a)?;
            Kind::RecvEnd { from, comm, tag, bytes }
        }
        "isend" => {
            positional(what, pos, 0, "")?;
            let to = a.req("to", "LOC", parse_u32)?;
            let tag = a.req("tag", "N", parse_u32)?;
            let bytes = a.req("bytes", "N", parse_u64)?;
            let request = a.req("req", "N", parse_u64)?;
            let comm = comm_arg(a)?;
            Kind::Isend { to, comm, tag, bytes, request }
        }
        "isend_complete" => {
            positional(what, pos, 0, "")?;
            Kind::IsendComplete { request: a.req("req", "N", parse_u64)? }
        }
        "irecv_request" => {
            positional(what, pos, 0, "")?;
            let from = a.opt("from", "LOC|any", parse_loc_or_any)?.flatten();
            let tag = a.opt("tag", "N|any", parse_loc_or_any)?.flatten();
            let request = a.req("req", "N", parse_u64)?;
            let comm = comm_arg(a)?;
            Kind::IrecvRequest { from, comm, tag, request }
        }
        "irecv_complete" => {
            positional(what, pos, 0, "")?;
            let request = a.req("req", "N", parse_u64)?;
            let from = a.req("from", "LOC", parse_u32)?;
            let tag = a.req("tag", "N", parse_u32)?;
            let bytes = a.req("bytes", "N", parse_u64)?;
            let comm = comm_arg(a)?;
            Kind::IrecvComplete { request, from, comm, tag, bytes }
        }
        _ => return Err(format!("unknown event kind {what}")),
    })
}

fn parse_collective(what: &str, pos: &[Tok], a: &mut Args) -> Result<Kind, String> {
    let op = coll_op(what, pos)?;
    positional(what, pos, 1, "a collective operation")?;
    let comm = comm_arg(a)?;
    if what == "coll_begin" {
        return Ok(Kind::CollBegin { op, comm });
    }
    let root = a.opt("root", "LOC", parse_u32)?;
    let sent = a.opt("sent", "N", parse_u64)?.unwrap_or(0);
    let received = a.opt("recv", "N", parse_u64)?.unwrap_or(0);
    Ok(Kind::CollEnd { op, comm, root, sent, received })
}

fn time_msg(field: &str, v: &str, e: NumErr) -> String {
    let v = short(v);
    match e {
        NumErr::Syntax => format!("expected {field}, a time ({TIME_HINT}), found {v}"),
        NumErr::Range(r) => format!("{field} {v} is out of range ({r} nanoseconds)"),
        NumErr::Fraction => format!("{field} {v} is not a whole number of nanoseconds"),
    }
}
