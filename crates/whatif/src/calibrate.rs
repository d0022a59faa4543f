//! Communication-cost tables (formats/nettable.md) for NF: measured on this host by
//! ping-pong, half the round trip for each message size (the LBF paper's lookup
//! table), or fitted from the message arcs of a trace; or measured with real MPI
//! (pingpong.c, embedded: MPI_Send/MPI_Recv between two ranks, crate::mpi).

use spoor_graph::pag::{ArcKind, Pag};
use spoor_graph::Local;
use std::io::{self, Read, Write};
use std::time::Instant;

/// Message sizes measured by default.
pub const SIZES: [usize; 9] = [1, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576];

/// One row: bytes, local ns, remote ns.
pub type Row = (u64, f64, f64);

/// Half the median round trip of `reps` ping-pongs of each size over a connected pair
/// of streams: `a` is this side, the other end echoes on its own thread.
fn ping_pong<S: Read + Write + Send + 'static>(
    mut a: S,
    mut b: S,
    sizes: &[usize],
    reps: usize,
) -> io::Result<Vec<f64>> {
    let max = sizes.iter().copied().max().unwrap_or(1);
    let plan: Vec<usize> = sizes.to_vec();
    let echo = std::thread::spawn(move || -> io::Result<()> {
        let mut buf = vec![0u8; max];
        for &n in &plan {
            for _ in 0..reps + reps / 4 + 1 {
                b.read_exact(&mut buf[..n])?;
                b.write_all(&buf[..n])?;
            }
        }
        Ok(())
    });
    let mut buf = vec![7u8; max];
    let mut out = Vec::new();
    for &n in sizes {
        let mut times = Vec::with_capacity(reps);
        // A few warm-up round trips first.
        for r in 0..reps + reps / 4 + 1 {
            let t = Instant::now();
            a.write_all(&buf[..n])?;
            a.read_exact(&mut buf[..n])?;
            if r > reps / 4 {
                times.push(t.elapsed().as_nanos() as f64 / 2.0);
            }
        }
        times.sort_by(f64::total_cmp);
        out.push(times[times.len() / 2]);
    }
    echo.join().map_err(|_| io::Error::other("the echo thread failed"))??;
    Ok(out)
}

/// Measures a table on this host: local over a UNIX socket pair, remote over TCP on
/// loopback, `reps` round trips per size; made monotone (see [`monotone`]), with notes.
pub fn measure(sizes: &[usize], reps: usize) -> io::Result<(Vec<Row>, Vec<String>)> {
    let reps = reps.max(1);
    let (a, b) = std::os::unix::net::UnixStream::pair()?;
    let local = ping_pong(a, b, sizes, reps)?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let client = std::net::TcpStream::connect(addr)?;
    let (server, _) = listener.accept()?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let remote = ping_pong(client, server, sizes, reps)?;
    let mut rows: Vec<Row> =
        sizes.iter().zip(local.iter().zip(&remote)).map(|(&n, (&l, &r))| (n as u64, l, r)).collect();
    let notes = monotone(&mut rows);
    Ok((rows, notes))
}

/// The ping-pong program of `--mpi`.
pub const MPI_SOURCE: &str = include_str!("pingpong.c");

/// A table measured with real MPI and what its runs said of themselves.
#[derive(Clone, Debug, Default)]
pub struct MpiMeasured {
    /// Made monotone (see [`monotone`]).
    pub rows: Vec<Row>,
    /// [`monotone`]'s notes.
    pub notes: Vec<String>,
    /// The MPI library's version, as it says it (its first line).
    pub mpi_version: Option<String>,
    /// Warm-up round trips before each size's timed ones.
    pub warmups: usize,
    /// Where ranks 0 and 1 ran (MPI_Get_processor_name) for the local column.
    pub local_hosts: (String, String),
    /// Where they ran for the remote column; None without hosts (the remote column is
    /// then the local one).
    pub remote_hosts: Option<(String, String)>,
    /// With hosts: the median of [`CONNECT_RUNS`] runs' first round trips less a later
    /// one of the same size, ns (at least 0): what the first remote message waits for
    /// the connection (formats/network.md, `connect`).
    pub connect: Option<f64>,
}

