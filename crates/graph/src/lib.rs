//! The Program Activity Graph (PAG) of an ordered trace and its critical paths
//! (design.md: spoor-pag, spoor-cp; formats/pag.md is the normative description).
//!
//! [`build::build`] turns a trace into a [`Pag`]; [`cp::critical_path`] finds the
//! longest path for a scope, window and set of zeroed procedures; [`profile`] sums a
//! path by application, machine, process, thread, procedure or message arc;
//! [`whatif::zeroing`] is critical-path zeroing; [`mod@file`] reads and writes PAG files;
//! [`window`] reads `--window` and `--phase` and cuts the sub-PAG of a stretch.

#![warn(missing_docs)]

pub mod build;
mod cost;
pub mod cp;
mod error;
pub mod file;
pub mod inflight;
pub mod mem;
pub mod near;
pub mod net;
pub mod pag;
pub mod profile;
pub mod show;
pub mod spilled;
pub mod streamed;
pub mod whatif;
pub mod window;

pub use cost::{Local, Mode, NetTable};
pub use cp::{critical_path, CpOptions, CriticalPath, Scale, Scope};
pub use error::{Error, Result};
pub use net::Network;
pub use pag::{Pag, PhaseMark};
pub use window::WindowError;
