//! spoor: the front command. `spoor VERB ARGS` runs `spoor-VERB ARGS`; `spoor man` and
//! `spoor completions SHELL` write every command's manual page and shell completions.

use clap::{CommandFactory, FromArgMatches, Subcommand};
use spoor_cli::Output;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

// Each command's command line (its clap `Args`), for the manual pages and completions;
// the commands themselves read the fields.
#[allow(dead_code)]
#[path = "args/align.rs"]
mod align;
#[allow(dead_code)]
#[path = "args/calibrate.rs"]
mod calibrate;
#[allow(dead_code)]
#[path = "args/cat.rs"]
mod cat;
#[allow(dead_code)]
#[path = "args/cp.rs"]
mod cp;
#[allow(dead_code)]
#[path = "args/diagnose.rs"]
mod diagnose;
#[allow(dead_code)]
#[path = "args/exp.rs"]
mod exp;

#[path = "args/gag.rs"]
mod gag;
#[allow(dead_code)]
#[path = "args/import.rs"]
mod import;
#[allow(dead_code)]
#[path = "args/merge.rs"]
mod merge;
#[allow(dead_code)]
#[path = "args/order.rs"]
mod order;
#[allow(dead_code)]
#[path = "args/pag.rs"]
mod pag;
#[allow(dead_code)]
#[path = "args/record.rs"]
mod record;
#[allow(dead_code)]
#[path = "args/report.rs"]
mod report;
#[allow(dead_code)]
#[path = "args/synth.rs"]
mod synth;
#[allow(dead_code)]
#[path = "args/whatif.rs"]
mod whatif;

/// A command's clap command line.
type CommandLine = fn() -> clap::Command;

/// Every command of the pipeline with its one-line summary and its command line, in
/// pipeline order.
const COMMANDS: &[(&str, &str, CommandLine)] = &[
    ("record", "run a program or MPI rank with tracing", record::Args::command),
    ("import", "read OTF2, Paraver or DUMPI traces into spoor's format", import::Args::command),
    (
        "synth",
        "write synthetic workloads (spa, ring, stencil, master-worker, pipeline, barrier)",
        synth::Args::command,
    ),
    ("cat", "print a trace as text or JSON lines, count or convert it", cat::Args::command),
    ("merge", "merge per-process traces and applications into one trace", merge::Args::command),
    ("align", "put every location on one time base", align::Args::command),
    ("order", "match messages and order events causally", order::Args::command),
    ("pag", "build the Program Activity Graph", pag::Args::command),
    ("gag", "build the Group Activity Graph for a placement (load balancing factor)", gag::Args::command),
    ("cp", "critical paths, their profiles and critical-path zeroing", cp::Args::command),
    ("whatif", "scenario sweeps: placements, networks, procedure moves", whatif::Args::command),
    ("calibrate", "measure or fit a communication-cost table or network model", calibrate::Args::command),
    ("report", "tables, profiles, histograms, pictures and Perfetto export", report::Args::command),
    (
        "diagnose",
        "search for bottlenecks automatically: why, where, when, and what to fix first",
        diagnose::Args::command,
    ),
    (
        "exp",
        "the program space of runs: differences, scaling, directives, a regression gate",
        exp::Args::command,
    ),
];

const EXAMPLES: &str = "\
Examples:
  spoor synth spa -o spa.spoor && spoor order spa.spoor -o spa.o
  spoor cp --zeroing spa.o                 the critical path, its profiles and zeroing
  spoor report -f html spa.o -o spa.html
  spoor man -o ~/.local/share/man/man1     a manual page for every command
  source <(spoor completions bash)         completions for spoor and every spoor-VERB";

