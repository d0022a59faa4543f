//! spoor-merge: merge per-process traces and applications into one trace (the
//! spoor-order crate's `merge`).

use clap::{CommandFactory, FromArgMatches};
use spoor_cli::{Console, Output};
use spoor_order::merge::{self, MergeInput, MergeOptions};

#[path = "args/merge.rs"]
mod args;
use args::*;

fn usage(msg: String) -> ! {
    Args::command().error(clap::error::ErrorKind::ValueValidation, msg).exit()
}

fn inputs(args: &Args, groups: &[Vec<String>]) -> Result<Vec<MergeInput>, String> {
    let mut out = Vec::new();
    let mut add = |path: &str, app: Option<&str>| -> Result<(), String> {
        let files = merge::expand(path).map_err(|e| e.to_string())?;
        if files.is_empty() {
            return Err(format!("{path}: an empty directory"));
        }
        for f in files {
            out.push(MergeInput { path: f, app: app.map(str::to_owned) });
        }
        Ok(())
    };
    for p in &args.inputs {
        add(p, None)?;
    }
    for group in groups {
        let Some((name, first)) = group.first().and_then(|g| g.split_once('=')) else {
            return Err(format!("--app {}: expected NAME=FILE [FILE...]", group.join(" ")));
        };
        if name.is_empty() {
            return Err(format!("--app {}: the application needs a name", group.join(" ")));
        }
        if !first.is_empty() {
            add(first, Some(name))?;
        }
        for f in &group[1..] {
            add(f, Some(name))?;
        }
        if first.is_empty() && group.len() == 1 {
            return Err(format!("--app {name}=: no file for the application"));
        }
    }
    if out.is_empty() {
        return Err("no input: give trace files, directories, `-`, or --app NAME=FILES".into());
    }
    if out.iter().filter(|i| i.path == "-").count() > 1 {
        return Err("standard input (`-`) can be read only once".into());
    }
    Ok(out)
}

fn main() {
    let matches = Args::command().get_matches();
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Each --app occurrence is one group: NAME=FILE FILE...
    let groups: Vec<Vec<String>> = matches
        .get_occurrences::<String>("app")
        .map(|occ| occ.map(|vals| vals.cloned().collect()).collect())
        .unwrap_or_default();
    let inputs = inputs(&args, &groups).unwrap_or_else(|m| usage(m));
    spoor_cli::run_stage("spoor-merge", args.verbose, || {
        let opts = MergeOptions { compare: args.compare.clone(), block_events: args.block_events.max(1) };
        let mut out = Output::create(args.output.as_deref())?;
        let console = Console::new("spoor-merge", args.quiet);
        let summary = match merge::merge_with_feedback(&inputs, &opts, &mut out, &console) {
            Ok(s) => s,
            Err(spoor_order::Error::Usage(m)) => {
                drop(out);
                usage(m)
            }
            Err(e) => return Err(e.into()),
        };
        out.commit()?;
        for w in &summary.warnings {
            eprintln!("spoor-merge: warning: {w}");
        }
        if !args.quiet {
            for (app, shift) in &summary.shifts {
                if *shift != 0 {
                    eprintln!(
                        "spoor-merge: comparison mode: {app} shifted by {}",
                        spoor_order::describe::time(*shift)
                    );
                }
            }
        }
        Ok(())
    })
}
