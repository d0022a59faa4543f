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

/// The most threads (locations), and the most nodes, a header may declare by default;
/// more is refused as hostile. Each declared thread costs a named location (about
/// 0.8 µs and 270 bytes) whether or not it has records: 2^22 of them about 1 GiB.
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
    /// The most threads, and the most nodes, declared.
    max_threads: u64,
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
pub fn parse(file: &str, line: &str, max_threads: u64) -> Result<Header, Error> {
    let mut c = Cursor { s: line.as_bytes(), pos: 0, file, max_threads };
    if !line.starts_with("#Paraver") {
        return Err(Error::at_line(
            file,
            1,
            "not a Paraver trace: the first line does not start with \"#Paraver\"",
        ));
    }
    c.pos = "#Paraver".len();
    while c.eat(b' ') {}
    let date = c.date()?;
    c.expect(b':')?;
    let ftime = c.number("the trace duration (ftime)")?;
    let (unit_ns, unit) = c.unit()?;
    c.expect(b':')?;
    let nodes = c.nodes()?;
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
        apps.push(c.app(a, &mut total_threads)?);
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

impl Cursor<'_> {
    /// The date, in parentheses (it holds a ':' of its own); empty when there is none.
    fn date(&mut self) -> Result<String, Error> {
        if !self.eat(b'(') {
            return Ok(String::new());
        }
        let start = self.pos;
        while self.peek().is_some_and(|ch| ch != b')') {
            self.pos += 1;
        }
        let d = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        self.expect(b')')?;
        Ok(d)
    }

    /// The time unit after the duration (`_ns`, `_us`, `_ms`, `_s`; microseconds when
    /// there is none): nanoseconds per unit, and its name.
    fn unit(&mut self) -> Result<(u64, String), Error> {
        if !self.eat(b'_') {
            return Ok((1_000, "us".to_string()));
        }
        let start = self.pos;
        while self.peek().is_some_and(|ch| ch.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        let u = String::from_utf8_lossy(&self.s[start..self.pos]).to_ascii_lowercase();
        let ns = match u.as_str() {
            "ns" => 1,
            "us" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            _ => return Err(self.err("a time unit (_ns, _us, _ms or _s)")),
        };
        Ok((ns, u))
    }

    /// The number of nodes and their CPU counts (0: unknown).
    fn nodes(&mut self) -> Result<Vec<u32>, Error> {
        let nnodes = self.number("the number of nodes")?;
        let mut nodes = Vec::new();
        if self.eat(b'(') && !self.eat(b')') {
            loop {
                if nodes.len() as u64 >= self.max_threads {
                    return Err(self.err("fewer nodes"));
                }
                nodes.push(self.small("a CPU count")?);
                if self.eat(b')') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        if nodes.is_empty() && nnodes > 0 {
            // "n" without a CPU list: n nodes of unknown size.
            if nnodes > self.max_threads {
                return Err(self.err("a plausible node count"));
            }
            nodes = vec![0; nnodes as usize];
        } else if nodes.len() as u64 != nnodes {
            return Err(Error::at_line(
                self.file,
                1,
                format!(
                    "bad #Paraver header: {nnodes} nodes announced but {} CPU counts listed",
                    nodes.len()
                ),
            ));
        }
        Ok(nodes)
    }

    /// Application `a`'s tasks, `ntasks(threads:node,...)`; `total_threads` counts the
    /// threads declared so far.
    fn app(&mut self, a: u64, total_threads: &mut u64) -> Result<Vec<TaskSpec>, Error> {
        let file = self.file;
        let ntasks = self.number("the number of tasks of an application")?;
        self.expect(b'(')?;
        let mut tasks = Vec::new();
        loop {
            if tasks.len() as u64 >= ntasks {
                return Err(self.err("')' (more tasks listed than announced)"));
            }
            let threads = self.small("a thread count")?;
            self.expect(b':')?;
            let node = self.small("a node number")?;
            *total_threads += threads as u64;
            if *total_threads > self.max_threads {
                return Err(Error::at_line(
                    file,
                    1,
                    format!("bad #Paraver header: more than {} threads declared", self.max_threads),
                ));
            }
            tasks.push(TaskSpec { threads, node });
            if self.eat(b')') {
                break;
            }
            self.expect(b',')?;
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
        Ok(tasks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extrae_header() {
        let h =
            parse("t.prv", "#Paraver (09/10/2019 at 16:09):11528373565_ns:1(2):1:2(1:1,1:1),3", MAX_THREADS)
                .unwrap();
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
        let h = parse("t.prv", "#Paraver (01/01/20 at 00:00):1000:2(4,4):2:1(2:1):2(1:2,1:2)", MAX_THREADS)
            .unwrap();
        assert_eq!(h.unit_ns, 1000);
        assert_eq!(h.apps.len(), 2);
        assert_eq!(h.apps[0], vec![TaskSpec { threads: 2, node: 1 }]);
        assert_eq!(h.comms, None);
        let h = parse("t.prv", "#Paraver (x):5_us:2(4,4):2:1(2:1),2(1:2,1:2),0", MAX_THREADS).unwrap();
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
            let e = parse("t.prv", bad, MAX_THREADS).unwrap_err();
            assert_eq!(e.line, Some(1), "{bad}: {e}");
        }
    }
}
