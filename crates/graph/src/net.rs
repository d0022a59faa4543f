//! Network models (formats/network.md): what a message and a collective cost on the
//! model machine, and how many transfers its links and buses carry at once.

use crate::cost::{Local, NetTable};
use crate::error::{Error, Result};
use crate::pag::{ArcKind, Pag};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use spoor_model::{CollOp, Feedback};
use toml::Spanned;

/// What a message of a size costs.
#[derive(Clone, Debug, PartialEq)]
pub enum Transfer {
    /// Zero latency, infinite bandwidth.
    Ideal,
    /// A communication-cost table (formats/nettable.md).
    Table(NetTable),
    /// Latency (ns) and bandwidth (bytes a nanosecond, possibly infinite), remote and
    /// local.
    Linear {
        /// Remote: per message.
        latency: f64,
        /// Remote: bytes a nanosecond.
        bandwidth: f64,
        /// Local: per message.
        local_latency: f64,
        /// Local: bytes a nanosecond.
        local_bandwidth: f64,
    },
}

/// What a collective instance costs.
#[derive(Clone, Debug, PartialEq)]
pub enum Collectives {
    /// As traced.
    Measured,
    /// `phases × steps(P) × t(m)` with `steps` of the shape.
    Model(Steps),
    /// Measured per operation, process count and size (`spoor-calibrate --collectives`).
    Table(CollTable),
}

/// How many steps a collective takes on `P` processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steps {
    /// `ceil(log2 P)`.
    Tree,
    /// `P - 1`.
    Linear,
    /// 1.
    Constant,
}

impl Steps {
    fn of(self, procs: u32) -> f64 {
        match self {
            Steps::Tree => (32 - procs.max(1).saturating_sub(1).leading_zeros()) as f64,
            Steps::Linear => procs.saturating_sub(1) as f64,
            Steps::Constant => 1.0,
        }
    }
}

/// Whose links a remote message takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeOf {
    /// The machine each end was recorded on.
    Machine,
    /// The placement's processor of each end.
    Processor,
}

/// The model machine's network.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    /// What a message costs.
    pub transfer: Transfer,
    /// Which messages are local (`None`: the command's own meaning).
    pub local: Option<Local>,
    /// Whose links a remote message takes.
    pub node: NodeOf,
    /// Transfers into one node at once (`None`: unlimited).
    pub links_in: Option<u32>,
    /// Transfers out of one node at once.
    pub links_out: Option<u32>,
    /// Transfers in the whole network at once.
    pub buses: Option<u32>,
    /// What a collective costs.
    pub collectives: Collectives,
    /// What each blocking MPI call takes besides its communication, ns.
    pub overhead_ns: i64,
    /// What the first remote message between two processes waits for their
    /// connection, ns.
    pub connect_ns: i64,
}

impl Network {
    /// Dimemas's ideal network: nothing takes time, nothing queues.
    pub fn ideal() -> Network {
        Network::with_transfer(Transfer::Ideal)
    }

    /// The model of a communication-cost table, every other key at its default.
    pub fn from_table(table: NetTable) -> Network {
        let local = table.local;
        Network { local, ..Network::with_transfer(Transfer::Table(table)) }
    }

    fn with_transfer(transfer: Transfer) -> Network {
        Network {
            transfer,
            local: None,
            node: NodeOf::Machine,
            links_in: None,
            links_out: None,
            buses: None,
            collectives: Collectives::Model(Steps::Tree),
            overhead_ns: 0,
            connect_ns: 0,
        }
    }

    /// The network with `local` as the meaning of local, when given (the command
    /// line's `--local` wins over the model's).
    pub fn with_local(mut self, local: Option<Local>) -> Network {
        if local.is_some() {
            self.local = local;
        }
        self
    }

