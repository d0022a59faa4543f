//! The data model shared by every spoor crate (design.md, "The data model").
//!
//! A trace is a set of [`Definitions`] (string table, applications, machines,
//! processes, locations, communicators, metrics, properties) and a stream of
//! [`Event`]s. Each event belongs to one location (a thread of a process of an
//! application on a machine), carries its wall time and, where known, the CPU
//! time of its process, both in nanoseconds, and a [`Kind`] with its payload.

#![warn(missing_docs)]

pub mod calls;
mod clock;
mod defs;
mod event;
mod feedback;
pub mod placement;

pub use clock::ClockViolations;
pub use defs::*;
pub use event::*;
pub use feedback::{Collected, Feedback, Silent};
