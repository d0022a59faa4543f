//! Chrome trace-event JSON (the "JSON Object Format" Perfetto and chrome://tracing read),
//! written as the pass goes: processes and threads as tracks, procedures as B/E slices,
//! waits and sends as X slices, messages as flow arrows (s at the send, f at the
//! receive completion), and a path overlay (the critical path) as its own process.
//! [`ChromeExport`] is the observer of the fold that writes it; [`ChromeWriter`] the
//! document.

use crate::analyze::Observer;
use crate::overlay::Overlay;
use spoor_model::{Definitions, Event, Kind, LocId, StrId};
use std::io::{self, Write};

/// The export as an observer of the fold: each location's open procedures, its posted
/// receive, where its current wait began and its send slice still open (a send is drawn
/// up to the location's next event).
pub struct ChromeExport {
    w: ChromeWriter,
    locs: Vec<ExportLoc>,
}

#[derive(Default)]
struct ExportLoc {
    started: bool,
    /// The index of the location's next event (a message's flow id names its send).
    index: u64,
    last: i64,
    stack: Vec<StrId>,
    recv_posted: Option<i64>,
    wait_since: i64,
    send: Option<(i64, String)>,
}

impl ChromeExport {
    /// Starts the document on `out`.
    pub fn new(out: Box<dyn Write>, defs: &Definitions) -> ChromeExport {
        let mut locs = Vec::new();
        locs.resize_with(defs.locations.len(), ExportLoc::default);
        ChromeExport { w: ChromeWriter::new(out, defs), locs }
    }

    /// Closes what is still open at each location's last event: its send slice, then
    /// its procedures, innermost first. The document goes on (waits, an overlay).
    pub fn finish_pass(mut self, defs: &Definitions) -> ChromeWriter {
        for (l, st) in self.locs.iter_mut().enumerate() {
            let loc = l as LocId;
            if let Some((ts, name)) = st.send.take() {
                self.w.complete(loc, ts, st.last.max(ts), &name, "message");
            }
            while let Some(p) = st.stack.pop() {
                self.w.end(loc, st.last, &defs.strings.name(p));
            }
        }
        self.w
    }
}

impl Observer for ChromeExport {
    fn event(&mut self, defs: &Definitions, e: &Event) {
        let (loc, t) = (e.loc, e.wall);
        let Some(st) = self.locs.get_mut(loc as usize) else { return };
        let w = &mut self.w;
        let index = st.index;
        if st.started {
            if let Some((ts, name)) = st.send.take() {
                w.complete(loc, ts, t.max(ts), &name, "message");
            }
        }
        st.started = true;
        match &e.kind {
            Kind::Enter { proc } => {
                st.stack.push(*proc);
                w.begin(loc, t, &defs.strings.name(*proc));
            }
            // Frames left open inside the one left close with it.
            Kind::Leave { proc } => {
                if let Some(at) = st.stack.iter().rposition(|p| p == proc) {
                    for p in st.stack.drain(at..).rev() {
                        w.end(loc, t, &defs.strings.name(p));
                    }
                }
            }
            Kind::Send { to, bytes, .. } | Kind::Isend { to, bytes, .. } => {
                w.flow_start(loc, t, loc, index);
                st.send = Some((t, format!("send to {} ({bytes} B)", defs.location_name(*to))));
            }
            Kind::RecvBegin { .. } => st.recv_posted = Some(t),
            Kind::RecvEnd { from, .. } => {
                if let Some(p) = st.recv_posted.take() {
                    w.complete(loc, p, t, &format!("recv from {}", defs.location_name(*from)), "wait");
                }
                if let Some(s) = e.ann.partner {
                    w.flow_end(loc, t, s.loc, s.index);
                }
            }
            Kind::IrecvComplete { .. } => {
                if let Some(s) = e.ann.partner {
                    w.flow_end(loc, t, s.loc, s.index);
                }
            }
            Kind::CollBegin { .. } | Kind::LockRequest { .. } => st.wait_since = t,
            Kind::CollEnd { op, .. } => w.complete(loc, st.wait_since.min(t), t, op.name(), "wait"),
            Kind::LockAcquire { lock } => {
                w.complete(loc, st.wait_since.min(t), t, &format!("lock {lock}"), "wait")
            }
            _ => {}
        }
        st.last = t;
        st.index += 1;
    }
}

