//! Readers for other tools' trace formats, converting them to spoor's data
//! model (`spoor_model`). No command-line parsing here: `bin/spoor-import`
//! does that.
//!
//! - [`otf2`]: OTF2 archives (Score-P), a native reader (no C library).
//! - [`paraver`]: Paraver traces (Extrae): `.prv` (plain or gzip-ed) with its `.pcf` and `.row`.
//! - [`dumpi`]: SST DUMPI traces: the `.meta` file and one `.bin` per rank.

pub mod dumpi;
pub mod otf2;
pub mod paraver;

pub use dumpi::{read_dumpi, read_dumpi_full, DumpiTrace};
pub use otf2::{ClockInfo, ClockMode, LocationEvents, Otf2Archive, Otf2Options};
pub use paraver::{read_paraver, read_paraver_with, ParaverOptions, ParaverTrace};
