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

#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

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
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline(always)]
    pub fn u64(&mut self) -> Result<u64, VarintError> {
        // Fast paths: one- and two-byte varints (ids, small deltas).
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
        self.u64_slow()
    }

    #[inline(never)]
    fn u64_slow(&mut self) -> Result<u64, VarintError> {
        // Two- and three-byte varints (most time deltas) without the general loop.
        if let Some(b) = self.buf.get(self.pos..self.pos + 3) {
            let (b0, b1, b2) = (b[0] as u64, b[1] as u64, b[2] as u64);
            if b1 < 0x80 {
                self.pos += 2;
                return Ok((b0 & 0x7f) | (b1 << 7));
            }
            if b2 < 0x80 {
                self.pos += 3;
                return Ok((b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14));
            }
        }
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(VarintError::Truncated);
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(VarintError::Overflow);
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
            if shift > 63 {
                return Err(VarintError::Overflow);
            }
        }
    }

    #[inline(always)]
    pub fn i64(&mut self) -> Result<i64, VarintError> {
        self.u64().map(unzigzag)
    }

    #[inline]
    pub fn u8(&mut self) -> Result<u8, VarintError> {
        let b = *self.buf.get(self.pos).ok_or(VarintError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], VarintError> {
        if n > self.remaining() {
            return Err(VarintError::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn f64(&mut self) -> Result<f64, VarintError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
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
}
