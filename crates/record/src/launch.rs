//! What `spoor-record -o DIR -- PROGRAM` does before it becomes the program: check that
//! the output directory can be written (an error before the program starts), find the
//! preload library, refuse an MPI program the library cannot record, and build the
//! environment the library reads.

use object::elf::{FileHeader32, FileHeader64, DT_NEEDED};
use object::read::elf::{Dyn, FileHeader};
use object::{Endianness, Object, ObjectSymbol, ReadCache, ReadRef};
use std::ffi::{OsStr, OsString};
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
/// `../lib/spoor` from it; else the copy built into `exe` ([`embedded_preload`]).
pub fn find_preload(exe: &Path, embedded: &[u8]) -> io::Result<PathBuf> {
    if let Some(p) = std::env::var_os("SPOOR_PRELOAD") {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = preload_beside(exe) {
        return Ok(p);
    }
    if embedded.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "cannot find {PRELOAD_NAME} next to {} (build it with `cargo build -p spoor-record-preload`, \
                 or set SPOOR_PRELOAD)",
                exe.display()
            ),
        ));
    }
    embedded_preload(embedded, &cache_dir())
}

fn preload_beside(exe: &Path) -> Option<PathBuf> {
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

/// Where the library built into spoor-record is written out: `$XDG_CACHE_HOME/spoor`,
/// `~/.cache/spoor`, else `spoor-UID` in the temporary directory.
fn cache_dir() -> PathBuf {
    let home = |v: &str| std::env::var_os(v).filter(|d| !d.is_empty()).map(PathBuf::from);
    home("XDG_CACHE_HOME")
        .or_else(|| home("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("spoor"))
        // SAFETY: getuid has no preconditions.
        .unwrap_or_else(|| std::env::temp_dir().join(format!("spoor-{}", unsafe { libc::getuid() })))
}

/// The library built into spoor-record (`cargo install` installs only executables), as a
/// file in `dir` named by its length and a hash of it: written once (to a temporary file
/// then renamed, so that ranks starting together never see half a file; named by host and
/// pid, as `dir` may be shared by machines), and used again while its bytes are the same.
pub fn embedded_preload(bytes: &[u8], dir: &Path) -> io::Result<PathBuf> {
    let path = dir.join(format!("libspoor_preload-{}.so", fingerprint(bytes)));
    write_once(bytes, &path, "the preload library")?;
    Ok(path)
}

/// The header of the recording library's C API (phase marks; crates/record-preload/c).
pub const HEADER_NAME: &str = "spoor.h";

/// The directory holding spoor.h, for `mpicc -I$(spoor-record --include-dir)`: beside
/// `$SPOOR_PRELOAD` or `exe`, or in `../include` or `../include/spoor` from either (an
/// installed tree); else the copy built into `exe` ([`embedded_header`]), written out to
/// the directory the built-in library goes to.
pub fn find_include_dir(exe: &Path, embedded: &[u8]) -> io::Result<PathBuf> {
    let preload = std::env::var_os("SPOOR_PRELOAD").map(PathBuf::from);
    let beside = [preload.as_deref(), Some(exe)].into_iter().flatten().filter_map(Path::parent);
    let found = beside
        .flat_map(|d| [d.to_path_buf(), d.join("../include"), d.join("../include/spoor")])
        .find(|d| d.join(HEADER_NAME).is_file());
    match found {
        Some(d) => Ok(d.canonicalize().unwrap_or(d)),
        None => embedded_header(embedded, &cache_dir()),
    }
}

/// The header built into spoor-record, as `include-LEN-HASH/spoor.h` in `dir` (written
/// once, as [`embedded_preload`] writes the library); returns its directory.
pub fn embedded_header(bytes: &[u8], dir: &Path) -> io::Result<PathBuf> {
    let include = dir.join(format!("include-{}", fingerprint(bytes)));
    write_once(bytes, &include.join(HEADER_NAME), "the header")?;
    Ok(include)
}

/// The length of `bytes` and a hash of them, in hex: what tells builds' files apart.
fn fingerprint(bytes: &[u8]) -> String {
    // FNV-1a over 4096 samples: enough to tell builds apart; the bytes are compared anyway.
    let step = bytes.len().div_ceil(4096).max(1);
    let hash = bytes
        .iter()
        .step_by(step)
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    format!("{:x}-{hash:016x}", bytes.len())
}

/// Writes `bytes` to `path` unless it holds them already: to a temporary file beside it
/// (named by host and pid), then renamed.
fn write_once(bytes: &[u8], path: &Path, what: &str) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let fail =
        |e: io::Error, doing: &str| io::Error::new(e.kind(), format!("{}: {doing}: {e}", dir.display()));
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(e, &format!("cannot create the directory for {what}")))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.{}", crate::hostname(), std::process::id()));
    std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e, &format!("cannot write {what}"))
    })
}

