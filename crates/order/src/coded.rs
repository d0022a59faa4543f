//! Per-location lists kept delta and varint coded, read in order: what matching leaves
//! for the replay (each location's fixed partners and points) takes a few bytes an
//! entry instead of 16 or 20, and a trace holds nearly one for every event that
//! synchronizes.

use crate::matching::Point;
use spoor_format::varint::{get_u64, put_i64, put_u64, unzigzag};
use spoor_model::EventRef;
use std::marker::PhantomData;

/// What a [`Coded`] list holds for each event index.
pub trait Entry: Sized {
    /// Writes the entry of event `index`.
    fn put(&self, index: u64, out: &mut Vec<u8>);
    /// Reads the entry of event `index` at `at` (moved past it).
    fn get(bytes: &[u8], at: &mut usize, index: u64) -> Self;
}

/// A location's entries by event index, pushed in index order. A place in it is (the
/// position of an entry's value, its event index); past the last, the index is
/// `u64::MAX`.
#[derive(Clone, Debug)]
pub struct Coded<T> {
    bytes: Vec<u8>,
    len: usize,
    last: u64,
    entries: PhantomData<T>,
}

impl<T> Default for Coded<T> {
    fn default() -> Self {
        Coded { bytes: Vec::new(), len: 0, last: 0, entries: PhantomData }
    }
}

impl<T: Entry> Coded<T> {
    /// Codes `entries` (sorted by index).
    pub fn from_sorted(entries: impl IntoIterator<Item = (u64, T)>) -> Coded<T> {
        let mut c = Coded::default();
        for (index, v) in entries {
            debug_assert!(c.len == 0 || index >= c.last, "entries in index order");
            put_u64(&mut c.bytes, index.wrapping_sub(c.last));
            v.put(index, &mut c.bytes);
            c.last = index;
            c.len += 1;
        }
        c.bytes.shrink_to_fit();
        c
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first entry's place.
    pub fn first(&self) -> (usize, u64) {
        self.after(0, 0)
    }

    /// The place of the entry whose index follows at `end` (the end of the entry of
    /// index `index`).
    #[inline]
    pub fn after(&self, end: usize, index: u64) -> (usize, u64) {
        if end >= self.bytes.len() {
            return (end, u64::MAX);
        }
        let mut at = end;
        let next = index.wrapping_add(get_u64(&self.bytes, &mut at));
        (at, next)
    }

    /// The entry at place `(at, index)`, and where it ends.
    #[inline]
    pub fn get(&self, at: usize, index: u64) -> (T, usize) {
        let mut end = at;
        let v = T::get(&self.bytes, &mut end, index);
        (v, end)
    }

    /// Where its bytes are at `at` (for asking for them ahead).
    pub fn bytes_at(&self, at: usize) -> *const u8 {
        self.bytes.as_ptr().wrapping_add(at)
    }

    /// Every (index, entry), in order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, T)> + '_ {
        let mut place = self.first();
        std::iter::from_fn(move || {
            if place.1 == u64::MAX {
                return None;
            }
            let (v, end) = self.get(place.0, place.1);
            let index = place.1;
            place = self.after(end, index);
            Some((index, v))
        })
    }
}

/// A partner: its location, and its index as a difference from the event's own (the
/// other side of a message has about as many events before it).
impl Entry for EventRef {
    fn put(&self, index: u64, out: &mut Vec<u8>) {
        put_u64(out, self.loc.into());
        put_i64(out, self.index.wrapping_sub(index) as i64);
    }

    #[inline]
    fn get(bytes: &[u8], at: &mut usize, index: u64) -> EventRef {
        let loc = get_u64(bytes, at) as u32;
        EventRef { loc, index: index.wrapping_add(unzigzag(get_u64(bytes, at)) as u64) }
    }
}

impl Entry for Point {
    fn put(&self, index: u64, out: &mut Vec<u8>) {
        match *self {
            Point::Source => out.push(0),
            Point::Recv { from } | Point::Acquire { from } => {
                out.push(if matches!(self, Point::Recv { .. }) { 1 } else { 2 });
                from.put(index, out);
            }
            Point::CollBegin { inst, member } => {
                out.push(3);
                put_u64(out, inst.into());
                put_u64(out, member.into());
            }
            Point::CollEnd { inst, member, also_begin } => {
                out.push(if also_begin { 5 } else { 4 });
                put_u64(out, inst.into());
                put_u64(out, member.into());
            }
            Point::Spawn { parent } => {
                out.push(6);
                put_u64(out, parent.into());
            }
        }
    }

    #[inline]
    fn get(bytes: &[u8], at: &mut usize, index: u64) -> Point {
        let tag = bytes.get(*at).copied().unwrap_or(0);
        *at += 1;
        match tag {
            1 => Point::Recv { from: EventRef::get(bytes, at, index) },
            2 => Point::Acquire { from: EventRef::get(bytes, at, index) },
            3..=5 => {
                let inst = get_u64(bytes, at) as u32;
                let member = get_u64(bytes, at) as u32;
                match tag {
                    3 => Point::CollBegin { inst, member },
                    t => Point::CollEnd { inst, member, also_begin: t == 5 },
                }
            }
            6 => Point::Spawn { parent: get_u64(bytes, at) as u32 },
            _ => Point::Source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry reads back as it was coded, at the ends of each field's range, and
    /// the places walk the list in order to its end.
    #[test]
    fn entries_read_back_in_order() {
        let refs = [
            EventRef { loc: 0, index: 0 },
            EventRef { loc: u32::MAX, index: u64::MAX },
            EventRef { loc: 7, index: 1 << 40 },
        ];
        let mut points = Vec::new();
        for &from in &refs {
            points.extend([Point::Recv { from }, Point::Acquire { from }]);
        }
        for (inst, member) in [(0, 0), (u32::MAX, u32::MAX)] {
            points.extend([
                Point::CollBegin { inst, member },
                Point::CollEnd { inst, member, also_begin: false },
                Point::CollEnd { inst, member, also_begin: true },
            ]);
        }
        points.extend([Point::Source, Point::Spawn { parent: u32::MAX }]);
        let indices: Vec<u64> =
            (0..points.len() as u64).map(|i| i * i * 1_000_003).chain([u64::MAX - 1]).collect();
        let made: Vec<(u64, Point)> =
            indices.iter().zip(points.iter().cycle()).map(|(&i, &p)| (i, p)).collect();
        let coded = Coded::from_sorted(made.iter().copied());
        assert_eq!(coded.len(), made.len());
        assert_eq!(coded.iter().collect::<Vec<_>>(), made);
        let partners: Vec<(u64, EventRef)> =
            indices.iter().zip(refs.iter().cycle()).map(|(&i, &r)| (i, r)).collect();
        let coded = Coded::from_sorted(partners.iter().copied());
        assert_eq!(coded.iter().collect::<Vec<_>>(), partners);
        let empty: Coded<Point> = Coded::default();
        assert_eq!(empty.first().1, u64::MAX);
        assert!(empty.iter().next().is_none());
    }
}
