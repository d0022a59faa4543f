//! What the targets that read several files share: one input split into the
//! files, and a scratch folder (per process) to write them to.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Separates the files of one input (`fuzz/seed` writes seeds in this layout).
pub const SEPARATOR: &[u8] = b"\n%%spoor-fuzz-file%%\n";

/// The input's files, in order: the bytes between separators.
pub fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        parts.push(&rest[..at]);
        rest = &rest[at + SEPARATOR.len()..];
    }
    parts.push(rest);
    parts
}

/// An empty folder of this process under `$TMPDIR` (use /dev/shm to keep the
/// disk out of it), emptied at each call: no file of one input is seen by the next.
pub fn scratch(target: &str) -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir =
        DIR.get_or_init(|| std::env::temp_dir().join(format!("spoor-fuzz-{target}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("scratch folder");
    dir
}

/// Writes `bytes` to `dir/name`, making the folders on the way.
pub fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("scratch folder");
    }
    std::fs::write(&path, bytes).expect("scratch file");
    path
}
