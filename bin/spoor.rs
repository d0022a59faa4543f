//! spoor: the front command. `spoor VERB ARGS` runs `spoor-VERB ARGS`.

use std::path::PathBuf;
use std::process::Command;

/// Every command of the pipeline with its one-line summary, in pipeline order.
const COMMANDS: &[(&str, &str)] = &[
    ("record", "run a program or MPI rank with tracing"),
    ("import", "read OTF2, Paraver or DUMPI traces into spoor's format"),
    ("synth", "write synthetic workloads (spa, ring, stencil, master-worker, pipeline, barrier)"),
    ("cat", "print a trace as text or JSON lines, count or convert it"),
    ("merge", "merge per-process traces and applications into one trace"),
    ("align", "put every location on one time base"),
    ("order", "match messages and order events causally"),
    ("pag", "build the Program Activity Graph"),
    ("gag", "build the Group Activity Graph for a placement (load balancing factor)"),
    ("cp", "critical paths, their profiles and critical-path zeroing"),
    ("whatif", "scenario sweeps: placements, networks, procedure moves"),
    ("calibrate", "measure or fit a communication-cost table"),
    ("report", "tables, profiles, histograms, pictures and Perfetto export"),
];

/// Where `spoor-VERB` lives: beside this executable, else on PATH.
fn find(verb: &str) -> Option<PathBuf> {
    let name = format!("spoor-{verb}{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join(&name)));
    if let Some(p) = beside.filter(|p| p.is_file()) {
        return Some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(&name)).find(|p| p.is_file())
}

fn usage() -> String {
    let mut s = String::from(
        "spoor: post-mortem performance analysis of parallel and distributed programs\n\n\
         Usage: spoor VERB [ARGS...]   (runs spoor-VERB ARGS...; `spoor VERB --help` for its options)\n\n\
         Commands:\n",
    );
    for (verb, what) in COMMANDS {
        let state = if find(verb).is_some() { "" } else { "  (not installed)" };
        s.push_str(&format!("  {verb:<10} {what}{state}\n"));
    }
    s
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(verb) = args.next() else {
        eprint!("{}", usage());
        std::process::exit(2);
    };
    let verb = verb.to_string_lossy().into_owned();
    match verb.as_str() {
        "-h" | "--help" | "help" => {
            print!("{}", usage());
            return;
        }
        "-V" | "--version" => {
            println!("spoor {}", env!("CARGO_PKG_VERSION"));
            return;
        }
        _ => {}
    }
    let Some(exe) = find(&verb) else {
        eprintln!("spoor: no command '{verb}' (no spoor-{verb} beside spoor or on PATH)\n");
        eprint!("{}", usage());
        std::process::exit(2);
    };
    // Replace this process, so signals, exit status and pipes belong to the command itself.
    use std::os::unix::process::CommandExt;
    let e = Command::new(&exe).args(args).exec();
    eprintln!("spoor: cannot run {}: {e}", exe.display());
    std::process::exit(1);
}
