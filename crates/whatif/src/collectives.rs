//! A collective table (formats/network.md, "Collectives") measured with real MPI: a small
//! C program (collectives.c, embedded) compiled with `mpicc -O2` in a temporary folder
//! and run with `mpirun --oversubscribe -np P` for each process count (crate::mpi).

use crate::mpi::{compile_and_run, Run};
use std::io::{self, Write};

/// The program's source.
pub const SOURCE: &str = include_str!("collectives.c");

/// The operations measured, in the program's order.
pub const OPS: [&str; 8] =
    ["barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall"];

/// Sizes measured by default: 8 bytes, then powers of 4 up to 64 KiB.
pub const SIZES: [usize; 7] = [8, 64, 256, 1024, 4096, 16384, 65536];

/// Process counts measured by default.
pub const PROCS: [usize; 2] = [2, 4];

/// One row: operation, process count, bytes, nanoseconds.
pub type Row = (String, usize, u64, f64);

/// What a measurement found besides its rows.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub rows: Vec<Row>,
    /// The MPI library's version, as it says it (its first line).
    pub mpi_version: Option<String>,
}

/// Measures every operation of [`OPS`] for each process count of `procs` and size of
/// `sizes` (bytes the largest end sends or receives), the median of `reps` repetitions.
pub fn measure(procs: &[usize], sizes: &[usize], reps: usize) -> io::Result<Measured> {
    let runs: Vec<Run> = procs
        .iter()
        .map(|p| Run {
            mpirun: vec!["--oversubscribe".into(), "-np".into(), p.to_string()],
            args: std::iter::once(reps.max(1)).chain(sizes.iter().copied()).map(|n| n.to_string()).collect(),
        })
        .collect();
    let outs = compile_and_run("--collectives", SOURCE, "collectives", &runs)?;
    let mut m = Measured::default();
    for (p, out) in procs.iter().zip(&outs) {
        parse(out, &mut m).map_err(|e| io::Error::other(format!("mpirun -np {p}: {e}")))?;
    }
    Ok(m)
}

/// Reads the program's output into `m`.
fn parse(stdout: &[u8], m: &mut Measured) -> Result<(), String> {
    let s = String::from_utf8_lossy(stdout);
    let mut n = 0;
    for line in s.lines() {
        if let Some(v) = line.strip_prefix("#mpi ") {
            m.mpi_version.get_or_insert_with(|| v.trim().to_owned());
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let row = match f[..] {
            [op, p, b, ns] if OPS.contains(&op) => {
                (|| Some((op.to_owned(), p.parse().ok()?, b.parse().ok()?, ns.parse().ok()?)))()
            }
            _ => None,
        };
        match row {
            Some(r) => {
                m.rows.push(r);
                n += 1;
            }
            // Open MPI may write its own lines (warnings) on standard output.
            None => continue,
        }
    }
    if n == 0 {
        return Err("the program wrote no rows".into());
    }
    Ok(())
}

/// Writes the collective table (formats/network.md), comment lines first.
pub fn write_table(out: &mut impl Write, comments: &[String], rows: &[Row]) -> io::Result<()> {
    for c in comments {
        writeln!(out, "# {c}")?;
    }
    writeln!(out, "op,procs,bytes,ns")?;
    for (op, p, b, ns) in rows {
        writeln!(out, "{op},{p},{b},{}", ns.round())?;
    }
    Ok(())
}

/// The host's name.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_and_other_lines_skipped() {
        let mut m = Measured::default();
        parse(b"#mpi Open MPI v4.1.4, package: x\nbarrier,2,0,1500\nsome warning\nbcast,2,8,900\n", &mut m)
            .unwrap();
        assert_eq!(m.mpi_version.as_deref(), Some("Open MPI v4.1.4, package: x"));
        assert_eq!(m.rows, [("barrier".to_owned(), 2, 0, 1500.0), ("bcast".to_owned(), 2, 8, 900.0)]);
        assert!(parse(b"nothing\n", &mut m).is_err());
    }
}
