//! A trace that can be read more than once. spoor-align and spoor-order read their
//! input twice (once to match and measure, once to rewrite), so standard input is
//! first copied to a temporary file; a file is simply opened again.

use crate::{Error, Result};
use spoor_format::{ReadOptions, TraceReader};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

enum Where {
    /// A file on disk, opened (and memory-mapped when binary) at every read.
    Path(PathBuf),
    /// Standard input, copied to a temporary file that lives as long as the input.
    Spooled(tempfile::NamedTempFile),
    /// Bytes in memory (tests, library users).
    Bytes(Arc<Vec<u8>>),
}

/// A re-readable trace: a file, standard input spooled to disk, or bytes in memory.
pub struct Input {
    name: String,
    at: Where,
}

impl Input {
    /// `path`, or standard input for `-`; standard input and pipes are copied to a
    /// temporary file in `$TMPDIR`, as they can be read only once.
    pub fn open(path: &str) -> Result<Input> {
        if spoor_format::is_stream(path) {
            return Self::spool_stream(path, &std::env::temp_dir());
        }
        let p = PathBuf::from(path);
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => Err(Error::Io {
                file: path.to_owned(),
                err: io::Error::other("is a directory, expected a trace file"),
            }),
            Ok(_) => Ok(Input { name: path.to_owned(), at: Where::Path(p) }),
            Err(err) => Err(Error::Io { file: path.to_owned(), err }),
        }
    }

    /// Copies the stream at `path` (standard input for `-`, or a pipe: see
    /// [`spoor_format::is_stream`]) to a temporary file in `dir`.
    pub fn spool_stream(path: &str, dir: &Path) -> Result<Input> {
        if path == "-" {
            return Self::spool_in("<stdin>", io::stdin().lock(), dir);
        }
        let pipe = std::fs::File::open(path).map_err(|err| Error::Io { file: path.to_owned(), err })?;
        Self::spool_in(path, pipe, dir)
    }

    /// Copies `input` to a temporary file in `dir`, so that it can be read again. A
    /// failure (a full disk) names `dir`, and leaves no file behind.
    pub fn spool_in(name: &str, mut input: impl Read, dir: &Path) -> Result<Input> {
        let copy = |w: &mut io::BufWriter<std::fs::File>| io::copy(&mut input, w).map_err(Error::Write);
        Self::temporary(name, dir, "copying it", copy).map(|(input, _)| input)
    }

    /// A temporary file in `dir` (removed with the input) that `write` fills, then read
    /// as `name`. A failure to write it (a full disk) names `dir`, and leaves no file.
    pub fn write_temporary<T>(
        name: &str,
        dir: &Path,
        write: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> Result<T>,
    ) -> Result<(Input, T)> {
        Self::temporary(name, dir, "writing", write)
    }

    /// [`Input::write_temporary`], its errors saying `name`: `doing` to `dir`.
    fn temporary<T>(
        name: &str,
        dir: &Path,
        doing: &str,
        write: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> Result<T>,
    ) -> Result<(Input, T)> {
        let fail = |err| Error::Io { file: format!("{name}: {doing} to {}", dir.display()), err };
        let tmp = tempfile::Builder::new().prefix(".spoor-spool-").tempfile_in(dir).map_err(fail)?;
        let mut w = io::BufWriter::new(tmp.as_file().try_clone().map_err(fail)?);
        let made = write(&mut w).map_err(|e| match e {
            Error::Write(e) => fail(e),
            e => e,
        })?;
        io::Write::flush(&mut w).map_err(fail)?;
        drop(w);
        Ok((Input { name: name.to_owned(), at: Where::Spooled(tmp) }, made))
    }

    /// A trace held in memory, in any form the reader accepts.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Input {
        Input { name: name.to_owned(), at: Where::Bytes(Arc::new(bytes)) }
    }

    /// The file the trace is read from (`None`: bytes in memory).
    pub fn file(&self) -> Option<&Path> {
        match &self.at {
            Where::Path(p) => Some(p),
            Where::Spooled(t) => Some(t.path()),
            Where::Bytes(_) => None,
        }
    }

    /// Whether it is standard input copied to disk.
    pub fn is_spooled(&self) -> bool {
        matches!(self.at, Where::Spooled(_))
    }

    /// The bytes copied to disk (0 but for standard input).
    pub fn spooled_bytes(&self) -> u64 {
        match &self.at {
            Where::Spooled(t) => t.as_file().metadata().map_or(0, |m| m.len()),
            _ => 0,
        }
    }

    /// The name errors use: the path, or `<stdin>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A fresh reader from the start of the trace.
    pub fn reader(&self) -> Result<TraceReader> {
        let opts = ReadOptions::default();
        let r = match &self.at {
            Where::Path(p) => TraceReader::open(&p.to_string_lossy(), opts),
            Where::Spooled(t) => TraceReader::open(&t.path().to_string_lossy(), opts),
            Where::Bytes(b) => TraceReader::from_bytes(&self.name, b.as_ref().clone(), opts),
        };
        r.map_err(|e| self.rename(e))
    }

    /// Reports a reader's error under this input's name (not the spool file's).
    pub fn rename(&self, mut e: spoor_format::Error) -> Error {
        e.file = self.name.clone();
        Error::Format(e)
    }
}
