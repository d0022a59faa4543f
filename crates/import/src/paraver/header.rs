//! The first line of a `.prv` file:
//!
//! ```text
//! #Paraver (dd/mm/yyyy at hh:mm):ftime[_unit]:nNodes(cpus,cpus,...):nAppl:app[,app...][,nComms]
//! app = nTasks(nThreads:node,nThreads:node,...)
//! ```
//!
//! `ftime` is the trace's duration in its time unit: `_ns` nanoseconds, `_us`
//! microseconds, `_ms` milliseconds, `_s` seconds, no suffix microseconds
//! (Paraver's historical default). Applications are separated by `,` (Extrae)
//! or `:` (older writers); a trailing `,n` gives the number of communicator
//! (`c:`) lines that follow.

use spoor_format::Error;

/// The most threads (locations) a header may declare; more is refused as hostile.
pub const MAX_THREADS: u64 = 1 << 22;

/// One task (process) of an application: its thread count and node (1-based, 0 = unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    pub threads: u32,
    pub node: u32,
}

/// The parsed header line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The date as written, e.g. `09/10/2019 at 16:09`.
    pub date: String,
    /// `ftime`, the trace's duration, in the trace's unit.
    pub ftime: u64,
    /// Nanoseconds per unit of the record times (1 for `_ns`).
    pub unit_ns: u64,
    /// The unit's suffix as written (`ns`, `us`, ...; `us` when absent).
    pub unit: String,
    /// CPUs per node; its length is the number of nodes.
    pub nodes: Vec<u32>,
    /// Per application, its tasks.
    pub apps: Vec<Vec<TaskSpec>>,
    /// The communicator count after the application list, if given.
    pub comms: Option<u64>,
}

impl Header {
    /// The trace's duration in ns (`ftime` times the unit), saturating.
    pub fn runtime_ns(&self) -> u64 {
        self.ftime.saturating_mul(self.unit_ns)
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    file: &'a str,
}

impl Cursor<'_> {
    fn err(&self, what: &str) -> Error {
        Error::at_line(
            self.file,
            1,
            format!("bad #Paraver header at column {}: expected {what}", self.pos + 1),
        )
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), Error> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(&format!("'{}'", c as char)))
        }
    }

    fn number(&mut self, what: &str) -> Result<u64, Error> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.err(what));
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
            .ok_or_else(|| self.err(&format!("{what} (a number that fits in 64 bits)")))
    }

    fn small(&mut self, what: &str) -> Result<u32, Error> {
        let n = self.number(what)?;
        u32::try_from(n).map_err(|_| self.err(&format!("{what} below 2^32")))
    }
}