/// What spoor does itself rather than through a spoor-VERB.
#[derive(Subcommand)]
enum Builtin {
    /// Write the manual pages (roff): the one of VERB, or of spoor, to standard output;
    /// with -o DIR, spoor.1 and spoor-VERB.1 for every command (or VERB's) into DIR.
    #[command(after_help = "Examples:\n  spoor man cp | man -l -\n  spoor man -o /usr/local/share/man/man1")]
    Man {
        /// The command whose page to write (a VERB of `spoor --help`).
        #[arg(value_name = "VERB", value_parser = clap::builder::PossibleValuesParser::new(COMMANDS.iter().map(|c| c.0)))]
        verb: Option<String>,
        /// Write the pages as files into this directory (created if missing).
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
    },
    /// Print a completion script for spoor and every spoor-VERB command; source it from
    /// the shell's start-up file.
    #[command(after_help = "Examples:\n  source <(spoor completions bash)      (in ~/.bashrc)\n  \
                            spoor completions fish > ~/.config/fish/completions/spoor.fish")]
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The front command's own command line: every command as a subcommand (for its page and
/// completions), and the built-ins.
fn front() -> clap::Command {
    let mut c = clap::Command::new("spoor")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Post-mortem performance analysis of parallel and distributed programs")
        .long_about(
            "Post-mortem performance analysis of parallel and distributed programs. `spoor VERB ARGS` \
             runs `spoor-VERB ARGS` (found beside spoor, else on PATH); `spoor VERB --help` gives the \
             command's options.",
        )
        .after_help(EXAMPLES);
    for (verb, what, command) in COMMANDS {
        c = c.subcommand(command().name(*verb).bin_name(format!("spoor {verb}")).about(*what));
    }
    Builtin::augment_subcommands(c)
}

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
    for (verb, what, _) in COMMANDS {
        let state = if find(verb).is_some() { "" } else { "  (not installed)" };
        s.push_str(&format!("  {verb:<11} {what}{state}\n"));
    }
    s.push_str(
        "  man         write the manual pages (spoor man [VERB] [-o DIR])\n  \
         completions print a shell completion script (bash, zsh, fish, elvish, powershell)\n\n",
    );
    s.push_str(EXAMPLES);
    s.push('\n');
    s
}