    /// Reads `--net SPEC`: `ideal`, a model (`.toml`) or a table (any other file).
    /// Warnings go to `feedback`.
    pub fn load(spec: &str, feedback: &dyn Feedback) -> Result<Network> {
        if spec == "ideal" {
            return Ok(Network::ideal());
        }
        if spec.ends_with(".toml") {
            let text = spoor_format::read_text(spec)?;
            let dir = std::path::Path::new(spec).parent().unwrap_or(std::path::Path::new(""));
            return Network::parse(spec, &text, dir, feedback);
        }
        Ok(Network::from_table(NetTable::load(spec, feedback)?))
    }

    /// Parses a model's TOML (formats/network.md); files it names are relative to
    /// `dir`.
    pub fn parse(file: &str, text: &str, dir: &std::path::Path, feedback: &dyn Feedback) -> Result<Network> {
        let spec: ModelSpec = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| format!("line {}: ", line_at(text, s.start))).unwrap_or_default();
            Error::input(file, format!("{at}{}", e.message()))
        })?;
        let err = |at: std::ops::Range<usize>, msg: String| {
            Error::input(file, format!("line {}: {msg}", line_at(text, at.start)))
        };
        let duration = |v: &Option<Spanned<toml::Value>>, key: &str| -> Result<Option<f64>> {
            v.as_ref()
                .map(|v| parse_duration(v.get_ref()).map_err(|m| err(v.span(), format!("{key}: {m}"))))
                .transpose()
        };
        let rate = |v: &Option<Spanned<toml::Value>>, key: &str| -> Result<Option<f64>> {
            v.as_ref()
                .map(|v| parse_bandwidth(v.get_ref()).map_err(|m| err(v.span(), format!("{key}: {m}"))))
                .transpose()
        };
        let path = |p: &str| dir.join(p).to_string_lossy().into_owned();
        let (lat, bw) = (duration(&spec.latency, "latency")?, rate(&spec.bandwidth, "bandwidth")?);
        let (llat, lbw) = (
            duration(&spec.local_latency, "local_latency")?,
            rate(&spec.local_bandwidth, "local_bandwidth")?,
        );
        let transfer = match &spec.table {
            Some(t) => {
                if let Some(v) = spec.latency.as_ref().or(spec.bandwidth.as_ref()) {
                    return Err(err(
                        v.span(),
                        "a model gives either `table` or `latency` and `bandwidth`, not both".into(),
                    ));
                }
                let table = NetTable::load(&path(t.get_ref()), feedback)
                    .map_err(|e| err(t.span(), format!("table: {}", with_source(&e))))?;
                Transfer::Table(table)
            }
            None => Transfer::Linear {
                latency: lat.unwrap_or(0.0),
                bandwidth: bw.unwrap_or(f64::INFINITY),
                local_latency: llat.unwrap_or(0.0),
                local_bandwidth: lbw.unwrap_or(f64::INFINITY),
            },
        };
        let local = match &spec.local {
            Some(v) => Some(Local::parse(v.get_ref()).map_err(|m| err(v.span(), m))?),
            None => None,
        };
        let node = match spec.node.as_ref().map(|v| (v.get_ref().as_str(), v.span())) {
            None | Some(("machine", _)) => NodeOf::Machine,
            Some(("processor", _)) => NodeOf::Processor,
            Some((other, at)) => {
                return Err(err(at, format!("node `{other}`: expected machine or processor")))
            }
        };
        let count = |v: &Option<Spanned<i64>>, key: &str| -> Result<Option<u32>> {
            match v {
                None => Ok(None),
                Some(v) => match u32::try_from(*v.get_ref()) {
                    Ok(n) if n >= 1 => Ok(Some(n)),
                    _ => Err(err(
                        v.span(),
                        format!("{key} = {}: expected a whole number of at least 1", v.get_ref()),
                    )),
                },
            }
        };
        let collectives = match spec.collectives.as_ref().map(|v| (v.get_ref().as_str(), v.span())) {
            None | Some(("tree", _)) => Collectives::Model(Steps::Tree),
            Some(("linear", _)) => Collectives::Model(Steps::Linear),
            Some(("constant", _)) => Collectives::Model(Steps::Constant),
            Some(("measured", _)) => Collectives::Measured,
            Some((f, at)) => {
                let p = path(f);
                let table = spoor_format::read_text(&p)
                    .map_err(Error::from)
                    .and_then(|text| CollTable::parse(&p, &text))
                    .map_err(|e| err(at, format!("collectives: {}", with_source(&e))))?;
                Collectives::Table(table)
            }
        };
        let overhead = duration(&spec.overhead, "overhead")?.unwrap_or(0.0);
        let connect = duration(&spec.connect, "connect")?.unwrap_or(0.0);
        Ok(Network {
            transfer,
            local,
            node,
            links_in: count(&spec.links_in, "links_in")?,
            links_out: count(&spec.links_out, "links_out")?,
            buses: count(&spec.buses, "buses")?,
            collectives,
            overhead_ns: overhead.round() as i64,
            connect_ns: connect.round() as i64,
        })
    }

    /// The time of a message of `bytes`, ns: `t(m)`.
    #[inline]
    pub fn time(&self, bytes: u64, local: bool) -> f64 {
        match &self.transfer {
            Transfer::Ideal => 0.0,
            Transfer::Table(t) => t.time(bytes, local) as f64,
            Transfer::Linear { latency, bandwidth, local_latency, local_bandwidth } => {
                let (l, b) = if local { (local_latency, local_bandwidth) } else { (latency, bandwidth) };
                l + bytes as f64 / b
            }
        }
    }

    /// The part of a message's time that occupies links, ns: `w(m)`.
    #[inline]
    pub fn wire(&self, bytes: u64, local: bool) -> f64 {
        match &self.transfer {
            Transfer::Ideal => 0.0,
            Transfer::Table(t) => (t.time(bytes, local) - t.time(0, local)).max(0) as f64,
            Transfer::Linear { bandwidth, local_bandwidth, .. } => {
                bytes as f64 / if local { local_bandwidth } else { bandwidth }
            }
        }
    }

    /// Whether messages queue for links or buses.
    pub fn contention(&self) -> bool {
        self.transfer != Transfer::Ideal
            && (self.links_in.is_some() || self.links_out.is_some() || self.buses.is_some())
    }

    /// Whether a message's time depends on the messages sent before it (links, buses
    /// or connections), so that only a simulation in the order of the sends knows it.
    pub fn per_send(&self) -> bool {
        self.contention() || self.connect() > 0.0
    }

    /// What the first remote message between two processes waits for their
    /// connection, ns (none on the ideal network).
    #[inline]
    pub fn connect(&self) -> f64 {
        if self.transfer == Transfer::Ideal {
            0.0
        } else {
            self.connect_ns as f64
        }
    }

    /// The time of a collective arc of operation code + 1 `op` (0: unknown) into an end
    /// of `bytes`, on an instance of `procs` processes, ns; `None` to keep it as traced.
    pub fn collective(&self, op: u8, procs: u32, bytes: u64) -> Option<f64> {
        let op = op.checked_sub(1).and_then(CollOp::from_code).unwrap_or(CollOp::Other);
        let steps = match &self.collectives {
            Collectives::Measured => return None,
            Collectives::Model(s) => *s,
            Collectives::Table(t) => match t.time(op, procs, bytes) {
                Some(ns) => return Some(ns),
                None => Steps::Tree,
            },
        };
        let phases = match op {
            CollOp::Bcast | CollOp::Scatter | CollOp::Scatterv => 1.0,
            CollOp::Reduce | CollOp::Gather | CollOp::Gatherv => 1.0,
            _ => 2.0,
        };
        Some(phases * steps.of(procs) * self.time(bytes, false))
    }

    /// The time of collective arc `a` of `pag` into an end (`procs`: the instances'
    /// process counts, [`collective_procs`]), ns; `None` to keep it as traced.
    pub fn collective_arc(&self, pag: &Pag, procs: &FxHashMap<u32, u32>, a: usize) -> Option<f64> {
        let p = procs.get(&pag.arc_from[a]).copied().unwrap_or(1);
        self.collective(pag.arc_op[a], p, pag.arc_bytes[a])
    }

    /// Operations of `pag`'s collectives that a collective table lacks (they take the
    /// tree model), as warnings.
    pub fn warnings_for(&self, pag: &Pag) -> Vec<String> {
        let Collectives::Table(t) = &self.collectives else { return Vec::new() };
        let mut seen = [false; 16];
        for (&k, &op) in pag.arc_kind.iter().zip(&pag.arc_op) {
            if k == ArcKind::CollOut {
                seen[op as usize & 15] = true;
            }
        }
        let missing: Vec<&str> = (1..16u8)
            .filter(|&o| seen[o as usize])
            .filter_map(|o| CollOp::from_code(o - 1))
            .filter(|op| !t.rows.contains_key(&op.code()))
            .map(CollOp::name)
            .collect();
        if missing.is_empty() {
            Vec::new()
        } else {
            vec![format!("{}: no rows for {}: they take the tree model", t.file, missing.join(", "))]
        }
    }
}