/// One run of the ping-pong program: version, the two ranks' hosts, a time per size.
#[derive(Debug, Default, PartialEq)]
struct PingPong {
    version: Option<String>,
    hosts: (String, String),
    /// The very first round trip, ns.
    first: Option<f64>,
    ns: Vec<f64>,
}

/// Reads the ping-pong program's output: a row for each of `sizes`, in order.
fn parse_pingpong(stdout: &[u8], sizes: &[usize]) -> Result<PingPong, String> {
    let s = String::from_utf8_lossy(stdout);
    let mut p = PingPong::default();
    for line in s.lines() {
        if let Some(v) = line.strip_prefix("#mpi ") {
            p.version.get_or_insert_with(|| v.trim().to_owned());
        } else if let Some(h) = line.strip_prefix("#hosts ") {
            let mut h = h.split_whitespace().map(str::to_owned);
            p.hosts = (h.next().unwrap_or_default(), h.next().unwrap_or_default());
        } else if let Some(f) = line.strip_prefix("#first ") {
            p.first = Some(f.trim().parse().map_err(|_| format!("unexpected row: {line}"))?);
        } else if let Some(r) = line.strip_prefix("pingpong,") {
            let row = r
                .split_once(',')
                .and_then(|(b, ns)| Some((b.parse::<usize>().ok()?, ns.parse::<f64>().ok()?)));
            match row {
                Some((b, ns)) if sizes.get(p.ns.len()) == Some(&b) => p.ns.push(ns),
                _ => return Err(format!("unexpected row: {line}")),
            }
        }
        // Open MPI may write its own lines (warnings) on standard output.
    }
    if p.ns.len() != sizes.len() {
        return Err(format!("the program wrote {} rows for {} sizes", p.ns.len(), sizes.len()));
    }
    Ok(p)
}

/// Remote runs whose first round trip gives the connection time (their median).
pub const CONNECT_RUNS: usize = 5;

/// Measures a table with real MPI: an MPI_Send/MPI_Recv ping-pong between ranks 0 and 1,
/// half the median of `reps` round trips per size after `reps / 4 + 1` warm-ups (and a
/// pass of as many over every size first); the local column
/// with both ranks on this host (`mpirun -np 2`), the remote one with rank 0 on
/// `hosts.0` and rank 1 on `hosts.1` (`mpirun -np 2 --host A,B --preload-binary`), or,
/// without hosts, the local column again. Made monotone, with notes.
pub fn measure_mpi(sizes: &[usize], reps: usize, hosts: Option<(&str, &str)>) -> io::Result<MpiMeasured> {
    use crate::mpi::{compile_and_run, Run};
    let reps = reps.max(1);
    let warmups = reps / 4 + 1;
    let args: Vec<String> =
        [reps, warmups].into_iter().chain(sizes.iter().copied()).map(|n| n.to_string()).collect();
    let mut runs =
        vec![Run { mpirun: vec!["--oversubscribe".into(), "-np".into(), "2".into()], args: args.clone() }];
    if let Some((a, b)) = hosts {
        // The program's folder is on this host only: Open MPI copies it to the others.
        let mpirun =
            ["-np", "2", "--host", &format!("{a},{b}"), "--preload-binary"].map(str::to_owned).to_vec();
        // A connection's time varies from run to run (Open MPI looks for new connections
        // only every few milliseconds): more runs that each connect once and stop.
        let connect_only: Vec<String> = ["1".to_owned(), "0".to_owned(), sizes[0].to_string()].into();
        for _ in 1..CONNECT_RUNS {
            runs.push(Run { mpirun: mpirun.clone(), args: connect_only.clone() });
        }
        runs.push(Run { mpirun, args });
    }
    let outs = compile_and_run("--mpi", MPI_SOURCE, "pingpong", &runs)?;
    let mut parsed = Vec::new();
    for (i, (run, out)) in runs.iter().zip(&outs).enumerate() {
        let sizes = if i == 0 || i + 1 == runs.len() { sizes } else { &sizes[..1] };
        let p = parse_pingpong(out, sizes)
            .map_err(|e| io::Error::other(format!("mpirun {}: {e}", run.mpirun.join(" "))))?;
        parsed.push(p);
    }
    let local = parsed.remove(0);
    let remote = parsed.pop();
    let mut firsts: Vec<f64> = parsed.iter().chain(&remote).filter_map(|p| p.first).collect();
    let connect = match (crate::netfit::median(&mut firsts), remote.as_ref().and_then(|r| r.ns.first())) {
        (Some(first), Some(&half)) => Some((first - 2.0 * half).max(0.0)),
        _ => None,
    };
    let r_ns = remote.as_ref().map_or(&local.ns, |r| &r.ns);
    let mut rows: Vec<Row> =
        sizes.iter().zip(local.ns.iter().zip(r_ns)).map(|(&n, (&l, &r))| (n as u64, l, r)).collect();
    let notes = monotone(&mut rows);
    Ok(MpiMeasured {
        rows,
        notes,
        mpi_version: local.version,
        warmups,
        local_hosts: local.hosts,
        remote_hosts: remote.map(|r| r.hosts),
        connect,
    })
}

