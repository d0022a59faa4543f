//! Readers for other tools' trace formats, converting them to spoor's data
//! model (`spoor_model`). No command-line parsing here: `bin/spoor-import`
//! does that.
//!
//! - [`otf2`]: OTF2 archives (Score-P), a native reader (no C library).
//! - [`paraver`]: Paraver traces (Extrae): `.prv` (plain or gzip-ed) with its `.pcf` and `.row`.
//! - [`dumpi`]: SST DUMPI traces: the `.meta` file and one `.bin` per rank.
//!
//! [`detect`] tells which of them a path holds.
//!
//! Each reads its files through [`TraceFiles`]: the entry points that take
//! paths read the file system, their `_from` forms ([`Otf2Archive::open_from`],
//! [`paraver::read_paraver_from`], [`dumpi::read_dumpi_from`]) any source,
//! such as files in memory ([`MemFiles`]).

mod detect;
pub mod dumpi;
pub mod files;
mod mpi;
pub mod otf2;
pub mod paraver;

pub use detect::{detect, Detected};
pub use dumpi::{read_dumpi, read_dumpi_from, read_dumpi_full, DumpiTrace};
pub use files::{Disk, MemFiles, TraceFiles};
pub use otf2::{ClockInfo, ClockMode, LocationEvents, Otf2Archive, Otf2Options};
pub use paraver::{read_paraver, read_paraver_from, read_paraver_with, ParaverOptions, ParaverTrace};
