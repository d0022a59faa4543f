//! Where the readers find a trace's files: the file system ([`Disk`], what
//! the entry points that take paths use) or files held in memory
//! ([`MemFiles`], for tests and fuzzing, with no system call per file).
//! Either way a file is named by its path, and errors name it and the byte
//! offset or line the same way.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};
use std::path::{Component, Path, PathBuf};

/// The files of a trace, by path. `Sync`: the readers read files from several threads.
pub trait TraceFiles: Sync {
    /// The whole file.
    fn read(&self, path: &Path) -> io::Result<Cow<'_, [u8]>>;

    /// The file from its start, buffered.
    fn open(&self, path: &Path) -> io::Result<Box<dyn BufRead + '_>>;

    /// The file's length in bytes.
    fn file_len(&self, path: &Path) -> io::Result<u64>;

    /// True if `path` is a file (not a folder).
    fn is_file(&self, path: &Path) -> bool;

    /// The whole file, mapped if it is a real one (see [`Contents`]); a
    /// `windowed` map reads no page now (the caller reads it in a window at a time).
    fn map(&self, path: &Path, windowed: bool) -> io::Result<Contents<'_>>;

    /// `path` with links and `.`/`..` resolved (for a folder's name).
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
}

impl<T: TraceFiles + ?Sized> TraceFiles for &T {
    fn read(&self, path: &Path) -> io::Result<Cow<'_, [u8]>> {
        (**self).read(path)
    }
    fn open(&self, path: &Path) -> io::Result<Box<dyn BufRead + '_>> {
        (**self).open(path)
    }
    fn file_len(&self, path: &Path) -> io::Result<u64> {
        (**self).file_len(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        (**self).is_file(path)
    }
    fn map(&self, path: &Path, windowed: bool) -> io::Result<Contents<'_>> {
        (**self).map(path, windowed)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        (**self).canonicalize(path)
    }
}

/// A whole file's bytes: a read-only map of a real file, or bytes in memory.
pub struct Contents<'a>(Held<'a>);

enum Held<'a> {
    Mapped(memmap2::Mmap),
    Bytes(&'a [u8]),
}

impl<'a> From<&'a [u8]> for Contents<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Contents(Held::Bytes(bytes))
    }
}

impl std::ops::Deref for Contents<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Held::Mapped(m) => m,
            Held::Bytes(b) => b,
        }
    }
}

impl Contents<'_> {
    /// The map, for a real file: its pages can be read in and released.
    pub(crate) fn mapped(&self) -> Option<&memmap2::Mmap> {
        match &self.0 {
            Held::Mapped(m) => Some(m),
            Held::Bytes(_) => None,
        }
    }
}

/// The file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct Disk;

/// The buffer of a file read in a stream (the Paraver `.prv`).
const STREAM_BUFFER: usize = 1 << 16;

impl TraceFiles for Disk {
    fn read(&self, path: &Path) -> io::Result<Cow<'_, [u8]>> {
        std::fs::read(path).map(Cow::Owned)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn BufRead + '_>> {
        Ok(Box::new(BufReader::with_capacity(STREAM_BUFFER, std::fs::File::open(path)?)))
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        std::fs::metadata(path).map(|m| m.len())
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn map(&self, path: &Path, windowed: bool) -> io::Result<Contents<'_>> {
        let file = std::fs::File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(Contents(Held::Bytes(&[])));
        }
        let mut opts = memmap2::MmapOptions::new();
        if !windowed {
            opts.populate();
        }
        // SAFETY: the map is read-only and private to this call; trace files are
        // not modified while they are read (a concurrent writer could only change
        // the bytes decoded, which are all checked).
        let map = unsafe { opts.map(&file)? };
        Ok(Contents(Held::Mapped(map)))
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
}

/// Files held in memory, by path: owned or borrowed bytes. Paths are
/// compared without their `.` components (`./t.def` is `t.def`); there are
/// no folders nor links, and a path not inserted is not found.
#[derive(Clone, Debug, Default)]
pub struct MemFiles<'a> {
    files: HashMap<PathBuf, Cow<'a, [u8]>>,
}

/// `path` without its `.` components: the key of its file.
fn key(path: &Path) -> PathBuf {
    path.components().filter(|c| *c != Component::CurDir).collect()
}

impl<'a> MemFiles<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the file at `path`.
    pub fn insert(&mut self, path: impl AsRef<Path>, bytes: impl Into<Cow<'a, [u8]>>) -> &mut Self {
        self.files.insert(key(path.as_ref()), bytes.into());
        self
    }

    /// The file at `path`, or a `NotFound` error.
    pub fn get(&self, path: &Path) -> io::Result<&[u8]> {
        self.files
            .get(&key(path))
            .map(|b| b.as_ref())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file in memory"))
    }
}

impl TraceFiles for MemFiles<'_> {
    fn read(&self, path: &Path) -> io::Result<Cow<'_, [u8]>> {
        self.get(path).map(Cow::Borrowed)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn BufRead + '_>> {
        Ok(Box::new(self.get(path)?))
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        self.get(path).map(|b| b.len() as u64)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(&key(path))
    }

    fn map(&self, path: &Path, _windowed: bool) -> io::Result<Contents<'_>> {
        self.get(path).map(Contents::from)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        Ok(key(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn memory_files_by_path() {
        let mut m = MemFiles::new();
        m.insert("a/t.def", &b"defs"[..]).insert("t.evt", vec![1u8, 2, 3]);
        assert_eq!(m.read(Path::new("./a/t.def")).unwrap().as_ref(), b"defs");
        assert_eq!(&*m.map(Path::new("t.evt"), true).unwrap(), &[1, 2, 3]);
        assert_eq!(m.file_len(Path::new("a/./t.def")).unwrap(), 4);
        assert!(m.is_file(Path::new("t.evt")) && !m.is_file(Path::new("a")));
        let mut s = String::new();
        m.open(Path::new("a/t.def")).unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "defs");
        assert_eq!(m.read(Path::new("b")).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert_eq!(m.canonicalize(Path::new(".")).unwrap().file_name(), None);
    }
}
