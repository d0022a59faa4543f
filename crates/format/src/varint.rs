//! LEB128 varints and zigzag mapping, the integer encoding of the binary format.

/// Appends `v` as an unsigned LEB128 varint (7 bits a byte, low first, high bit = more).
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `at` (moved past it), from bytes this process coded itself: whole,
/// so past their end reads as 0 rather than failing (no check on the hot path of
/// in-memory lists; a file's bytes go through [`Cursor`]).
#[inline]
pub fn get_u64(bytes: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0u32);
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    v
}

/// The bytes of `v` as a varint.
#[inline(always)]
pub fn vlen(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Signed to unsigned with small magnitudes small: 0, -1, 1, -2 → 0, 1, 2, 3.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of `zigzag`.
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends `v` zigzag- and varint-coded.
#[inline]
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, zigzag(v));
}

/// Why a varint could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The input ended inside the varint.
    Truncated,
    /// More than 64 bits.
    Overflow,
}

/// A cursor over a byte slice that reads varints and fixed-width values.
/// `pos` is the offset of the next unread byte within the slice.
pub struct Cursor<'a> {
    /// The bytes.
    pub buf: &'a [u8],
    /// The offset of the next unread byte.
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next varint.
    #[inline(always)]
    pub fn u64(&mut self) -> Result<u64, VarintError> {
        // Fast paths: one-byte varints (ids, kinds, small deltas) and two-byte ones
        // (locations and time deltas of a few microseconds).
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
            if let Some(&b1) = self.buf.get(self.pos + 1) {
                if b1 < 0x80 {
                    self.pos += 2;
                    return Ok((b & 0x7f) as u64 | (b1 as u64) << 7);
                }
            }
        }
        // Up to eight bytes without a branch on their values, where eight can be read:
        // mixed lengths (time deltas, Lamport clocks) would mispredict a byte loop.
        if let Some(w) = self.buf.get(self.pos..self.pos + 8) {
            if let Some((x, len)) = from_word(u64::from_le_bytes(w.try_into().expect("eight bytes"))) {
                self.pos += len;
                return Ok(x);
            }
        }
        self.u64_slow()
    }

    /// Varints near the end of the buffer, and nine- or ten-byte ones: out of line,
    /// with the position by value, so that a decoding loop keeps its cursor in
    /// registers (a `&mut self` call would pin it to memory).
    #[inline(always)]
    fn u64_slow(&mut self) -> Result<u64, VarintError> {
        let (v, pos) = u64_slow(self.buf, self.pos)?;
        self.pos = pos;
        Ok(v)
    }

    /// The next zigzag varint.
    #[inline(always)]
    pub fn i64(&mut self) -> Result<i64, VarintError> {
        self.u64().map(unzigzag)
    }

    /// The next byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, VarintError> {
        let b = *self.buf.get(self.pos).ok_or(VarintError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], VarintError> {
        if n > self.remaining() {
            return Err(VarintError::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next little-endian f64.
    pub fn f64(&mut self) -> Result<f64, VarintError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }
}

/// The varint at the start of `word` (eight bytes, little-endian) and its length, without
/// a branch on its bytes; `None` when it is longer than eight bytes.
#[inline(always)]
pub(crate) fn from_word(word: u64) -> Option<(u64, usize)> {
    let ends = !word & 0x8080_8080_8080_8080;
    if ends == 0 {
        return None;
    }
    let len = (ends.trailing_zeros() + 1) / 8;
    let mut x = word & (u64::MAX >> (64 - len * 8)) & 0x7f7f_7f7f_7f7f_7f7f;
    x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
    x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
    x = ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff);
    Some((x, len as usize))
}

/// The varint at `pos` of `buf` and the position after it, a byte at a time.
#[inline(never)]
fn u64_slow(buf: &[u8], mut pos: usize) -> Result<(u64, usize), VarintError> {
    let mut v: u64 = 0;
    let mut shift = 0u32;
    loop {
        let Some(&b) = buf.get(pos) else {
            return Err(VarintError::Truncated);
        };
        pos += 1;
        if shift == 63 && b > 1 {
            return Err(VarintError::Overflow);
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Ok((v, pos));
        }
        shift += 7;
        if shift > 63 {
            return Err(VarintError::Overflow);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edges() {
        for v in [0u64, 1, 127, 128, 255, 16383, 16384, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut b = Vec::new();
            put_u64(&mut b, v);
            let mut c = Cursor::new(&b);
            assert_eq!(c.u64(), Ok(v));
            assert_eq!(c.remaining(), 0);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -64, 64] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn rejects_truncated_and_overlong() {
        assert_eq!(Cursor::new(&[0x80]).u64(), Err(VarintError::Truncated));
        assert_eq!(Cursor::new(&[0xff; 11]).u64(), Err(VarintError::Overflow));
        // Ten bytes whose last carries more than the 64th bit.
        let mut b = vec![0xffu8; 9];
        b.push(0x02);
        assert_eq!(Cursor::new(&b).u64(), Err(VarintError::Overflow));
        let mut b = vec![0xffu8; 9];
        b.push(0x01);
        assert_eq!(Cursor::new(&b).u64(), Ok(u64::MAX));
    }

    /// The byte-at-a-time reading of LEB128, to check the word-at-a-time fast path.
    fn reference(buf: &[u8]) -> Result<(u64, usize), VarintError> {
        let (mut v, mut shift) = (0u128, 0);
        for (i, &b) in buf.iter().enumerate() {
            v |= ((b & 0x7f) as u128) << shift;
            if b < 0x80 {
                return u64::try_from(v).map(|v| (v, i + 1)).map_err(|_| VarintError::Overflow);
            }
            shift += 7;
            if shift > 63 {
                return Err(VarintError::Overflow);
            }
        }
        Err(VarintError::Truncated)
    }

    proptest::proptest! {
        #[test]
        fn word_reading_agrees_with_bytes(v: u64, shift in 0u32..64, pad in 0usize..12, tail: Vec<u8>) {
            let mut b = Vec::new();
            put_u64(&mut b, v >> shift);
            b.extend(std::iter::repeat_n(0u8, pad));
            let mut c = Cursor::new(&b);
            proptest::prop_assert_eq!(c.u64(), Ok(v >> shift));
            // Any bytes, including overlong and truncated varints, anywhere in the buffer.
            for start in 0..tail.len() {
                let mut c = Cursor::new(&tail);
                c.pos = start;
                let got = c.u64().map(|x| (x, c.pos - start));
                proptest::prop_assert_eq!(got, reference(&tail[start..]));
            }
        }
    }
}
