//! The readers over files held in memory (`MemFiles`, what the fuzz targets
//! use) give what they give over the same files on disk: the same
//! definitions, events and statistics, and the same errors, naming the same
//! file and byte offset or line. Over the real traces of $SPOOR_DATA, and
//! small traces written here.

use spoor_format::{Error, ErrorKind};
use spoor_import::otf2::{LocationEvents, Otf2Archive, Otf2Options};
use spoor_import::paraver::{self, Header, ParaverOptions, ParaverStats, ParaverTrace};
use spoor_import::{dumpi, MemFiles, TraceFiles};
use spoor_model::{Definitions, Event};
use std::path::{Path, PathBuf};

mod common;
use common::data_dir;

/// The files under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(files_under(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// Every file under `dir`, by its path, in memory.
fn load(dir: &Path) -> MemFiles<'static> {
    let mut m = MemFiles::new();
    for p in files_under(dir) {
        let bytes = std::fs::read(&p).unwrap();
        m.insert(p, bytes);
    }
    m
}

/// A copy of the folder `src` in `to` (its canonical path returned), with
/// `file` (relative to it) changed by `change`.
fn copy_changed(src: &Path, to: &Path, file: &str, change: &dyn Fn(&mut Vec<u8>)) -> PathBuf {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    let to = std::fs::canonicalize(to).unwrap();
    for p in files_under(src) {
        let rel = p.strip_prefix(src).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        if rel == Path::new(file) {
            change(&mut bytes);
        }
        std::fs::create_dir_all(to.join(rel).parent().unwrap()).unwrap();
        std::fs::write(to.join(rel), bytes).unwrap();
    }
    to
}

/// Everything an archive gives: definitions, every location decoded, the
/// streamed blocks (location, event count, bytes) and skipped records.
type Otf2Read = (Definitions, Vec<LocationEvents>, Vec<(u32, u64, Vec<u8>)>, String);

fn read_otf2<F: TraceFiles>(a: Result<Otf2Archive<F>, Error>) -> Result<Otf2Read, Error> {
    let a = a?;
    let all = a.read_all()?;
    let mut blocks = Vec::new();
    let summary = a.for_each_block(16, |loc, b| {
        blocks.push((loc, b.count, b.buf));
        Ok::<(), Error>(())
    })?;
    Ok((a.definitions().clone(), all, blocks, format!("{summary:?}")))
}

fn otf2_both(anchor: &Path) -> (Result<Otf2Read, Error>, Result<Otf2Read, Error>) {
    let mem = load(anchor.parent().unwrap());
    let opts = Otf2Options::default();
    (read_otf2(Otf2Archive::open_with(anchor, opts)), read_otf2(Otf2Archive::open_from(&mem, anchor, opts)))
}

#[test]
fn otf2_from_memory_reads_as_from_files() {
    let Some(data) = data_dir() else { return };
    let data = std::fs::canonicalize(data).unwrap();
    let mut archives = 0;
    for d in std::fs::read_dir(data.join("otf2")).unwrap() {
        let anchor = d.unwrap().path().join("traces.otf2");
        if !anchor.is_file() {
            continue;
        }
        let (disk, mem) = otf2_both(&anchor);
        let disk = disk.unwrap();
        assert!(disk.1.iter().map(|l| l.events.len()).sum::<usize>() > 0);
        assert!(mem.unwrap() == disk, "{}: read from memory differs", anchor.display());
        archives += 1;
    }
    assert!(archives >= 3, "expected the archives of $SPOOR_DATA/otf2");

    // Errors: a truncated events file, a corrupt global definitions byte, a missing events file.
    let src = data.join("otf2/casita-4_mpi_ls_barr");
    let tmp = tempfile::tempdir().unwrap();
    let same_error = |file: &str, change: &dyn Fn(&mut Vec<u8>)| {
        let dir = copy_changed(&src, tmp.path(), file, change);
        let (disk, mem) = otf2_both(&dir.join("traces.otf2"));
        let e = disk.unwrap_err();
        assert!(e.file.ends_with(file) && e.offset.is_some(), "{e}");
        assert_eq!(mem.unwrap_err(), e);
    };
    let evt_len = std::fs::metadata(src.join("traces/0.evt")).unwrap().len() as usize;
    same_error("traces/0.evt", &|b| b.truncate(evt_len / 2));
    same_error("traces.def", &|b| b[0] = 0x13);
    let dir = copy_changed(&src, tmp.path(), "", &|_| {});
    std::fs::remove_file(dir.join("traces/1.evt")).unwrap();
    let (disk, mem) = otf2_both(&dir.join("traces.otf2"));
    let (disk, mem) = (disk.unwrap_err(), mem.unwrap_err());
    assert_eq!((mem.kind, &mem.file), (ErrorKind::Io, &disk.file));
    assert!(disk.file.ends_with("traces/1.evt"), "{disk}");
}