/// The manual page of `spoor` (`verb` None) or of one command, as roff.
fn page(verb: Option<&str>) -> anyhow::Result<(String, Vec<u8>)> {
    let (name, command) = match verb {
        None => ("spoor".to_owned(), front()),
        Some(v) => {
            let (_, _, command) = COMMANDS.iter().find(|c| c.0 == v).ok_or_else(|| {
                let verbs: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
                anyhow::anyhow!("man: no command '{v}'; there are: {}", verbs.join(", "))
            })?;
            (format!("spoor-{v}"), command())
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(command).render(&mut roff)?;
    Ok((name, roff))
}

fn man(verb: Option<&str>, dir: Option<&Path>) -> anyhow::Result<()> {
    let Some(dir) = dir else {
        let mut out = Output::create(None)?;
        out.write_all(&page(verb)?.1)?;
        return out.commit();
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("{}: cannot create the directory: {e}", dir.display()))?;
    let verbs: Vec<Option<&str>> = match verb {
        Some(v) => vec![Some(v)],
        None => std::iter::once(None).chain(COMMANDS.iter().map(|c| Some(c.0))).collect(),
    };
    for v in verbs {
        let (name, roff) = page(v)?;
        let mut out = Output::create(Some(&dir.join(format!("{name}.1"))))?;
        out.write_all(&roff)?;
        out.commit()?;
    }
    Ok(())
}

fn completions(shell: clap_complete::Shell) -> anyhow::Result<()> {
    let mut out = Output::create(None)?;
    clap_complete::generate(shell, &mut front(), "spoor", &mut out);
    for (verb, _, command) in COMMANDS {
        let name = format!("spoor-{verb}");
        clap_complete::generate(shell, &mut command(), name, &mut out);
    }
    out.commit()
}

/// `spoor man ...` and `spoor completions ...`.
fn builtin(args: Vec<std::ffi::OsString>) -> ! {
    let matches = front().get_matches_from(std::iter::once("spoor".into()).chain(args));
    let b = Builtin::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    spoor_cli::run("spoor", || match b {
        Builtin::Man { verb, output } => man(verb.as_deref(), output.as_deref()),
        Builtin::Completions { shell } => completions(shell),
    })
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(verb) = args.next() else {
        eprint!("{}", usage());
        std::process::exit(spoor_cli::exit::USAGE);
    };
    let verb_s = verb.to_string_lossy().into_owned();
    match verb_s.as_str() {
        "-h" | "--help" | "help" => {
            print!("{}", usage());
            return;
        }
        "-V" | "--version" => {
            println!("spoor {}", env!("CARGO_PKG_VERSION"));
            return;
        }
        "man" | "completions" => builtin(std::iter::once(verb).chain(args).collect()),
        _ => {}
    }
    let Some(exe) = find(&verb_s) else {
        eprintln!("spoor: no command '{verb_s}' (no spoor-{verb_s} beside spoor or on PATH)\n");
        eprint!("{}", usage());
        std::process::exit(spoor_cli::exit::USAGE);
    };
    // Replace this process, so signals, exit status and pipes belong to the command itself.
    use std::os::unix::process::CommandExt;
    let e = Command::new(&exe).args(args).exec();
    eprintln!("spoor: cannot run {}: {e}", exe.display());
    std::process::exit(spoor_cli::exit::BAD_INPUT);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command lines of an Examples section: each `spoor...` invocation of a line,
    /// split at pipes, `&&` and redirections outside quotes, without the comment after
    /// two spaces (outside quotes); quoted words are one word, without their quotes.
    fn invocations(help: &str) -> Vec<Vec<String>> {
        let mut v = Vec::new();
        let mut take = |words: &mut Vec<String>| {
            let w: Vec<String> =
                words.drain(..).skip_while(|w| w != "spoor" && !w.starts_with("spoor-")).collect();
            if !w.is_empty() {
                v.push(w);
            }
        };
        for line in help.lines().skip_while(|l| *l != "Examples:").skip(1) {
            let (mut words, mut word, mut quote) = (Vec::new(), String::new(), None::<char>);
            let mut chars = line.trim_start().chars().peekable();
            while let Some(c) = chars.next() {
                match (quote, c) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), c) => word.push(c),
                    (None, '\'' | '"') => quote = Some(c),
                    (None, ' ') if chars.peek() == Some(&' ') => break,
                    (None, ' ') => words.extend((!word.is_empty()).then(|| std::mem::take(&mut word))),
                    (None, '|' | '>' | '&' | ')') => {
                        words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                        take(&mut words);
                    }
                    (None, c) => word.push(c),
                }
            }
            words.extend((!word.is_empty()).then_some(word));
            take(&mut words);
        }
        v
    }

    #[test]
    fn every_example_parses_and_every_command_has_some() {
        let front_help = front().get_after_help().unwrap().to_string();
        let mut all = invocations(&front_help);
        for (verb, _, command) in COMMANDS {
            let help = command().get_after_help().map(|h| h.to_string()).unwrap_or_default();
            let own = invocations(&help);
            assert!(own.len() >= 3, "spoor-{verb} has {} examples", own.len());
            all.extend(own);
            // Subcommands (spoor-whatif's modes) give their own examples.
            for sub in command().get_subcommands() {
                let help = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
                let own = invocations(&help);
                assert!(own.len() >= 2, "spoor-{verb} {} has {} examples", sub.get_name(), own.len());
                all.extend(own);
            }
        }
        for words in &all {
            let command = match words[0].strip_prefix("spoor-") {
                None => front(),
                Some(v) => COMMANDS.iter().find(|c| c.0 == v).unwrap_or_else(|| panic!("{words:?}")).2(),
            };
            if let Err(e) = command.try_get_matches_from(words) {
                panic!("{words:?}: {e}");
            }
        }
        assert!(all.len() > 40, "{}", all.len());
    }
}