/// The process count of each collective instance of `pag`: per virtual node, the more
/// of the arcs that feed it and that leave it.
pub fn collective_procs(pag: &Pag) -> FxHashMap<u32, u32> {
    let mut ins: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
    for a in 0..pag.arcs() {
        match pag.arc_kind[a] {
            ArcKind::CollIn => ins.entry(pag.arc_to[a]).or_default().0 += 1,
            ArcKind::CollOut => ins.entry(pag.arc_from[a]).or_default().1 += 1,
            _ => {}
        }
    }
    ins.into_iter().map(|(v, (i, o))| (v, i.max(o))).collect()
}

/// A collective table (formats/network.md, "Collectives").
#[derive(Clone, Debug, PartialEq)]
pub struct CollTable {
    file: String,
    /// Per operation code: per process count (increasing), rows of (bytes, ns) with
    /// bytes increasing.
    rows: std::collections::BTreeMap<u8, Vec<(u32, Sizes)>>,
}

/// (bytes, ns) rows, bytes increasing.
type Sizes = Vec<(u64, f64)>;

impl CollTable {
    /// Parses the CSV form.
    pub fn parse(file: &str, text: &str) -> Result<CollTable> {
        let mut rows: std::collections::BTreeMap<u8, Vec<(u32, Sizes)>> = Default::default();
        let mut header = false;
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |m: String| Error::input(file, format!("line {}: {m}", n + 1));
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            if !header {
                if cols != ["op", "procs", "bytes", "ns"] {
                    return Err(bad(format!("expected the header `op,procs,bytes,ns`, found `{line}`")));
                }
                header = true;
                continue;
            }
            if cols.len() != 4 {
                return Err(bad(format!("expected 4 columns (op,procs,bytes,ns), found {}", cols.len())));
            }
            let op = CollOp::from_name(cols[0]).ok_or_else(|| {
                let names: Vec<&str> = CollOp::ALL.iter().map(|o| o.name()).collect();
                bad(format!(
                    "`{}` is not a collective operation: expected one of {}",
                    cols[0],
                    names.join(", ")
                ))
            })?;
            let procs = match cols[1].parse::<u32>() {
                Ok(p) if p >= 1 => p,
                _ => return Err(bad(format!("procs `{}` is not a whole number of at least 1", cols[1]))),
            };
            let bytes: u64 =
                cols[2].parse().map_err(|_| bad(format!("bytes `{}` is not a whole number", cols[2])))?;
            let ns = match cols[3].parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => v,
                _ => {
                    return Err(bad(format!("ns `{}` is not a non-negative number of nanoseconds", cols[3])))
                }
            };
            let by_procs = rows.entry(op.code()).or_default();
            let at = match by_procs.binary_search_by_key(&procs, |r| r.0) {
                Ok(i) => i,
                Err(i) => {
                    by_procs.insert(i, (procs, Vec::new()));
                    i
                }
            };
            let sizes = &mut by_procs[at].1;
            match sizes.binary_search_by_key(&bytes, |r| r.0) {
                Ok(_) => {
                    return Err(bad(format!(
                        "a second row for {} on {procs} processes of {bytes} bytes",
                        op.name()
                    )))
                }
                Err(i) => sizes.insert(i, (bytes, ns)),
            }
        }
        if !header {
            return Err(Error::input(file, "the table has no header (expected `op,procs,bytes,ns`)"));
        }
        Ok(CollTable { file: file.to_owned(), rows })
    }

    /// The time of `op` on `procs` processes with `bytes`: the rows of the nearest
    /// process count (the smaller on a tie), interpolated by size.
    pub fn time(&self, op: CollOp, procs: u32, bytes: u64) -> Option<f64> {
        let by_procs = self.rows.get(&op.code())?;
        let (_, sizes) = by_procs.iter().min_by_key(|r| (r.0.abs_diff(procs), r.0))?;
        Some(crate::cost::interpolate(sizes, bytes, |r| r.0, |r| r.1).max(0.0))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelSpec {
    table: Option<Spanned<String>>,
    latency: Option<Spanned<toml::Value>>,
    bandwidth: Option<Spanned<toml::Value>>,
    local_latency: Option<Spanned<toml::Value>>,
    local_bandwidth: Option<Spanned<toml::Value>>,
    local: Option<Spanned<String>>,
    node: Option<Spanned<String>>,
    links_in: Option<Spanned<i64>>,
    links_out: Option<Spanned<i64>>,
    buses: Option<Spanned<i64>>,
    collectives: Option<Spanned<String>>,
    overhead: Option<Spanned<toml::Value>>,
    connect: Option<Spanned<toml::Value>>,
}

/// An error's message with what caused it.
fn with_source(e: &Error) -> String {
    match e {
        Error::Format(f) => f.to_string(),
        other => other.to_string(),
    }
}

fn line_at(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// A duration in nanoseconds: a number of nanoseconds, or a string as the text form
/// writes times (`1500`, `2us`, `1.5ms`, `2s`).
pub fn parse_duration(v: &toml::Value) -> std::result::Result<f64, String> {
    let t = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) => spoor_format::text::parse_duration(s).ok_or_else(|| {
            format!("`{s}`: unknown unit or form (expected nanoseconds, or a number with ns, us, ms or s)")
        })? as f64,
        other => return Err(format!("expected a number or a string, found {}", other.type_str())),
    };
    if !t.is_finite() || t < 0.0 {
        return Err(format!("{t} ns: expected a duration of at least 0"));
    }
    Ok(t)
}

