//! A location's event times, each kept as its difference from the one before, zigzag and
//! varint coded, with every [`STRIDE`]-th time kept whole beside them: about 2 bytes an
//! event where a `Vec<i64>` takes 8, read in order through [`Times::iter`] or one at
//! random through [`Times::get`] (at most `STRIDE - 1` differences decoded).

use spoor_format::varint::{get_u64, put_i64, unzigzag};
use spoor_model::EventRef;

/// How often a time is kept whole: a random read decodes at most this many less one
/// differences; the marks take 16 bytes per this many events.
pub const STRIDE: u64 = 64;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Times {
    /// The differences of the times that are not marked.
    bytes: Vec<u8>,
    /// Per `STRIDE` times, the first one's value and where the differences after it begin.
    marks: Vec<(i64, usize)>,
    len: u64,
    last: i64,
}

impl Times {
    /// Empty, with room for as many times as `other` holds, as closely spaced.
    pub fn with_room_of(other: &Times) -> Times {
        Times {
            bytes: Vec::with_capacity(other.bytes.len()),
            marks: Vec::with_capacity(other.marks.len()),
            ..Times::default()
        }
    }

    #[inline]
    pub fn push(&mut self, t: i64) {
        if self.len.is_multiple_of(STRIDE) {
            self.marks.push((t, self.bytes.len()));
        } else {
            put_i64(&mut self.bytes, t.wrapping_sub(self.last));
        }
        self.last = t;
        self.len += 1;
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn first(&self) -> Option<i64> {
        self.marks.first().map(|m| m.0)
    }

    pub fn last(&self) -> Option<i64> {
        (self.len > 0).then_some(self.last)
    }

    /// The time of event `index`.
    pub fn get(&self, index: u64) -> Option<i64> {
        if index >= self.len {
            return None;
        }
        let (mut t, mut at) = self.marks[(index / STRIDE) as usize];
        for _ in 0..index % STRIDE {
            t = t.wrapping_add(unzigzag(get_u64(&self.bytes, &mut at)));
        }
        Some(t)
    }

    /// The times in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { times: self, next: 0, at: 0, t: 0 }
    }

    /// Gives back what growing left unused.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.marks.shrink_to_fit();
    }

    /// The memory the times take.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.marks.capacity() * std::mem::size_of::<(i64, usize)>()
    }
}

impl FromIterator<i64> for Times {
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Times {
        let mut times = Times::default();
        for t in iter {
            times.push(t);
        }
        times.shrink_to_fit();
        times
    }
}

/// The times of a [`Times`] in order.
#[derive(Clone)]
pub struct Iter<'a> {
    times: &'a Times,
    next: u64,
    at: usize,
    t: i64,
}

impl Iterator for Iter<'_> {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        if self.next >= self.times.len {
            return None;
        }
        if self.next.is_multiple_of(STRIDE) {
            (self.t, self.at) = self.times.marks[(self.next / STRIDE) as usize];
        } else {
            self.t = self.t.wrapping_add(unzigzag(get_u64(&self.times.bytes, &mut self.at)));
        }
        self.next += 1;
        Some(self.t)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.times.len - self.next) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Per-location times that events can be looked up in: plain vectors, or [`Times`].
pub trait Walls {
    /// The time of event `e` (which must exist).
    fn wall(&self, e: EventRef) -> i64;
}

impl Walls for [Vec<i64>] {
    fn wall(&self, e: EventRef) -> i64 {
        self[e.loc as usize][e.index as usize]
    }
}

impl Walls for [Times] {
    fn wall(&self, e: EventRef) -> i64 {
        self[e.loc as usize].get(e.index).expect("an event the trace has")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every time reads back, in order and at random, across marks and at the extremes.
    #[test]
    fn times_read_back() {
        let mut v: Vec<i64> = (0..200).map(|i| i * 1_000 + (i % 7) * 13).collect();
        v.extend([i64::MAX, i64::MIN, 0, -5, i64::MAX, 3]);
        for n in [0, 1, 31, 32, 33, 64, v.len()] {
            let times: Times = v[..n].iter().copied().collect();
            assert_eq!(times.len(), n as u64);
            assert_eq!(times.iter().collect::<Vec<_>>(), v[..n]);
            assert_eq!(times.iter().len(), n);
            for (i, &t) in v[..n].iter().enumerate() {
                assert_eq!(times.get(i as u64), Some(t), "time {i} of {n}");
            }
            assert_eq!(times.get(n as u64), None);
            assert_eq!(times.first(), v[..n].first().copied());
            assert_eq!(times.last(), v[..n].last().copied());
        }
    }

    /// Times a microsecond or so apart take a byte or two each, not eight.
    #[test]
    fn close_times_are_small() {
        let times: Times = (0..100_000i64).map(|i| i * 1_500 + (i * 7919) % 300).collect();
        assert!(times.heap_bytes() < 100_000 * 3, "{} bytes", times.heap_bytes());
    }
}
