//! Definition lines, and the locations an event defines implicitly.

use super::args::{name_ref, positional, Args, NameRef};
use super::lex::Tok;
use super::num::{parse_members, parse_u32};
use super::{TextParser, DEF_KEYWORDS};
use crate::Error;
use spoor_model::{DefKind, LocId, StrId};
use std::io::BufRead;

/// Where a definition came from, for "already defined" messages.
#[derive(Clone, Copy)]
pub(super) struct Origin {
    line: u64,
    implicit: bool,
}

impl<R: BufRead> TextParser<R> {
    /// At the end of the input every id a definition refers to must be defined, as the
    /// binary reader requires of a definitions chunk (`Definitions::check`); the error
    /// names the line of the definition at fault.
    pub(super) fn check_definitions(&mut self) -> Result<(), Error> {
        let Err(e) = self.defs.check() else { return Ok(()) };
        let at_end = self.line;
        let line = self.origins(e.kind).and_then(|o| o.get(e.index)).map_or(at_end, |o| o.line);
        Err(Error::at_line(&self.file, line, format!("{e} (by the end of the input)")))
    }

    /// Where each definition of a numbered kind was made (properties are not numbered).
    fn origins(&mut self, d: DefKind) -> Option<&mut Vec<Origin>> {
        Some(match d {
            DefKind::App => &mut self.apps,
            DefKind::Machine => &mut self.machines,
            DefKind::Process => &mut self.processes,
            DefKind::Location => &mut self.locations,
            DefKind::Comm => &mut self.comms,
            DefKind::Metric => &mut self.metrics,
            DefKind::Property => return None,
        })
    }

    /// Checks that `id` is the next id of its kind.
    fn check_id(&mut self, d: DefKind, what: &str, id: u32) -> Result<(), String> {
        let Some(origins) = self.origins(d) else { return Ok(()) };
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

    fn note(&mut self, d: DefKind, implicit: bool) {
        let line = self.line;
        if let Some(o) = self.origins(d) {
            o.push(Origin { line, implicit });
        }
    }

    pub(super) fn resolve(&mut self, n: NameRef) -> StrId {
        match n {
            NameRef::Id(id) => id,
            NameRef::Text(t) => self.defs.strings.intern(&t),
        }
    }

    pub(super) fn parse_definition(&mut self, mut toks: Vec<Tok>) -> Result<(), String> {
        let head = toks.remove(0);
        let what: &'static str =
            DEF_KEYWORDS.iter().copied().find(|k| *k == head.value).unwrap_or("definition");
        let (pos, args) = Args::new(what, toks)?;
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
            return self.define_string(id, &pos[1]);
        }
        let name = name_ref(what, "NAME", &pos[1])?;
        self.define_numbered(what, id, name, args)
    }

    /// A string line: its id must be the next and its text new.
    fn define_string(&mut self, id: u32, t: &Tok) -> Result<(), String> {
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
        Ok(())
    }

    /// The definitions numbered by kind: apps, machines, processes, locations, communicators, metrics.
    fn define_numbered(&mut self, what: &str, id: u32, name: NameRef, mut args: Args) -> Result<(), String> {
        match what {
            "app" => {
                args.finish()?;
                self.check_id(DefKind::App, what, id)?;
                let name = self.resolve(name);
                self.defs.apps.push(spoor_model::Application { name });
                self.note(DefKind::App, false);
            }
            "machine" => {
                args.finish()?;
                self.check_id(DefKind::Machine, what, id)?;
                let name = self.resolve(name);
                self.defs.machines.push(spoor_model::Machine { name });
                self.note(DefKind::Machine, false);
            }
            "process" => {
                let app = args.req("app", "ID", parse_u32)?;
                let machine = args.req("machine", "ID", parse_u32)?;
                let rank = args.req("rank", "N", parse_u32)?;
                args.finish()?;
                self.check_id(DefKind::Process, what, id)?;
                let name = self.resolve(name);
                self.defs.processes.push(spoor_model::Process { name, app, machine, rank });
                self.note(DefKind::Process, false);
            }
            "location" => {
                let process = args.req("process", "ID", parse_u32)?;
                let thread = args.req("thread", "N", parse_u32)?;
                args.finish()?;
                self.check_id(DefKind::Location, what, id)?;
                let name = self.resolve(name);
                self.defs.locations.push(spoor_model::Location { name, process, thread });
                self.note(DefKind::Location, false);
            }
            "comm" => {
                let members = args.req("members", "LOC,LOC,... (may be empty)", parse_members)?;
                args.finish()?;
                self.check_id(DefKind::Comm, what, id)?;
                let name = self.resolve(name);
                self.defs.comms.push(spoor_model::Communicator { name, members });
                self.note(DefKind::Comm, false);
            }
            "metric" => {
                let unit = args.name("unit", "NAME")?;
                args.finish()?;
                self.check_id(DefKind::Metric, what, id)?;
                let name = self.resolve(name);
                let unit = self.resolve(unit);
                self.defs.metrics.push(spoor_model::Metric { name, unit });
                self.note(DefKind::Metric, false);
            }
            _ => return Err(format!("unknown definition {what}")),
        }
        Ok(())
    }

    /// Defines locations up to `loc` implicitly (see formats/text.md).
    pub(super) fn define_implicitly(&mut self, loc: LocId) {
        while self.defs.locations.len() <= loc as usize {
            if self.defs.apps.is_empty() {
                self.defs.add_app("app");
                self.note(DefKind::App, true);
            }
            if self.defs.machines.is_empty() {
                self.defs.add_machine("localhost");
                self.note(DefKind::Machine, true);
            }
            let n = self.defs.locations.len();
            let name = format!("p{n}");
            let p = self.defs.add_process(&name, 0, 0, n as u32);
            self.note(DefKind::Process, true);
            self.defs.add_location(&name, p, 0);
            self.note(DefKind::Location, true);
        }
    }
}
