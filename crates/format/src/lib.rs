//! The spoor trace format (formats/trace.md) and its text form (formats/text.md).
//!
//! [`TraceWriter`] writes the binary format; [`TraceReader`] reads the binary
//! format (plain or gzip-ed, from a file or a pipe) and the text form, detected
//! from the first bytes.

#![warn(missing_docs)]

pub mod binary;
pub mod brief;
pub mod csv;
mod error;
pub mod mem;
pub mod notes;
mod ordered;
pub mod queue;
pub mod raw;
mod reader;
mod sink;
pub mod spill;
pub mod text;
pub mod varint;
mod writer;

pub use error::{read_text, Error, ErrorKind};
pub use reader::{
    is_stream, BadBlock, Block, Events, NextBlock, OwnedRawBlock, RawBlock, ReadAhead, ReadOptions,
    SalvageReport, Stop, TraceReader,
};
pub use sink::{Count, EventSink, FnSink};
pub use writer::{TraceWriter, WriterOptions, GLOBAL_ORDER_BLOCK_EVENTS};
