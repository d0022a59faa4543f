//! Copying a trace's blocks to a writer without encoding them again where nothing in
//! them changes: blocks are decoded in parallel (checking that they are canonical, see
//! `spoor_format::raw`), and every full canonical block whose place in the output is a
//! whole block of its own is written as it is. The output is byte for byte what
//! writing every event one by one would give.

use crate::{Error, Result};
use spoor_format::raw::{decode_block_canonical, BlockFacts, EncodedBlock};
use spoor_format::{TraceReader, TraceWriter};
use spoor_model::{Event, Feedback};
use std::cell::Cell;
use std::io::Write;

/// Events written so far, told to a [`Feedback`] a block's worth (4,096) at a time: the
/// events of [`copy_through`] come one by one or a whole block at once.
pub(crate) struct Written<'a> {
    feedback: &'a dyn Feedback,
    /// What is counted, as the feedback names it (`events`, `writing: events`).
    unit: &'static str,
    total: Option<u64>,
    done: Cell<u64>,
}

impl<'a> Written<'a> {
    pub(crate) fn new(feedback: &'a dyn Feedback, unit: &'static str, total: Option<u64>) -> Self {
        Written { feedback, unit, total, done: Cell::new(0) }
    }

    pub(crate) fn add(&self, k: u64) {
        let before = self.done.get();
        self.done.set(before + k);
        if (before + k) >> 12 != before >> 12 {
            self.feedback.progress(self.unit, before + k, self.total);
        }
    }
}

/// What the parallel decoding makes of a block.
enum Piece {
    /// A canonical block whose events `keep` accepts: perhaps copied as it is.
    Copy(BlockFacts, Vec<u8>),
    /// Anything else: its events, to be written one by one.
    Events(Vec<Event>),
}

/// Reads every remaining block of `r` and writes its events to `w` through `each`
/// (which may change or check them), except that a block of events `keep` accepts
/// (events `each` would write unchanged) is copied when the writer takes it whole.
/// `copied` is told of every copied block. Returns the number of events.
pub fn copy_through<W: Write>(
    r: &mut TraceReader,
    w: &mut TraceWriter<W>,
    keep: &(dyn Fn(&Event) -> bool + Sync),
    each: &mut dyn FnMut(&mut TraceWriter<W>, Event) -> Result<()>,
    copied: &mut dyn FnMut(&BlockFacts),
    full: u64,
) -> Result<u64> {
    let name = r.name().to_owned();
    let mut events = 0u64;
    let mut write = |w: &mut TraceWriter<W>, evs: Vec<Event>| -> Result<()> {
        for ev in evs {
            each(w, ev)?;
        }
        Ok(())
    };
    let read = r.par_raw_blocks_each(
        |d, raw| {
            raw.check_crc()?;
            let locs = d.locations.len();
            let mut ok = true;
            let facts = decode_block_canonical(raw.payload, raw.form(), locs, |ev| ok &= keep(&ev))
                .map_err(|e| raw.error(e))?;
            if ok && facts.canonical && facts.count == full {
                return Ok(Piece::Copy(facts, raw.payload.to_vec()));
            }
            let mut evs = Vec::with_capacity(facts.count as usize);
            spoor_format::binary::decode_block(raw.payload, raw.form(), locs, |e| evs.push(e))
                .map_err(|e| raw.error(e))?;
            Ok(Piece::Events(evs))
        },
        |_, b| Piece::Events(b.events),
        |piece| -> Result<()> {
            match piece {
                Piece::Copy(f, payload) => {
                    events += f.count;
                    if w.takes_block(f.loc, f.count) {
                        copied(&f);
                        let b = EncodedBlock {
                            loc: f.loc,
                            count: f.count,
                            min_wall: f.min_wall,
                            max_wall: f.max_wall,
                            payload,
                        };
                        w.write_block(&b).map_err(Error::Write)
                    } else {
                        let mut evs = Vec::with_capacity(f.count as usize);
                        match spoor_format::binary::decode_block(&payload, f.form, usize::MAX, |e| {
                            evs.push(e)
                        }) {
                            Ok(_) => write(w, evs),
                            Err(e) => Err(Error::input(&name, e.message)),
                        }
                    }
                }
                Piece::Events(evs) => {
                    events += evs.len() as u64;
                    write(w, evs)
                }
            }
        },
    );
    read?;
    Ok(events)
}