/// Raises each column to the running maximum down the sizes and says where. More bytes
/// never take less time (the larger message could be sent as the smaller plus the
/// rest), so a falling median is noise of the measurement or of a sparse size class,
/// and a cost table that falls would predict it (readers warn about one, NetTable::parse).
pub fn monotone(rows: &mut [Row]) -> Vec<String> {
    let mut notes = Vec::new();
    for k in 1..rows.len() {
        let (prev, row) = (rows[k - 1], &mut rows[k]);
        for (col, p, v) in [("local", prev.1, &mut row.1), ("remote", prev.2, &mut row.2)] {
            // Compared as written (whole nanoseconds), so equal after rounding is no rise.
            if v.round() < p.round() {
                notes.push(format!(
                    "{col} time at {} bytes raised from {} ns to {} ns (less than at fewer bytes)",
                    row.0,
                    v.round(),
                    p.round()
                ));
                *v = p;
            }
        }
    }
    notes
}

/// A size class's message sizes, local and remote transfer times.
type Class = (Vec<u64>, Vec<i64>, Vec<i64>);

/// Fits a table from the message arcs of a PAG: per size class (powers of two), the
/// median measured transfer time, local when both ends are on one machine. A column
/// without any message of a class is interpolated from its neighbours (or, when it has
/// no messages at all, copied from the other column). Returns the rows and notes.
pub fn fit(pag: &Pag) -> (Vec<Row>, Vec<String>) {
    fit_with(pag, Local::Machine)
}

/// [`fit`], local messages being those `local` says (formats/nettable.md, "Local").
pub fn fit_with(pag: &Pag, local: Local) -> (Vec<Row>, Vec<String>) {
    use std::collections::BTreeMap;
    // class -> (sizes, local times, remote times)
    let mut classes: BTreeMap<u32, Class> = BTreeMap::new();
    for a in 0..pag.arcs() {
        if pag.arc_kind[a] != ArcKind::Message {
            continue;
        }
        let (f, t) = (pag.loc[pag.arc_from[a] as usize], pag.loc[pag.arc_to[a] as usize]);
        let is_local = pag.is_local(local, f, t);
        let bytes = pag.arc_bytes[a];
        let class = 64 - bytes.leading_zeros();
        let e = classes.entry(class).or_default();
        e.0.push(bytes);
        if is_local {
            e.1.push(pag.arc_weight[a]);
        } else {
            e.2.push(pag.arc_weight[a]);
        }
    }
    let median = |v: &mut Vec<i64>| -> Option<f64> {
        if v.is_empty() {
            None
        } else {
            v.sort_unstable();
            Some(v[v.len() / 2] as f64)
        }
    };
    let mut rows: Vec<(u64, Option<f64>, Option<f64>)> = Vec::new();
    let mut notes = Vec::new();
    let (mut nl, mut nr) = (0usize, 0usize);
    for (_, (mut sizes, mut l, mut r)) in classes {
        nl += l.len();
        nr += r.len();
        sizes.sort_unstable();
        rows.push((sizes[sizes.len() / 2], median(&mut l), median(&mut r)));
    }
    notes.push(format!("{nl} local and {nr} remote messages in {} size classes", rows.len()));
    let fill = |rows: &mut Vec<(u64, Option<f64>, Option<f64>)>, col: usize| {
        let get = |r: &(u64, Option<f64>, Option<f64>)| if col == 0 { r.1 } else { r.2 };
        let known: Vec<(u64, f64)> = rows.iter().filter_map(|r| get(r).map(|v| (r.0, v))).collect();
        for r in rows.iter_mut() {
            if get(r).is_some() {
                continue;
            }
            let v = if known.is_empty() {
                None
            } else {
                let i = known.partition_point(|k| k.0 <= r.0);
                Some(if i == 0 {
                    known[0].1
                } else if i == known.len() {
                    known[i - 1].1
                } else {
                    let (a, b) = (known[i - 1], known[i]);
                    a.1 + (b.1 - a.1) * (r.0 - a.0) as f64 / (b.0 - a.0) as f64
                })
            };
            if col == 0 {
                r.1 = v;
            } else {
                r.2 = v;
            }
        }
    };
    fill(&mut rows, 0);
    fill(&mut rows, 1);
    if nl == 0 && nr > 0 {
        notes.push("no local messages: the local column copies the remote one".into());
    }
    if nr == 0 && nl > 0 {
        notes.push("no remote messages: the remote column copies the local one".into());
    }
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(b, l, r)| {
            let (l, r) = match (l, r) {
                (Some(l), Some(r)) => (l, r),
                (Some(l), None) => (l, l),
                (None, Some(r)) => (r, r),
                (None, None) => (0.0, 0.0),
            };
            (b, l, r)
        })
        .collect();
    notes.extend(monotone(&mut rows));
    (rows, notes)
}

