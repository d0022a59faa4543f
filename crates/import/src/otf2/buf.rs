//! The byte level of OTF2 files: chunk headers, markers, byte order, and the
//! compressed integers.
//!
//! Every OTF2 file is a sequence of chunks. A chunk starts with a header:
//! the byte 0x03, the byte order of the chunk (0x42 little-endian, 0x23
//! big-endian) and, in chunked files (definitions and events), the numbers of
//! the chunk's first and last event as two full 8-byte integers. The anchor
//! file is one unchunked buffer (no event numbers). Records follow; a chunk's
//! unused tail is filled with end-of-chunk markers (0x00) and the last chunk
//! of a file ends with an end-of-file marker (0x02).
//!
//! Compressed integers: the first byte is the number `n` of bytes that
//! follow, the low `n` bytes of the value in the chunk's byte order; 0x00 is
//! the value 0 and 0xFF the all-ones value (OTF2's "undefined"). Unsigned
//! 32-bit values use at most 4 bytes, 64-bit values at most 8. Signed values
//! are stored as their unsigned bit pattern. Timestamps and a few other fields
//! are full (uncompressed) 8-byte integers.

use std::borrow::Cow;

pub const END_OF_CHUNK: u8 = 0;
pub const END_OF_FILE: u8 = 2;
pub const CHUNK_HEADER: u8 = 3;
pub const TIMESTAMP: u8 = 5;
pub const ATTRIBUTE_LIST: u8 = 6;

pub const LITTLE_ENDIAN: u8 = 0x42;
pub const BIG_ENDIAN: u8 = 0x23;

/// The size of a chunk header in chunked files.
pub const CHUNK_HEADER_LEN: usize = 18;

/// Something wrong at a byte offset of a buffer; the caller adds the file name
/// and the buffer's own offset in the file.
#[derive(Clone, Debug)]
pub struct Bad {
    pub at: usize,
    pub msg: Cow<'static, str>,
}

impl Bad {
    pub fn new(at: usize, msg: impl Into<Cow<'static, str>>) -> Self {
        Bad { at, msg: msg.into() }
    }
}

pub type R<T> = Result<T, Bad>;

/// A chunk header: byte order and, for chunked files, the event numbers.
#[derive(Clone, Copy, Debug)]
pub struct ChunkHeader {
    pub big_endian: bool,
    pub first_event: u64,
    pub last_event: u64,
}

/// Reads the chunk header at the start of `d` (`chunked`: with event numbers).
pub fn chunk_header(d: &[u8], chunked: bool) -> R<ChunkHeader> {
    let need = if chunked { CHUNK_HEADER_LEN } else { 2 };
    if d.len() < need {
        return Err(Bad::new(d.len(), format!("truncated chunk header: {} of {need} bytes", d.len())));
    }
    if d[0] != CHUNK_HEADER {
        return Err(Bad::new(0, format!("expected a chunk header (0x03), found 0x{:02x}", d[0])));
    }
    let big_endian = match d[1] {
        LITTLE_ENDIAN => false,
        BIG_ENDIAN => true,
        b => return Err(Bad::new(1, format!("invalid byte-order mark 0x{b:02x} (expected 0x42 or 0x23)"))),
    };
    let (first_event, last_event) =
        if chunked { (full_u64(d, 2, big_endian), full_u64(d, 10, big_endian)) } else { (0, 0) };
    Ok(ChunkHeader { big_endian, first_event, last_event })
}

/// A full 8-byte integer at `p`; the caller has checked that 8 bytes remain.
#[inline(always)]
pub fn full_u64(d: &[u8], p: usize, be: bool) -> u64 {
    let b: [u8; 8] = d[p..p + 8].try_into().unwrap();
    if be {
        u64::from_be_bytes(b)
    } else {
        u64::from_le_bytes(b)
    }
}

/// The value of `n` (1..=8) payload bytes given as the 8 bytes after the length byte.
#[inline(always)]
fn payload<const BE: bool>(raw: [u8; 8], n: u32) -> u64 {
    if BE {
        u64::from_be_bytes(raw) >> (64 - 8 * n)
    } else {
        u64::from_le_bytes(raw) & (u64::MAX >> (64 - 8 * n))
    }
}

/// A compressed integer of at most `max` payload bytes at `*p`, in the byte
/// order `BE`; `d` is the whole chunk (reading never goes past its end).
#[inline(always)]
pub fn compressed<const BE: bool>(d: &[u8], p: &mut usize, max: u8) -> R<u64> {
    let at = *p;
    if at + 9 <= d.len() {
        let n = d[at];
        let raw: [u8; 8] = d[at + 1..at + 9].try_into().unwrap();
        if n == 0 {
            *p = at + 1;
            return Ok(0);
        }
        if n == 0xff {
            *p = at + 1;
            return Ok(if max == 4 { u32::MAX as u64 } else { u64::MAX });
        }
        if n <= max {
            *p = at + 1 + n as usize;
            return Ok(payload::<BE>(raw, n as u32));
        }
        return Err(bad_size(at, n));
    }
    compressed_slow::<BE>(d, p, max)
}

#[cold]
fn bad_size(at: usize, n: u8) -> Bad {
    Bad::new(at, format!("invalid compressed-integer size byte 0x{n:02x}"))
}

#[cold]
#[inline(never)]
fn compressed_slow<const BE: bool>(d: &[u8], p: &mut usize, max: u8) -> R<u64> {
    let at = *p;
    let Some(&n) = d.get(at) else {
        return Err(Bad::new(at, "truncated: expected a compressed integer"));
    };
    match n {
        0 => {
            *p = at + 1;
            Ok(0)
        }
        0xff => {
            *p = at + 1;
            Ok(if max == 4 { u32::MAX as u64 } else { u64::MAX })
        }
        n if n <= max => {
            let end = at + 1 + n as usize;
            if end > d.len() {
                return Err(Bad::new(at, "truncated compressed integer"));
            }
            let mut raw = [0u8; 8];
            raw[..n as usize].copy_from_slice(&d[at + 1..end]);
            *p = end;
            Ok(payload::<BE>(raw, n as u32))
        }
        n => Err(bad_size(at, n)),
    }
}

