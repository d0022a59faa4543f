//! `Output`: a file appears only when complete; something that is not a regular file
//! (a FIFO, /dev/null) is written to in place, never replaced.

use spoor_cli::Output;
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::process::Command;

#[test]
fn a_file_appears_only_when_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.txt");
    let mut out = Output::create(Some(&path)).unwrap();
    out.write_all(b"hello").unwrap();
    assert!(!path.exists(), "the file must not appear before commit");
    out.commit().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"hello");
    // Dropped without commit: nothing appears, nothing is left behind.
    let other = dir.path().join("never.txt");
    let mut out = Output::create(Some(&other)).unwrap();
    out.write_all(b"x").unwrap();
    drop(out);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_fifo_is_written_in_place_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(&fifo).unwrap().read_to_string(&mut s).unwrap();
            s
        })
    };
    let mut out = Output::create(Some(&fifo)).unwrap();
    out.write_all(b"through the pipe").unwrap();
    out.commit().unwrap();
    assert_eq!(reader.join().unwrap(), "through the pipe");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
}