pub struct ChromeWriter {
    out: Box<dyn Write>,
    first: bool,
    err: Option<io::Error>,
    pid: Vec<u32>,
}

/// Microseconds with three decimals, exactly, from nanoseconds.
pub fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

fn js(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

impl ChromeWriter {
    /// Starts the document and names every process and thread.
    pub fn new(out: Box<dyn Write>, defs: &Definitions) -> ChromeWriter {
        let pid = defs.locations.iter().map(|l| l.process).collect();
        let mut w = ChromeWriter { out, first: true, err: None, pid };
        w.raw("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        for (p, proc_) in defs.processes.iter().enumerate() {
            let app = defs
                .apps
                .get(proc_.app as usize)
                .map(|a| defs.strings.name(a.name).into_owned())
                .unwrap_or_default();
            let name = format!("{} ({app})", defs.strings.name(proc_.name));
            w.item(&format!(
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{p},\"tid\":0,\"args\":{{\"name\":{}}}}}",
                js(&name)
            ));
            w.item(&format!(
                "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{p},\"tid\":0,\"args\":{{\"sort_index\":{p}}}}}"
            ));
        }
        for (l, loc) in defs.locations.iter().enumerate() {
            w.item(&format!(
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{l},\"args\":{{\"name\":{}}}}}",
                loc.process,
                js(&defs.strings.name(loc.name))
            ));
        }
        w
    }

    fn raw(&mut self, s: &str) {
        if self.err.is_none() {
            if let Err(e) = self.out.write_all(s.as_bytes()) {
                self.err = Some(e);
            }
        }
    }

    fn item(&mut self, s: &str) {
        if !self.first {
            self.raw(",\n");
        }
        self.first = false;
        self.raw(s);
    }

    fn pid(&self, loc: LocId) -> u32 {
        self.pid.get(loc as usize).copied().unwrap_or(0)
    }

    pub fn begin(&mut self, loc: LocId, t: i64, name: &str) {
        let s = format!(
            "{{\"ph\":\"B\",\"cat\":\"procedure\",\"name\":{},\"pid\":{},\"tid\":{loc},\"ts\":{}}}",
            js(name),
            self.pid(loc),
            micros(t)
        );
        self.item(&s);
    }

    pub fn end(&mut self, loc: LocId, t: i64, name: &str) {
        let s = format!(
            "{{\"ph\":\"E\",\"cat\":\"procedure\",\"name\":{},\"pid\":{},\"tid\":{loc},\"ts\":{}}}",
            js(name),
            self.pid(loc),
            micros(t)
        );
        self.item(&s);
    }

    pub fn complete(&mut self, loc: LocId, t0: i64, t1: i64, name: &str, cat: &str) {
        let s = format!(
            "{{\"ph\":\"X\",\"cat\":{},\"name\":{},\"pid\":{},\"tid\":{loc},\"ts\":{},\"dur\":{}}}",
            js(cat),
            js(name),
            self.pid(loc),
            micros(t0),
            micros((t1 - t0).max(0))
        );
        self.item(&s);
    }

    /// The flow id of the message sent by event `index` of `send_loc`.
    fn flow_id(send_loc: LocId, index: u64) -> String {
        format!("\"m{send_loc}.{index}\"")
    }

    pub fn flow_start(&mut self, loc: LocId, t: i64, send_loc: LocId, index: u64) {
        let s = format!(
            "{{\"ph\":\"s\",\"cat\":\"message\",\"name\":\"message\",\"id\":{},\"pid\":{},\"tid\":{loc},\"ts\":{}}}",
            Self::flow_id(send_loc, index),
            self.pid(loc),
            micros(t)
        );
        self.item(&s);
    }

    pub fn flow_end(&mut self, loc: LocId, t: i64, send_loc: LocId, index: u64) {
        let s = format!(
            "{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\",\"id\":{},\"pid\":{},\"tid\":{loc},\"ts\":{}}}",
            Self::flow_id(send_loc, index),
            self.pid(loc),
            micros(t)
        );
        self.item(&s);
    }

    /// Adds the overlay as its own process (`pid` one past the last process): one slice
    /// per segment, named by its location, and its arcs as flow arrows between the
    /// locations' tracks (category `critical`).
    pub fn overlay(&mut self, defs: &Definitions, o: &Overlay) {
        if o.is_empty() {
            return;
        }
        let pid = defs.processes.len();
        let name = if o.name.is_empty() { "path" } else { &o.name };
        self.item(&format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
            js(name)
        ));
        self.item(&format!(
            "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":-1}}}}"
        ));
        self.item(&format!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
            js(name)
        ));
        for s in &o.segments {
            let ln = defs.location_name(s.loc);
            let item = format!(
                "{{\"ph\":\"X\",\"cat\":\"critical\",\"name\":{},\"pid\":{pid},\"tid\":0,\"ts\":{},\"dur\":{},\"args\":{{\"location\":{}}}}}",
                js(&ln),
                micros(s.start),
                micros((s.end - s.start).max(0)),
                s.loc
            );
            self.item(&item);
        }
        // Marks on a track of their own (tid 1): on a location's track they would break
        // the nesting of its procedures' slices.
        if !o.marks.is_empty() {
            self.item(&format!(
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":1,\"args\":{{\"name\":\"annotations\"}}}}"
            ));
        }
        for m in &o.marks {
            let item = format!(
                "{{\"ph\":\"X\",\"cat\":\"annotation\",\"name\":{},\"pid\":{pid},\"tid\":1,\"ts\":{},\"dur\":{},\"args\":{{\"location\":{}}}}}",
                js(&m.label),
                micros(m.start),
                micros((m.end - m.start).max(0)),
                m.loc
            );
            self.item(&item);
        }
        for (i, a) in o.arcs.iter().enumerate() {
            let s = format!(
                "{{\"ph\":\"s\",\"cat\":\"critical\",\"name\":{},\"id\":\"c{i}\",\"pid\":{},\"tid\":{},\"ts\":{}}}",
                js(name),
                self.pid(a.from_loc),
                a.from_loc,
                micros(a.from_time)
            );
            self.item(&s);
            let f = format!(
                "{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"critical\",\"name\":{},\"id\":\"c{i}\",\"pid\":{},\"tid\":{},\"ts\":{}}}",
                js(name),
                self.pid(a.to_loc),
                a.to_loc,
                micros(a.to_time)
            );
            self.item(&f);
        }
    }

    /// Marks every wait state as a slice on its location's track (category
    /// `wait-state`, named by its pattern, with its call path and what it waited for).
    pub fn waits(&mut self, defs: &Definitions, w: &spoor_waits::WaitStates) {
        for i in &w.instances {
            let cause = i
                .cause
                .map_or_else(String::new, |c| format!("{} event {}", defs.location_label(c.loc), c.index));
            let item = format!(
                "{{\"ph\":\"X\",\"cat\":\"wait-state\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"call path\":{},\"waited for\":{}}}}}",
                js(i.pattern.name()),
                self.pid(i.loc),
                i.loc,
                micros(i.start),
                micros(i.duration),
                js(&w.callpaths.render(defs, i.callpath)),
                js(&cause)
            );
            self.item(&item);
        }
    }

    /// Closes the document; the first write error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        self.raw("\n]}\n");
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.out.flush()
    }
}
