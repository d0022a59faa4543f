//! Telling a foreign trace's format from its content: what `spoor-import` reads.

use crate::{dumpi, paraver};
use spoor_format::{Error, ErrorKind};
use std::path::{Path, PathBuf};

/// A trace found at a path, with the file its reader starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detected {
    /// An OTF2 archive's anchor (`traces.otf2`, or another `*.otf2`).
    Otf2(PathBuf),
    /// A Paraver `.prv` or `.prv.gz`.
    Paraver(PathBuf),
    /// A DUMPI trace's `.meta`.
    Dumpi(PathBuf),
}

/// What `path` holds: a file told by its first bytes (an OTF2 anchor by its name, as
/// the archive reader checks its content), or a directory holding exactly one trace.
/// Errors name the path and say what was expected.
pub fn detect(path: &Path) -> Result<Detected, Error> {
    let whole = |kind, message: String| Error {
        kind,
        file: path.display().to_string(),
        offset: None,
        line: None,
        message,
    };
    if path.is_dir() {
        let anchor = path.join("traces.otf2");
        if anchor.is_file() {
            return Ok(Detected::Otf2(anchor));
        }
        let found = |ends: &[&str]| -> Result<Vec<PathBuf>, Error> {
            let mut v: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| whole(ErrorKind::Io, format!("cannot list: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_str().is_some_and(|s| ends.iter().any(|e| s.ends_with(e))))
                .collect();
            v.sort();
            Ok(v)
        };
        let (metas, prvs) = (found(&[".meta"])?, found(&[".prv", ".prv.gz"])?);
        return match (metas.as_slice(), prvs.as_slice()) {
            ([meta], []) => Ok(Detected::Dumpi(meta.clone())),
            ([], [prv]) => Ok(Detected::Paraver(prv.clone())),
            ([], []) => Err(whole(
                ErrorKind::Corrupt,
                "a directory without traces.otf2, a .prv or a DUMPI .meta: expected a trace".into(),
            )),
            _ => Err(whole(ErrorKind::Corrupt, "holds several traces: name the one to import".into())),
        };
    }
    let mut head = vec![0u8; 512];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| whole(ErrorKind::Io, format!("cannot read: {e}")))?;
    head.truncate(n);
    if paraver::looks_like(&head) {
        return Ok(Detected::Paraver(path.to_owned()));
    }
    if dumpi::looks_like(&head) {
        if path.extension().is_some_and(|e| e == "bin") {
            return Err(whole(
                ErrorKind::Corrupt,
                "a DUMPI rank file: import the trace's .meta file instead".into(),
            ));
        }
        return Ok(Detected::Dumpi(path.to_owned()));
    }
    if path.extension().is_some_and(|e| e == "otf2") {
        return Ok(Detected::Otf2(path.to_owned()));
    }
    Err(whole(
        ErrorKind::Corrupt,
        "not a trace spoor-import reads (expected an OTF2 anchor *.otf2, a Paraver .prv, or a DUMPI .meta)"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn files_are_told_by_their_content() {
        let d = dir();
        let prv = d.path().join("run.trace");
        std::fs::write(&prv, "#Paraver (01/01/2024 at 10:00):1000_ns:1(2):1:1(2:1)\n").unwrap();
        assert_eq!(detect(&prv).unwrap(), Detected::Paraver(prv.clone()));
        let meta = d.path().join("run.meta");
        std::fs::write(&meta, "hostname=x\nnumprocs=2\nfileprefix=run\n").unwrap();
        assert_eq!(detect(&meta).unwrap(), Detected::Dumpi(meta.clone()));
        let rank = d.path().join("run-0000.bin");
        std::fs::write(&rank, "hostname=x\nnumprocs=2\nfileprefix=run\n").unwrap();
        assert!(detect(&rank).unwrap_err().message.starts_with("a DUMPI rank file"));
        let anchor = d.path().join("other.otf2");
        std::fs::write(&anchor, [0u8; 16]).unwrap();
        assert_eq!(detect(&anchor).unwrap(), Detected::Otf2(anchor.clone()));
        let text = d.path().join("notes.txt");
        std::fs::write(&text, "hello\n").unwrap();
        let e = detect(&text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Corrupt);
        assert!(e.to_string().starts_with(&format!("{}: not a trace", text.display())));
        let missing = d.path().join("missing");
        assert_eq!(detect(&missing).unwrap_err().kind, ErrorKind::Io);
    }

    #[test]
    fn directories_must_hold_one_trace() {
        let d = dir();
        let e = detect(d.path()).unwrap_err();
        assert!(e.message.starts_with("a directory without traces.otf2"), "{e}");
        let meta = d.path().join("run.meta");
        std::fs::write(&meta, "numprocs=1\nfileprefix=run\n").unwrap();
        assert_eq!(detect(d.path()).unwrap(), Detected::Dumpi(meta));
        std::fs::write(d.path().join("app.prv.gz"), []).unwrap();
        assert!(detect(d.path()).unwrap_err().message.starts_with("holds several traces"));
        let anchor = d.path().join("traces.otf2");
        std::fs::write(&anchor, []).unwrap();
        assert_eq!(detect(d.path()).unwrap(), Detected::Otf2(anchor));
    }
}