/// A bandwidth in bytes a nanosecond: bytes a second, or a string with a unit, or `inf`.
pub fn parse_bandwidth(v: &toml::Value) -> std::result::Result<f64, String> {
    // Longest first: `B/s` ends the others.
    const UNITS: [(&str, f64); 7] = [
        ("Kbit/s", 1e3 / 8.0),
        ("Mbit/s", 1e6 / 8.0),
        ("Gbit/s", 1e9 / 8.0),
        ("KB/s", 1e3),
        ("MB/s", 1e6),
        ("GB/s", 1e9),
        ("B/s", 1.0),
    ];
    let b = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) if s.trim() == "inf" => return Ok(f64::INFINITY),
        toml::Value::String(s) => {
            let s = s.trim();
            let (n, scale) =
                UNITS.iter().find_map(|&(u, k)| s.strip_suffix(u).map(|n| (n, k))).unwrap_or((s, 1.0));
            n.trim().parse::<f64>().map_err(|_| {
                format!("`{s}`: unknown unit or form (expected a number with B/s, KB/s, MB/s, GB/s, Kbit/s, Mbit/s or Gbit/s)")
            })? * scale
        }
        other => return Err(format!("expected a number or a string, found {}", other.type_str())),
    };
    if !b.is_finite() || b <= 0.0 {
        return Err(format!("{b} bytes a second: expected a bandwidth above 0 (or \"inf\")"));
    }
    Ok(b / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spoor_model::Silent;

    fn parse(text: &str) -> Result<Network> {
        Network::parse("m.toml", text, std::path::Path::new("."), &Silent)
    }

    #[test]
    fn reads_a_model() {
        let n = parse(
            "latency = \"2us\"\nbandwidth = \"1GB/s\"\nlocal = \"never\"\nlinks_in = 1\nlinks_out = 2\n\
             collectives = \"linear\"\noverhead = 500\nconnect = \"10ms\"\n",
        )
        .unwrap();
        assert_eq!(n.connect(), 1e7);
        assert!(n.per_send());
        assert_eq!(n.time(1000, false), 3000.0);
        assert_eq!(n.wire(1000, false), 1000.0);
        assert_eq!(n.time(1000, true), 0.0);
        assert_eq!((n.links_in, n.links_out, n.buses), (Some(1), Some(2), None));
        assert_eq!(n.local, Some(Local::Never));
        assert_eq!(n.overhead_ns, 500);
        assert!(n.contention());
        // Linear: 2 phases × 3 steps × t(1000) for an allreduce of 4.
        assert_eq!(n.collective(CollOp::Allreduce.code() + 1, 4, 1000), Some(18000.0));
        assert_eq!(parse_bandwidth(&"20Mbit/s".into()).unwrap(), 2.5e6 / 1e9);
    }

    #[test]
    fn tree_steps_and_phases() {
        let n = parse("latency = 100\n").unwrap();
        assert_eq!(n.collective(CollOp::Bcast.code() + 1, 8, 0), Some(300.0));
        assert_eq!(n.collective(CollOp::Barrier.code() + 1, 5, 0), Some(600.0));
        assert_eq!(n.collective(CollOp::Reduce.code() + 1, 1, 0), Some(0.0));
        assert_eq!(n.collective(0, 2, 0), Some(200.0));
        assert!(!n.contention());
        assert_eq!(Network::ideal().collective(1, 64, 1 << 20), Some(0.0));
    }

    #[test]
    fn refuses_what_cannot_be() {
        for (text, line, what) in [
            ("latency = 1\nbandwith = 5\n", 2, "unknown field"),
            ("bandwidth = -5\n", 1, "above 0"),
            ("\nlinks_in = 0\n", 2, "at least 1"),
            ("buses = 0\n", 1, "at least 1"),
            ("latency = \"-3us\"\n", 1, "at least 0"),
            ("latency = 1\nconnect = \"-1ms\"\n", 2, "at least 0"),
            ("latency = \"3 parsecs\"\n", 1, "unknown unit"),
            ("bandwidth = \"3 furlongs\"\n", 1, "unknown unit"),
            ("table = \"t.csv\"\nlatency = 1\n", 2, "not both"),
            ("node = \"rack\"\n", 1, "machine or processor"),
            ("local = \"near\"\n", 1, "processor, machine, never"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains("m.toml") && e.contains(&format!("line {line}")) && e.contains(what),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn collective_table() {
        let t = CollTable::parse(
            "c.csv",
            "# measured\nop,procs,bytes,ns\nallreduce,2,8,1000\nallreduce,2,1008,2000\nallreduce,8,8,5000\n",
        )
        .unwrap();
        assert_eq!(t.time(CollOp::Allreduce, 2, 508), Some(1500.0));
        assert_eq!(t.time(CollOp::Allreduce, 3, 8), Some(1000.0));
        assert_eq!(t.time(CollOp::Allreduce, 6, 0), Some(5000.0));
        assert_eq!(t.time(CollOp::Bcast, 2, 8), None);
        for (text, what) in [
            ("op,procs,bytes,ns\nallsum,2,8,1\n", "line 2"),
            ("op,procs,bytes,ns\nbcast,0,8,1\n", "at least 1"),
            ("op,procs,bytes,ns\nbcast,2,8,-1\n", "non-negative"),
            ("op,procs,ns\n", "header"),
        ] {
            let e = CollTable::parse("c.csv", text).unwrap_err().to_string();
            assert!(e.contains("c.csv") && e.contains(what), "{e}");
        }
    }
}
