//! What the importers' tests share.

use std::path::PathBuf;

/// $SPOOR_DATA, or `None` with a message (a failure under CI, where it must be set).
pub fn data_dir() -> Option<PathBuf> {
    match std::env::var_os("SPOOR_DATA") {
        Some(d) => Some(PathBuf::from(d)),
        None if std::env::var_os("CI").is_some() => panic!("SPOOR_DATA is unset under CI"),
        None => {
            eprintln!("SPOOR_DATA unset: skipping the tests over real traces");
            None
        }
    }
}