/// Writes the network model (formats/network.md) of a table measured with real MPI:
/// the table file `table` (named relative to the model, which sits beside it), local
/// meaning the same machine, and the connection time when it was measured.
pub fn write_mpi_model(
    out: &mut impl Write,
    comments: &[String],
    table: &std::path::Path,
    connect: Option<f64>,
) -> io::Result<()> {
    for c in comments {
        writeln!(out, "# {c}")?;
    }
    let name = table.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let name: String = toml::Value::String(name.into_owned()).to_string();
    writeln!(out, "table = {name}")?;
    writeln!(out, "local = \"machine\"")?;
    if let Some(ns) = connect {
        writeln!(out, "connect = {}", ns.round() as i64)?;
    }
    Ok(())
}

/// Writes a table in the form of formats/nettable.md, with comment lines first.
pub fn write_table(out: &mut impl Write, comments: &[String], rows: &[Row]) -> io::Result<()> {
    for c in comments {
        writeln!(out, "# {c}")?;
    }
    writeln!(out, "bytes,local_ns,remote_ns")?;
    for &(b, l, r) in rows {
        writeln!(out, "{b},{},{}", l.round(), r.round())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{monotone, parse_pingpong, PingPong};

    #[test]
    fn pingpong_output_is_read_and_other_lines_skipped() {
        let out = b"#mpi Open MPI v4.1.4, package: x\n#hosts a b\n#first 10361.0\nsome warning\npingpong,1,180.5\npingpong,64,200.0\n";
        let p = parse_pingpong(out, &[1, 64]).unwrap();
        let want = PingPong {
            version: Some("Open MPI v4.1.4, package: x".into()),
            hosts: ("a".into(), "b".into()),
            first: Some(10361.0),
            ns: vec![180.5, 200.0],
        };
        assert_eq!(p, want);
        assert!(parse_pingpong(out, &[1, 64, 256]).is_err());
        assert!(parse_pingpong(out, &[1, 65]).is_err());
    }

    #[test]
    fn monotone_raises_falling_times_to_the_running_maximum() {
        let mut rows =
            vec![(1, 5000.0, 6000.0), (64, 4900.0, 6500.0), (256, 5200.0, 6400.0), (1024, 5000.4, 7000.0)];
        let notes = monotone(&mut rows);
        assert_eq!(
            rows,
            [(1, 5000.0, 6000.0), (64, 5000.0, 6500.0), (256, 5200.0, 6500.0), (1024, 5200.0, 7000.0)]
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert_eq!(
            notes[0],
            "local time at 64 bytes raised from 4900 ns to 5000 ns (less than at fewer bytes)"
        );
        // Equal once rounded to whole nanoseconds, as the table is written: no note.
        let mut rows = vec![(1, 5000.4, 1.0), (2, 4999.6, 1.0)];
        assert!(monotone(&mut rows).is_empty());
    }
}
