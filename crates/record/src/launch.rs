//! What `spoor-record -o DIR -- PROGRAM` does before it becomes the program: check that
//! the output directory can be written (an error before the program starts), find the
//! preload library, and build the environment the library reads.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// The preload library's file name.
pub const PRELOAD_NAME: &str = "libspoor_preload.so";

/// Creates `dir` if needed and checks that a file can be created in it; returns its
/// absolute path (the program may change its working directory).
pub fn check_output_dir(dir: &Path) -> io::Result<PathBuf> {
    let fail = |e: io::Error, what: &str| io::Error::new(e.kind(), format!("{}: {what}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(e, "cannot create the output directory"))?;
    let abs = dir.canonicalize().map_err(|e| fail(e, "cannot resolve the output directory"))?;
    let probe = abs.join(format!(".spoor-record-probe.{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|e| fail(e, "the output directory is not writable"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(abs)
}

/// The preload library: `$SPOOR_PRELOAD`, else next to `exe`, in `deps/` beside it (a
/// cargo target directory, where both may exist: the newer wins), or in `../lib` and
/// `../lib/spoor` from it.
pub fn find_preload(exe: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPOOR_PRELOAD") {
        return Some(PathBuf::from(p));
    }
    let dir = exe.parent()?;
    [
        dir.join(PRELOAD_NAME),
        dir.join("deps").join(PRELOAD_NAME),
        dir.join("../lib").join(PRELOAD_NAME),
        dir.join("../lib/spoor").join(PRELOAD_NAME),
    ]
    .into_iter()
    .filter_map(|p| Some((std::fs::metadata(&p).ok().filter(|m| m.is_file())?.modified().ok()?, p)))
    .max_by_key(|(t, _)| *t)
    .map(|(_, p)| p)
}

/// The variables to set for the program: LD_PRELOAD (the library first, the program's
/// own preloads kept after it) and what the library reads.
pub fn environment(dir: &Path, app: Option<&str>, preload: &Path, pid: u32) -> Vec<(String, OsString)> {
    let mut pre = OsString::from(preload);
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
        pre.push(":");
        pre.push(old);
    }
    let mut env = vec![
        ("LD_PRELOAD".to_owned(), pre),
        ("SPOOR_RECORD_DIR".to_owned(), dir.as_os_str().to_owned()),
        ("SPOOR_RECORD_PID".to_owned(), pid.to_string().into()),
    ];
    if let Some(a) = app {
        env.push(("SPOOR_RECORD_APP".to_owned(), a.into()));
    }
    env
}