/// Parses the header line (without its line end).
pub fn parse(file: &str, line: &str) -> Result<Header, Error> {
    let mut c = Cursor { s: line.as_bytes(), pos: 0, file };
    if !line.starts_with("#Paraver") {
        return Err(Error::at_line(
            file,
            1,
            "not a Paraver trace: the first line does not start with \"#Paraver\"",
        ));
    }
    c.pos = "#Paraver".len();
    while c.eat(b' ') {}
    // The date, in parentheses (it holds a ':' of its own).
    let date = if c.eat(b'(') {
        let start = c.pos;
        while c.peek().is_some_and(|ch| ch != b')') {
            c.pos += 1;
        }
        let d = String::from_utf8_lossy(&c.s[start..c.pos]).into_owned();
        c.expect(b')')?;
        d
    } else {
        String::new()
    };
    c.expect(b':')?;
    let ftime = c.number("the trace duration (ftime)")?;
    let (unit_ns, unit) = if c.eat(b'_') {
        let start = c.pos;
        while c.peek().is_some_and(|ch| ch.is_ascii_alphabetic()) {
            c.pos += 1;
        }
        let u = String::from_utf8_lossy(&c.s[start..c.pos]).to_ascii_lowercase();
        let ns = match u.as_str() {
            "ns" => 1,
            "us" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            _ => return Err(c.err("a time unit (_ns, _us, _ms or _s)")),
        };
        (ns, u)
    } else {
        (1_000, "us".to_string())
    };
    c.expect(b':')?;
    let nnodes = c.number("the number of nodes")?;
    let mut nodes = Vec::new();
    if c.eat(b'(') && !c.eat(b')') {
        loop {
            if nodes.len() as u64 >= MAX_THREADS {
                return Err(c.err("fewer nodes"));
            }
            nodes.push(c.small("a CPU count")?);
            if c.eat(b')') {
                break;
            }
            c.expect(b',')?;
        }
    }
    if nodes.is_empty() && nnodes > 0 {
        // "n" without a CPU list: n nodes of unknown size.
        if nnodes > MAX_THREADS {
            return Err(c.err("a plausible node count"));
        }
        nodes = vec![0; nnodes as usize];
    } else if nodes.len() as u64 != nnodes {
        return Err(Error::at_line(
            file,
            1,
            format!("bad #Paraver header: {nnodes} nodes announced but {} CPU counts listed", nodes.len()),
        ));
    }
    c.expect(b':')?;
    let napps = c.number("the number of applications")?;
    if napps == 0 {
        return Err(c.err("at least one application"));
    }
    c.expect(b':')?;
    let mut apps = Vec::new();
    let mut total_threads = 0u64;
    for a in 0..napps {
        if a > 0 && !c.eat(b':') {
            c.expect(b',')?;
        }
        let ntasks = c.number("the number of tasks of an application")?;
        c.expect(b'(')?;
        let mut tasks = Vec::new();
        loop {
            if tasks.len() as u64 >= ntasks {
                return Err(c.err("')' (more tasks listed than announced)"));
            }
            let threads = c.small("a thread count")?;
            c.expect(b':')?;
            let node = c.small("a node number")?;
            total_threads += threads as u64;
            if total_threads > MAX_THREADS {
                return Err(Error::at_line(
                    file,
                    1,
                    format!("bad #Paraver header: more than {MAX_THREADS} threads declared"),
                ));
            }
            tasks.push(TaskSpec { threads, node });
            if c.eat(b')') {
                break;
            }
            c.expect(b',')?;
        }
        if tasks.len() as u64 != ntasks {
            return Err(Error::at_line(
                file,
                1,
                format!(
                    "bad #Paraver header: application {} announces {ntasks} tasks but lists {}",
                    a + 1,
                    tasks.len()
                ),
            ));
        }
        apps.push(tasks);
    }
    let comms = if c.eat(b',') { Some(c.number("the number of communicators")?) } else { None };
    while c.peek().is_some_and(|ch| ch.is_ascii_whitespace()) {
        c.pos += 1;
    }
    if c.pos != c.s.len() {
        return Err(c.err("the end of the header line"));
    }
    Ok(Header { date, ftime, unit_ns, unit, nodes, apps, comms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extrae_header() {
        let h = parse("t.prv", "#Paraver (09/10/2019 at 16:09):11528373565_ns:1(2):1:2(1:1,1:1),3").unwrap();
        assert_eq!(h.date, "09/10/2019 at 16:09");
        assert_eq!(h.ftime, 11528373565);
        assert_eq!(h.unit_ns, 1);
        assert_eq!(h.nodes, vec![2]);
        assert_eq!(h.apps, vec![vec![TaskSpec { threads: 1, node: 1 }, TaskSpec { threads: 1, node: 1 }]]);
        assert_eq!(h.comms, Some(3));
        assert_eq!(h.runtime_ns(), 11528373565);
    }

    #[test]
    fn two_apps_microseconds() {
        let h = parse("t.prv", "#Paraver (01/01/20 at 00:00):1000:2(4,4):2:1(2:1):2(1:2,1:2)").unwrap();
        assert_eq!(h.unit_ns, 1000);
        assert_eq!(h.apps.len(), 2);
        assert_eq!(h.apps[0], vec![TaskSpec { threads: 2, node: 1 }]);
        assert_eq!(h.comms, None);
        let h = parse("t.prv", "#Paraver (x):5_us:2(4,4):2:1(2:1),2(1:2,1:2),0").unwrap();
        assert_eq!(h.apps[1].len(), 2);
        assert_eq!(h.comms, Some(0));
    }

    #[test]
    fn bad_headers() {
        for bad in [
            "#Paravr",
            "#Paraver (x):12",
            "#Paraver (x):12_xs:1(2):1:1(1:1)",
            "#Paraver (x):12:1(2):1:2(1:1)",
            "#Paraver (x):12:1(2):1:1(1:1,1:1)",
            "#Paraver (x):12:1(2):0:",
            "#Paraver (x):12:1(2):1:1(99999999999:1)",
            "#Paraver (x):12:1(2):1:1(1:1) junk",
            "#Paraver (x):99999999999999999999999:1(2):1:1(1:1)",
            "#Paraver (x):1:3(2):1:1(1:1)",
        ] {
            let e = parse("t.prv", bad).unwrap_err();
            assert_eq!(e.line, Some(1), "{bad}: {e}");
        }
    }
}