/// A record's length field at `*p`: one byte, or 0xFF and a full 8-byte length.
#[inline(always)]
pub fn record_len<const BE: bool>(d: &[u8], p: &mut usize) -> R<usize> {
    let at = *p;
    match d.get(at) {
        Some(&l) if l != 0xff => {
            *p = at + 1;
            Ok(l as usize)
        }
        Some(_) => {
            if at + 9 > d.len() {
                return Err(Bad::new(at, "truncated record length"));
            }
            let l = full_u64(d, at + 1, BE);
            *p = at + 9;
            usize::try_from(l).map_err(|_| Bad::new(at, format!("record length {l} is impossible")))
        }
        None => Err(Bad::new(at, "truncated: expected a record length")),
    }
}

/// A bounded reader for the non-hot paths (anchor, definitions): reads stop
/// at `end`, the end of the record (or buffer) being read.
pub struct Cursor<'a> {
    pub d: &'a [u8],
    pub pos: usize,
    pub end: usize,
    pub be: bool,
}

impl<'a> Cursor<'a> {
    pub fn new(d: &'a [u8], pos: usize, end: usize, be: bool) -> Self {
        Cursor { d, pos, end: end.min(d.len()), be }
    }

    pub fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    fn need(&self, n: usize, what: &str) -> R<()> {
        if self.pos + n > self.end {
            Err(Bad::new(self.pos, format!("truncated: expected {what}")))
        } else {
            Ok(())
        }
    }

    pub fn u8(&mut self) -> R<u8> {
        self.need(1, "a byte")?;
        self.pos += 1;
        Ok(self.d[self.pos - 1])
    }

    pub fn full_u32(&mut self) -> R<u32> {
        self.need(4, "a 4-byte integer")?;
        let b: [u8; 4] = self.d[self.pos..self.pos + 4].try_into().unwrap();
        self.pos += 4;
        Ok(if self.be { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
    }

    pub fn full_u64(&mut self) -> R<u64> {
        self.need(8, "an 8-byte integer")?;
        let v = full_u64(self.d, self.pos, self.be);
        self.pos += 8;
        Ok(v)
    }

    pub fn f64(&mut self) -> R<f64> {
        Ok(f64::from_bits(self.full_u64()?))
    }

    fn compressed(&mut self, max: u8) -> R<u64> {
        let d = &self.d[..self.end];
        if self.be {
            compressed::<true>(d, &mut self.pos, max)
        } else {
            compressed::<false>(d, &mut self.pos, max)
        }
    }

    pub fn u32c(&mut self) -> R<u32> {
        Ok(self.compressed(4)? as u32)
    }

    pub fn u64c(&mut self) -> R<u64> {
        self.compressed(8)
    }

    pub fn i64c(&mut self) -> R<i64> {
        Ok(self.compressed(8)? as i64)
    }

    /// A NUL-terminated string (invalid UTF-8 is replaced).
    pub fn string(&mut self) -> R<String> {
        let rest = &self.d[self.pos.min(self.end)..self.end];
        let Some(n) = rest.iter().position(|&b| b == 0) else {
            return Err(Bad::new(self.pos, "truncated: a string without its terminating NUL"));
        };
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers_in_both_byte_orders() {
        // 0x1234 in two bytes, then 0, then undefined, then 5 in one byte.
        let le = [2u8, 0x34, 0x12, 0, 0xff, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let be = [2u8, 0x12, 0x34, 0, 0xff, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        for (d, big) in [(&le[..], false), (&be[..], true)] {
            let mut c = Cursor::new(d, 0, 7, big);
            assert_eq!(c.u32c().unwrap(), 0x1234);
            assert_eq!(c.u64c().unwrap(), 0);
            assert_eq!(c.u32c().unwrap(), u32::MAX);
            assert_eq!(c.u64c().unwrap(), 5);
            assert!(c.at_end());
            assert!(c.u64c().is_err());
        }
        // The fast path (9 bytes available) and the slow path agree.
        let d = [8u8, 1, 2, 3, 4, 5, 6, 7, 8];
        let mut p = 0;
        assert_eq!(compressed::<false>(&d, &mut p, 8).unwrap(), 0x0807060504030201);
        let mut p = 0;
        assert_eq!(compressed::<true>(&d, &mut p, 8).unwrap(), 0x0102030405060708);
        let mut p = 0;
        assert_eq!(compressed_slow::<false>(&d, &mut p, 8).unwrap(), 0x0807060504030201);
        // Too many bytes for a 32-bit value; truncated values.
        let mut p = 0;
        assert!(compressed::<false>(&d, &mut p, 4).is_err());
        let mut p = 0;
        assert!(compressed::<false>(&d[..5], &mut p, 8).is_err());
    }

    #[test]
    fn chunk_headers() {
        let mut h = vec![3u8, 0x42];
        h.extend(7u64.to_le_bytes());
        h.extend(9u64.to_le_bytes());
        let c = chunk_header(&h, true).unwrap();
        assert_eq!((c.big_endian, c.first_event, c.last_event), (false, 7, 9));
        assert!(chunk_header(&h[..10], true).is_err());
        h[1] = 0x11;
        assert!(chunk_header(&h, true).is_err());
        h[0] = 4;
        assert!(chunk_header(&h, true).is_err());
    }
}
