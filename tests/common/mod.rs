//! What the integration tests share: running a command with standard input, and the
//! real traces of $SPOOR_DATA.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs `exe ARGS` with extra environment and `stdin` written to it (from a thread, so a
/// large input cannot deadlock against a full output pipe). A panic message on standard
/// error fails the test whatever the exit code.
pub fn run_with_stdin(exe: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
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