/// The file `execvp` would run for `program`: itself if it names a path, else the first
/// executable file of that name in PATH.
pub fn resolve_program(program: &OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(p)).find(|c| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(c).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// The MPI library `program` is linked to (its DT_NEEDED entry named `libmpi*`), if it is
/// an ELF file linked to one.
pub fn linked_mpi(program: &Path) -> Option<String> {
    linked(program, "libmpi")
}

/// The PVM library `program` is linked to (`libpvm3*`, or the group library `libgpvm3*`).
pub fn linked_pvm(program: &Path) -> Option<String> {
    linked(program, "libpvm3").or_else(|| linked(program, "libgpvm3"))
}

/// The first DT_NEEDED entry of ELF file `program` whose name starts with `prefix`.
fn linked(program: &Path, prefix: &str) -> Option<String> {
    let file = std::fs::File::open(program).ok()?;
    let data = &ReadCache::new(file);
    let needed = match data.read_bytes_at(4, 1).ok()? {
        [1] => needed::<FileHeader32<Endianness>, _>(data),
        _ => needed::<FileHeader64<Endianness>, _>(data),
    };
    needed?.into_iter().find(|n| n.starts_with(prefix))
}

fn needed<'a, Elf: FileHeader<Endian = Endianness>, R: ReadRef<'a>>(data: R) -> Option<Vec<String>> {
    let header = Elf::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let sections = header.sections(endian, data).ok()?;
    let (dyns, link) = sections.dynamic(endian, data).ok()??;
    let strings = sections.strings(endian, data, link).ok()?;
    let names = dyns
        .iter()
        .filter(|d| d.tag32(endian) == Some(DT_NEEDED))
        .filter_map(|d| Some(String::from_utf8_lossy(strings.get(d.val32(endian)?).ok()?).into_owned()))
        .collect();
    Some(names)
}

/// Whether the preload library holds the PMPI wrappers (it defines MPI_Init); an error
/// naming the file if it is no shared library.
pub fn preload_has_mpi(lib: &Path) -> io::Result<bool> {
    preload_defines(lib, "MPI_Init")
}

/// Whether the preload library holds the PVM wrappers (it defines pvm_spawn).
pub fn preload_has_pvm(lib: &Path) -> io::Result<bool> {
    preload_defines(lib, "pvm_spawn")
}

fn preload_defines(lib: &Path, symbol: &str) -> io::Result<bool> {
    let file = std::fs::File::open(lib).map_err(|e| {
        io::Error::new(e.kind(), format!("{}: cannot open the preload library: {e}", lib.display()))
    })?;
    let data = &ReadCache::new(file);
    let elf = object::File::parse(data).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not a shared library (ELF expected): {e}", lib.display()),
        )
    })?;
    Ok(elf.dynamic_symbols().any(|s| s.is_definition() && s.name() == Ok(symbol)))
}

/// Refuses to record `program` when it is linked to libmpi and `lib` has no MPI wrappers:
/// the trace would hold the process's begin and end only, its MPI calls silently lost.
/// The library is checked whatever the program: a path that is no library is an error.
pub fn check_mpi(program: &Path, lib: &Path) -> io::Result<()> {
    if preload_has_mpi(lib)? {
        return Ok(());
    }
    let Some(mpi) = linked_mpi(program) else { return Ok(()) };
    Err(io::Error::other(format!(
        "{} is linked to {mpi}, but the preload library {} was built without MPI wrappers (mpicc was \
         not found when it was built): its MPI calls would not be recorded. Install MPI's development \
         files (Debian: libopenmpi-dev) so that mpicc is on PATH, then build spoor again \
         (`cargo build --release`, or `cargo install --path .`): the library is rebuilt with the wrappers",
        program.display(),
        lib.display()
    )))
}