type ParaverRead = (Definitions, Vec<Event>, Header, ParaverStats, Vec<String>, Vec<(u64, String)>);

fn paraver_fields(t: ParaverTrace) -> ParaverRead {
    (t.defs, t.events, t.header, t.stats, t.warnings, t.skipped)
}

fn paraver_both(prv: &Path) -> (Result<ParaverRead, Error>, Result<ParaverRead, Error>) {
    let opts = ParaverOptions::default();
    let mem = load(prv.parent().unwrap());
    (
        paraver::read_paraver_with(prv, &opts).map(paraver_fields),
        paraver::read_paraver_from(&mem, prv, &opts).map(paraver_fields),
    )
}

#[test]
fn paraver_from_memory_reads_as_from_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    // A small trace, without .pcf and .row (warned), then a bad record line.
    let prv = dir.join("t.prv");
    let text = "#Paraver (01/01/2024 at 00:00):1000_ns:1(1):1:1(1:1),0\n2:1:1:1:1:0:50000001:1\n2:1:1:1:1:10:50000001:0\n";
    std::fs::write(&prv, text).unwrap();
    let (disk, mem) = paraver_both(&prv);
    let disk = disk.unwrap();
    assert_eq!(
        (disk.1.len(), disk.4.len()),
        (2, 2),
        "an Enter and a Leave; the .pcf and .row warned missing"
    );
    assert!(mem.unwrap() == disk);
    std::fs::write(&prv, format!("{text}2:1:1:1:1:x:1:1\n")).unwrap();
    let (disk, mem) = paraver_both(&prv);
    let e = disk.unwrap_err();
    assert_eq!((e.file.as_str(), e.line), (prv.to_str().unwrap(), Some(4)));
    assert_eq!(mem.err(), Some(e));

    let Some(data) = data_dir() else { return };
    let src = std::fs::canonicalize(data.join("paraver/pypop-epoch-2proc")).unwrap();
    let (disk, mem) = paraver_both(&src.join("epoch_2proc.prv.gz"));
    assert!(mem.unwrap() == disk.unwrap());
    // The gzip-ed .prv cut short: the same error.
    let gz_len = std::fs::metadata(src.join("epoch_2proc.prv.gz")).unwrap().len() as usize;
    let dir = copy_changed(&src, &dir.join("cut"), "epoch_2proc.prv.gz", &|b| b.truncate(gz_len / 2));
    let (disk, mem) = paraver_both(&dir.join("epoch_2proc.prv.gz"));
    let e = disk.unwrap_err();
    assert!(e.file.ends_with("epoch_2proc.prv.gz"), "{e}");
    assert_eq!(mem.err(), Some(e));
}

type DumpiRead = (Definitions, Vec<Event>, Vec<dumpi::RankStats>, u64, Vec<String>);

fn dumpi_fields(t: dumpi::DumpiTrace) -> DumpiRead {
    (t.defs, t.events, t.ranks, t.wall_offset_s, t.warnings)
}

fn dumpi_both(meta: &Path) -> (Result<DumpiRead, Error>, Result<DumpiRead, Error>) {
    let mem = load(meta.parent().unwrap());
    (dumpi::read_dumpi_full(meta).map(dumpi_fields), dumpi::read_dumpi_from(&mem, meta).map(dumpi_fields))
}

#[test]
fn dumpi_from_memory_reads_as_from_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    // A rank file missing: the same error, naming it.
    std::fs::write(dir.join("t.meta"), "numprocs=2\nfileprefix=t\n").unwrap();
    std::fs::write(dir.join("t-0000.bin"), b"").unwrap();
    let (disk, mem) = dumpi_both(&dir.join("t.meta"));
    let e = disk.unwrap_err();
    assert!(e.file.ends_with("t-0001.bin") && e.message.contains("rank 1"), "{e}");
    assert_eq!(mem.err(), Some(e));

    let Some(data) = data_dir() else { return };
    let src = std::fs::canonicalize(data.join("dumpi/sst-dumpi-testtrace")).unwrap();
    let (disk, mem) = dumpi_both(&src.join("testtrace.meta"));
    assert!(mem.unwrap() == disk.unwrap());
    // A rank file cut short: the same error, naming it and the offset.
    let bin_len = std::fs::metadata(src.join("testtrace-0002.bin")).unwrap().len() as usize;
    let dir = copy_changed(&src, &dir.join("cut"), "testtrace-0002.bin", &|b| b.truncate(bin_len / 2));
    let (disk, mem) = dumpi_both(&dir.join("testtrace.meta"));
    let e = disk.unwrap_err();
    assert!(e.file.ends_with("testtrace-0002.bin") && e.offset.is_some(), "{e}");
    assert_eq!(mem.err(), Some(e));
}
