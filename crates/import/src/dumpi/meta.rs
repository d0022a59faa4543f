//! The `.meta` file: `key=value` lines, of which `numprocs` and `fileprefix`
//! are required; rank r's trace is `<dir of .meta>/<fileprefix>-<r>.bin` with
//! r zero-padded to 4 digits (or the first width from 4 to 9, then 0 to 3,
//! under which every rank's file exists, as DUMPI's tools search).

use crate::files::{Disk, TraceFiles};
use spoor_format::Error;
use std::path::{Path, PathBuf};

/// The most ranks a `.meta` may announce.
pub const MAX_RANKS: u64 = 1 << 24;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub numprocs: u32,
    pub fileprefix: String,
    /// Every `key=value` pair, in file order.
    pub pairs: Vec<(String, String)>,
}

/// Parses a `.meta` file's text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Meta, Error> {
    let mut numprocs = None;
    let mut fileprefix = None;
    let mut pairs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(Error::at_line(file, line_no, format!("expected key=value, found {line:?}")));
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "numprocs" => {
                let n = v.parse::<u64>().ok().filter(|&n| (1..=MAX_RANKS).contains(&n)).ok_or_else(|| {
                    Error::at_line(
                        file,
                        line_no,
                        format!("numprocs {v:?} is not a rank count from 1 to {MAX_RANKS}"),
                    )
                })?;
                numprocs = Some(n as u32);
            }
            "fileprefix" => {
                if v.is_empty() {
                    return Err(Error::at_line(file, line_no, "empty fileprefix"));
                }
                fileprefix = Some(v.to_string());
            }
            _ => {}
        }
        pairs.push((k.to_string(), v.to_string()));
    }
    match (numprocs, fileprefix) {
        (Some(numprocs), Some(fileprefix)) => Ok(Meta { numprocs, fileprefix, pairs }),
        _ => Err(Error::at_line(
            file,
            text.lines().count() as u64 + 1,
            "a DUMPI .meta needs numprocs= and fileprefix= lines",
        )),
    }
}

/// The `.bin` of every rank announced by the `.meta` at `meta_path`.
pub fn rank_files(meta_path: &Path, meta: &Meta) -> Result<Vec<PathBuf>, Error> {
    rank_files_from(&Disk, meta_path, meta)
}

/// [`rank_files`] among `files`.
pub fn rank_files_from(
    files: &impl TraceFiles,
    meta_path: &Path,
    meta: &Meta,
) -> Result<Vec<PathBuf>, Error> {
    let dir = meta_path.parent().unwrap_or(Path::new(""));
    let mut prefixes = vec![dir.join(&meta.fileprefix)];
    if let Some(base) = Path::new(&meta.fileprefix).file_name() {
        let p = dir.join(base);
        if p != prefixes[0] {
            prefixes.push(p);
        }
    }
    let name = |prefix: &Path, width: usize, r: u32| -> PathBuf {
        let mut s = prefix.as_os_str().to_owned();
        s.push(format!("-{r:0width$}.bin"));
        PathBuf::from(s)
    };
    for prefix in &prefixes {
        for i in 0..10 {
            let width = (4 + i) % 10;
            if (0..meta.numprocs).all(|r| files.is_file(&name(prefix, width, r))) {
                return Ok((0..meta.numprocs).map(|r| name(prefix, width, r)).collect());
            }
        }
    }
    // Name the first missing file under the usual width.
    let r = (0..meta.numprocs).find(|&r| !files.is_file(&name(&prefixes[0], 4, r))).unwrap_or(0);
    let missing = name(&prefixes[0], 4, r);
    Err(Error::io(
        &missing.display().to_string(),
        &std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "rank {r}'s trace is missing ({} announces {} ranks)",
                meta_path.display(),
                meta.numprocs
            ),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let m = parse("t.meta", "hostname=h\nnumprocs=4\nfileprefix=testtrace\nversion=1\n").unwrap();
        assert_eq!(m.numprocs, 4);
        assert_eq!(m.fileprefix, "testtrace");
        assert_eq!(m.pairs.len(), 4);
    }

    #[test]
    fn malformed() {
        assert_eq!(parse("t.meta", "numprocs=4\nbogus line\n").unwrap_err().line, Some(2));
        assert_eq!(parse("t.meta", "numprocs=-4\nfileprefix=x\n").unwrap_err().line, Some(1));
        assert_eq!(parse("t.meta", "numprocs=99999999999\nfileprefix=x\n").unwrap_err().line, Some(1));
        assert!(parse("t.meta", "numprocs=4\n").is_err());
    }
}