/// Refuses to record `program` when it is linked to libpvm3 and `lib` has no PVM wrappers,
/// as [`check_mpi`] does for MPI: its tasks, messages and spawns would be lost.
pub fn check_pvm(program: &Path, lib: &Path) -> io::Result<()> {
    if preload_has_pvm(lib)? {
        return Ok(());
    }
    let Some(pvm) = linked_pvm(program) else { return Ok(()) };
    Err(io::Error::other(format!(
        "{} is linked to {pvm}, but the preload library {} was built without PVM wrappers (pvm3.h was \
         not found when it was built): its PVM calls and spawned tasks would not be recorded. Install \
         PVM's development files (Debian: pvm-dev), then build spoor again (`cargo build --release`, \
         or `cargo install --path .`): the library is rebuilt with the wrappers",
        program.display(),
        lib.display()
    )))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_library_is_written_once_and_rewritten_when_it_differs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache");
        let a = embedded_preload(b"library one", &dir).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"library one");
        assert_eq!(embedded_preload(b"library one", &dir).unwrap(), a);
        // A damaged copy under the same name is replaced.
        std::fs::write(&a, b"library 0ne").unwrap();
        assert_eq!(embedded_preload(b"library one", &dir).unwrap(), a);
        assert_eq!(std::fs::read(&a).unwrap(), b"library one");
        // Another build's library has a name of its own; no temporary file is left.
        let b = embedded_preload(b"library two!", &dir).unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    }

    #[test]
    fn the_header_is_found_in_an_installed_tree_else_written_out_once() {
        let tmp = tempfile::tempdir().unwrap();
        // bin/spoor-record with include/spoor.h beside bin: that directory.
        let exe = tmp.path().join("prefix/bin/spoor-record");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::create_dir_all(tmp.path().join("prefix/include")).unwrap();
        std::fs::write(tmp.path().join("prefix/include/spoor.h"), "/* installed */").unwrap();
        let want = tmp.path().join("prefix/include").canonicalize().unwrap();
        assert_eq!(find_include_dir(&exe, b"/* built in */").unwrap(), want);
        // Written out: one directory per header, its file the header's bytes.
        let cache = tmp.path().join("cache");
        let a = embedded_header(b"/* one */", &cache).unwrap();
        assert_eq!(std::fs::read(a.join(HEADER_NAME)).unwrap(), b"/* one */");
        assert_eq!(embedded_header(b"/* one */", &cache).unwrap(), a);
        let b = embedded_header(b"/* two! */", &cache).unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read_dir(&b).unwrap().count(), 1, "no temporary file is left");
    }

    #[test]
    fn a_preload_library_that_is_no_elf_file_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let text = tmp.path().join("libspoor_preload.so");
        std::fs::write(&text, "not a library").unwrap();
        let err = preload_has_mpi(&text).unwrap_err().to_string();
        assert!(err.starts_with(&text.display().to_string()) && err.contains("ELF expected"), "{err}");
        let err = check_mpi(Path::new("/bin/sh"), &tmp.path().join("missing.so")).unwrap_err().to_string();
        assert!(err.contains("missing.so: cannot open the preload library"), "{err}");
    }

    #[test]
    fn programs_not_linked_to_mpi() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(linked_mpi(&exe), None);
        assert!(!preload_has_mpi(&exe).unwrap(), "this test defines no MPI_Init");
        let tmp = tempfile::tempdir().unwrap();
        let script = tmp.path().join("script");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(linked_mpi(&script), None);
        assert_eq!(linked_mpi(&tmp.path().join("missing")), None);
    }

    #[test]
    fn programs_are_found_as_exec_finds_them() {
        let sh = resolve_program(OsStr::new("sh")).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(resolve_program(OsStr::new("./prog")), Some(PathBuf::from("./prog")));
        assert_eq!(resolve_program(OsStr::new("no-such-program-anywhere")), None);
    }
}
