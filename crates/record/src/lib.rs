//! spoor-record: recording spoor traces from running programs.
//!
//! [`Recorder`] writes one trace file per process in the binary format of
//! formats/trace.md, with bounded memory (per-thread buffers written out as blocks), wall
//! time and CPU time on every event, and a flush on exit paths and fatal signals. It is the
//! Rust API for Rust programs (see [`Recorder::start`] and the helpers on [`Recorder`]),
//! and the core of the LD_PRELOAD library that records MPI and `-finstrument-functions`
//! programs (crates/record-preload).
//!
//! ```no_run
//! use spoor_record::{Config, Recorder};
//! let rec = Recorder::start(Config::new("traces", "demo", "server", 0)).unwrap();
//! let client = rec.peer("client", 1);
//! let world = rec.comm("world", &[rec.location(), client]);
//! let serve = rec.procedure("serve");
//! {
//!     let _g = rec.scope(serve);
//!     rec.recv_begin(Some(client), world, Some(7));
//!     rec.recv_end(client, world, 7, 128);
//! }
//! rec.finish().unwrap();
//! ```

pub mod clock;
mod cpus;
pub mod encode;
pub mod launch;
mod recorder;
pub mod signals;
mod symbols;

pub use recorder::{file_safe, hostname, Config, CpuClock, ProcGuard, Recorder, DEFAULT_CPU_INTERVAL_NS};
