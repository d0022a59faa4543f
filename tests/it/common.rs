//! What the integration tests share: the commands by name, running them with standard
//! input, the repository's testdata/, golden files, the real traces of $SPOOR_DATA
//! and the tools found on PATH.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The executable of `spoor` (the front command) or of `spoor-NAME`.
pub fn bin(name: &str) -> &'static str {
    match name {
        "spoor" => env!("CARGO_BIN_EXE_spoor"),
        "record" => env!("CARGO_BIN_EXE_spoor-record"),
        "import" => env!("CARGO_BIN_EXE_spoor-import"),
        "synth" => env!("CARGO_BIN_EXE_spoor-synth"),
        "cat" => env!("CARGO_BIN_EXE_spoor-cat"),
        "merge" => env!("CARGO_BIN_EXE_spoor-merge"),
        "align" => env!("CARGO_BIN_EXE_spoor-align"),
        "order" => env!("CARGO_BIN_EXE_spoor-order"),
        "pag" => env!("CARGO_BIN_EXE_spoor-pag"),
        "gag" => env!("CARGO_BIN_EXE_spoor-gag"),
        "cp" => env!("CARGO_BIN_EXE_spoor-cp"),
        "whatif" => env!("CARGO_BIN_EXE_spoor-whatif"),
        "calibrate" => env!("CARGO_BIN_EXE_spoor-calibrate"),
        "report" => env!("CARGO_BIN_EXE_spoor-report"),
        "diagnose" => env!("CARGO_BIN_EXE_spoor-diagnose"),
        "exp" => env!("CARGO_BIN_EXE_spoor-exp"),
        _ => unreachable!("no command spoor-{name}"),
    }
}

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file of testdata/, by its path there.
pub fn testdata(rel: &str) -> String {
    root().join("testdata").join(rel).to_string_lossy().into_owned()
}

/// Runs the command `name` (as for [`bin`]) with extra environment and `stdin` written
/// to it (from a thread, so a large input cannot deadlock against a full output pipe).
/// A panic message on standard error fails the test whatever the exit code.
pub fn run(name: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let exe = bin(name);
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap_or_else(|e| panic!("{exe}: {e}"));
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{exe} {args:?} panicked: {err}");
    out
}

/// Fails the test, showing what the program wrote, unless it exited 0.
pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The standard output of a successful run of `name` with `stdin`.
pub fn ok(name: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(name, args, stdin, &[]);
    assert_success(&out, &format!("spoor-{name} {args:?}"));
    out.stdout
}

/// The standard output, as text, of a successful run of `name` without input.
pub fn ok_text(name: &str, args: &[&str]) -> String {
    text(&ok(name, args, b""))
}

/// Output that must be UTF-8.
pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// Set (to anything) to write the golden files instead of comparing against them.
const REGENERATE: &str = "SPOOR_REGENERATE";

/// Compares `actual` with the golden file testdata/`rel`, or with SPOOR_REGENERATE set,
/// writes it there (then check the difference with `git diff testdata/`).
pub fn golden(rel: &str, actual: &str) {
    let path = testdata(rel);
    if std::env::var_os(REGENERATE).is_some() {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{path}: {e}"));
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run with {REGENERATE}=1 to write it)"));
    if want != actual {
        let line = want.lines().zip(actual.lines()).position(|(w, a)| w != a);
        let line = line.unwrap_or(want.lines().count().min(actual.lines().count()));
        panic!(
            "{path} differs from the output at line {}:\n--- golden\n{}\n--- output\n{}\n\
             (if the change is intended, run with {REGENERATE}=1 and check `git diff testdata/`)",
            line + 1,
            want.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>"),
        );
    }
}

/// $SPOOR_DATA, or `None` with a message (a failure under CI, where it must be set).
pub fn data() -> Option<PathBuf> {
    match std::env::var_os("SPOOR_DATA") {
        Some(d) => Some(PathBuf::from(d)),
        None if std::env::var_os("CI").is_some() => panic!("SPOOR_DATA is unset under CI"),
        None => {
            eprintln!("SPOOR_DATA unset: skipping the tests over real traces (scripts/test sets it)");
            None
        }
    }
}

/// The EPOCH 2-process Paraver trace of $SPOOR_DATA imported and ordered into `dir`;
/// the ordered trace's path.
pub fn epoch_ordered(data: &Path, dir: &Path) -> String {
    let raw = dir.join("epoch.spoor").to_string_lossy().into_owned();
    let prv = data.join("paraver/pypop-epoch-2proc/epoch_2proc.prv.gz");
    ok("import", &["-q", prv.to_str().unwrap(), "-o", &raw], b"");
    let t = dir.join("epoch.o").to_string_lossy().into_owned();
    ok("order", &["-q", &raw, "-o", &t], b"");
    t
}

/// A program on PATH.
pub fn tool(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

/// mpicc and mpirun, or a failure that says what to install.
pub fn mpi() -> (PathBuf, PathBuf) {
    match (tool("mpicc"), tool("mpirun")) {
        (Some(cc), Some(run)) => (cc, run),
        _ => panic!(
            "mpicc or mpirun not found: install Debian's libopenmpi-dev and openmpi-bin \
             (scripts/test installs them) to run the MPI recording tests"
        ),
    }
}
