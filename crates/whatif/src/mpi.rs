//! Real MPI for spoor-calibrate's `--collectives` and `--mpi`: an embedded C program
//! compiled with `mpicc -O2` in a temporary folder (removed on drop) and run with
//! `mpirun`, once for each set of arguments.

use std::io;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A program on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// A folder removed when dropped, whatever happened meanwhile.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new() -> io::Result<TempDir> {
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

/// mpicc and mpirun from PATH, or an error saying that `option` needs them and what to
/// install.
pub fn find_mpi(option: &str) -> io::Result<(PathBuf, PathBuf)> {
    let need = |name: &str| {
        on_path(name).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{option} needs MPI: {name} not found on PATH (Debian: apt-get install libopenmpi-dev openmpi-bin)"
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

/// One run of the program: mpirun's options (before the program) and the program's
/// arguments.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub mpirun: Vec<String>,
    pub args: Vec<String>,
}

/// Compiles `source` as `name`.c with `mpicc -O2` in a temporary folder and runs it with
/// mpirun once for each of `runs` (adding `--allow-run-as-root` when root), in that
/// folder (Open MPI's `--preload-binary` runs `./NAME` on this host too), returning
/// each run's standard output. `option` names the mode for a missing MPI.
pub fn compile_and_run(option: &str, source: &str, name: &str, runs: &[Run]) -> io::Result<Vec<Vec<u8>>> {
    let (mpicc, mpirun) = find_mpi(option)?;
    let dir = TempDir::new()?;
    let src = dir.0.join(format!("{name}.c"));
    std::fs::write(&src, source)?;
    let exe = dir.0.join(name);
    let out = Command::new(&mpicc).arg("-O2").arg("-o").arg(&exe).arg(&src).stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{} -O2 failed ({}):\n{}",
            mpicc.display(),
            out.status,
            tail(&out.stderr)
        )));
    }
    let mut outs = Vec::with_capacity(runs.len());
    for run in runs {
        let mut c = Command::new(&mpirun);
        // Open MPI refuses root without this (containers, CI).
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            c.arg("--allow-run-as-root");
        }
        // Run in the folder, so relative to it whatever TMPDIR is.
        c.args(&run.mpirun).arg(format!("./{name}")).args(&run.args);
        let out = c.current_dir(&dir.0).stdin(Stdio::null()).output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "{} {} failed ({}):\n{}",
                mpirun.display(),
                run.mpirun.join(" "),
                out.status,
                tail(&[out.stderr.as_slice(), &out.stdout].concat())
            )));
        }
        outs.push(out.stdout);
    }
    Ok(outs)
}

#[cfg(test)]
mod tests {
    use super::*;

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
