//! A collective table (formats/network.md, "Collectives") measured with real MPI: a small
//! C program (collectives.c, embedded) compiled with `mpicc -O2` in a temporary folder
//! and run with `mpirun --oversubscribe -np P` for each process count.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

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

/// A program on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// A folder removed when dropped, whatever happened meanwhile.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> io::Result<TempDir> {
        let base = std::env::temp_dir();
        for k in 0..100u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let p = base.join(format!("spoor-calibrate-{}-{nanos}-{k}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(TempDir(p)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", p.display()))),
            }
        }
        Err(io::Error::other(format!("{}: no free name for a temporary folder", base.display())))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// mpicc and mpirun from PATH, or an error saying what to install.
pub fn find_mpi() -> io::Result<(PathBuf, PathBuf)> {
    let need = |name: &str| {
        on_path(name).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "--collectives needs MPI: {name} not found on PATH (Debian: apt-get install libopenmpi-dev openmpi-bin)"
                ),
            )
        })
    };
    Ok((need("mpicc")?, need("mpirun")?))
}

/// The last lines of a program's output, for an error.
fn tail(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

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
    let (mpicc, mpirun) = find_mpi()?;
    let dir = TempDir::new()?;
    let src = dir.0.join("collectives.c");
    std::fs::write(&src, SOURCE)?;
    let exe = dir.0.join("collectives");
    let out = Command::new(&mpicc).arg("-O2").arg("-o").arg(&exe).arg(&src).stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{} -O2 failed ({}):\n{}",
            mpicc.display(),
            out.status,
            tail(&out.stderr)
        )));
    }
    let mut m = Measured::default();
    for &p in procs {
        let mut c = Command::new(&mpirun);
        // Open MPI refuses root without this (containers, CI).
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            c.arg("--allow-run-as-root");
        }
        c.args(["--oversubscribe", "-np", &p.to_string()]).arg(&exe).arg(reps.max(1).to_string());
        c.args(sizes.iter().map(|s| s.to_string()));
        let out = c.stdin(Stdio::null()).output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "{} -np {p} failed ({}):\n{}",
                mpirun.display(),
                out.status,
                tail(&[out.stderr.as_slice(), &out.stdout].concat())
            )));
        }
        parse(&out.stdout, &mut m).map_err(|e| io::Error::other(format!("mpirun -np {p}: {e}")))?;
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

    #[test]
    fn the_temporary_folder_goes_away() {
        let p = {
            let d = TempDir::new().unwrap();
            std::fs::write(d.0.join("x"), "y").unwrap();
            d.0.clone()
        };
        assert!(!p.exists());
    }
}
