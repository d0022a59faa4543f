//! Low-level decoding of OTF2 buffers: chunks, record framing and OTF2's own
//! integer compression.
//!
//! Every OTF2 file except the anchor is a sequence of chunks of exactly
//! `chunk_size` bytes (the last one may be shorter: it is written only up to
//! its last used byte). A chunk starts with an 18-byte header:
//!
//! ```text
//! 0x03 (CHUNK_HEADER)  endianness (0x42 little, 0x23 big)
//! first event number (u64)  last event number (u64)
//! ```
//!
//! and continues with records until a `0x00` (END_OF_CHUNK) byte, after which
//! the reader jumps to the next chunk boundary. The file ends with `0x02`
//! (END_OF_FILE), usually followed by `0x01` (END_OF_BUFFER). The anchor file
//! has a 2-byte header (type and endianness only) and no chunking.
//!
//! A record is a type byte and, for all but the ten "singleton" event types
//! (one compressed attribute and nothing else), a length: one byte if below
//! 255, else `0xFF` followed by the length as a full 8-byte integer. Fields
//! inside are either "full" fixed-width integers in the chunk's byte order,
//! or compressed integers: a size byte `n` in `1..=8` followed by the `n`
//! low-order bytes of the value (in the chunk's byte order), where the size
//! byte `0x00` alone means 0 and `0xFF` alone means all bits set (OTF2's
//! UNDEFINED value). Strings are NUL-terminated.

use spoor_format::Error;

/// The record types OTF2 reserves for buffer management.
pub const END_OF_CHUNK: u8 = 0;
pub const END_OF_BUFFER: u8 = 1;
pub const END_OF_FILE: u8 = 2;
pub const CHUNK_HEADER: u8 = 3;
pub const TIMESTAMP: u8 = 5;
pub const ATTRIBUTE_LIST: u8 = 6;

pub const LITTLE_ENDIAN: u8 = 0x42;
pub const BIG_ENDIAN: u8 = 0x23;

/// Decodes a compressed unsigned integer of at most `max` payload bytes at
/// `data[*pos..]`, advancing `pos`. `None` if the bytes end early or the size
/// byte is out of range.
#[inline]
fn compressed(data: &[u8], pos: &mut usize, max: u8, big: bool) -> Result<u64, &'static str> {
    let Some(&size) = data.get(*pos) else {
        return Err("the data ends before a compressed integer");
    };
    if size == 0 {
        *pos += 1;
        return Ok(0);
    }
    if size == 0xFF {
        *pos += 1;
        return Ok(if max == 4 { u32::MAX as u64 } else { u64::MAX });
    }
    if size > max {
        return Err("the size byte of a compressed integer is out of range");
    }
    let start = *pos + 1;
    let end = start + size as usize;
    let Some(bytes) = data.get(start..end) else {
        return Err("the data ends inside a compressed integer");
    };
    let mut v: u64 = 0;
    if big {
        for &b in bytes {
            v = (v << 8) | b as u64;
        }
    } else {
        for (i, &b) in bytes.iter().enumerate() {
            v |= (b as u64) << (8 * i);
        }
    }
    *pos = end;
    Ok(v)
}

/// A cursor over a byte range of one file, with the file's name and the
/// absolute offset of the range so that errors can say where they happened.
#[derive(Clone, Copy)]
pub struct Cursor<'a> {
    pub data: &'a [u8],
    /// Position of the next byte, as an absolute offset into the file.
    pub pos: usize,
    /// End of the readable range (absolute, exclusive).
    pub end: usize,
    pub big: bool,
    pub file: &'a str,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], file: &'a str, start: usize, end: usize, big: bool) -> Self {
        let end = end.min(data.len());
        Cursor { data, pos: start.min(end), end, big, file }
    }

    pub fn err(&self, at: usize, msg: impl Into<String>) -> Error {
        Error::corrupt(self.file, at as u64, msg)
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    #[inline]
    pub fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    #[inline]
    fn bytes(&self) -> &'a [u8] {
        &self.data[..self.end]
    }

    #[inline]
    pub fn u8(&mut self, what: &str) -> Result<u8, Error> {
        match self.bytes().get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.err(self.pos, format!("the data ends before {what} (a byte)"))),
        }
    }

    #[inline]
    fn fixed<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Error> {
        match self.bytes().get(self.pos..self.pos + N) {
            Some(b) => {
                self.pos += N;
                let mut a = [0u8; N];
                a.copy_from_slice(b);
                Ok(a)
            }
            None => Err(self.err(self.pos, format!("the data ends before {what} ({N} bytes)"))),
        }
    }

    #[inline]
    pub fn u32_full(&mut self, what: &str) -> Result<u32, Error> {
        let a = self.fixed::<4>(what)?;
        Ok(if self.big { u32::from_be_bytes(a) } else { u32::from_le_bytes(a) })
    }

    #[inline]
    pub fn u64_full(&mut self, what: &str) -> Result<u64, Error> {
        let a = self.fixed::<8>(what)?;
        Ok(if self.big { u64::from_be_bytes(a) } else { u64::from_le_bytes(a) })
    }

    #[inline]
    pub fn f64(&mut self, what: &str) -> Result<f64, Error> {
        Ok(f64::from_bits(self.u64_full(what)?))
    }

    /// A compressed 32-bit integer (`0xFF` alone is `u32::MAX`).
    #[inline]
    pub fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let at = self.pos;
        let data = self.bytes();
        compressed(data, &mut self.pos, 4, self.big)
            .map(|v| v as u32)
            .map_err(|m| self.err(at, format!("{m} (reading {what})")))
    }

    /// A compressed 64-bit integer (`0xFF` alone is `u64::MAX`).
    #[inline]
    pub fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let at = self.pos;
        let data = self.bytes();
        compressed(data, &mut self.pos, 8, self.big)
            .map_err(|m| self.err(at, format!("{m} (reading {what})")))
    }

    /// A compressed signed 64-bit integer (two's complement of the unsigned form).
    #[inline]
    pub fn i64(&mut self, what: &str) -> Result<i64, Error> {
        self.u64(what).map(|v| v as i64)
    }

    /// A NUL-terminated string (invalid UTF-8 is replaced, not refused).
    pub fn string(&mut self, what: &str) -> Result<String, Error> {
        let rest = &self.bytes()[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.pos += n + 1;
                Ok(s)
            }
            None => {
                Err(self.err(self.pos, format!("{what}: no terminating NUL byte before the end of the data")))
            }
        }
    }

    /// Reads a record length (1 byte, or `0xFF` and 8 bytes) and returns a
    /// cursor over the record's data; `self` moves past the record. The record
    /// must lie within this cursor's range.
    #[inline]
    pub fn record(&mut self, name: &str) -> Result<Cursor<'a>, Error> {
        let at = self.pos;
        let small = self.u8("a record length")?;
        let len = if small == 0xFF { self.u64_full("a record length")? } else { small as u64 };
        if len > self.remaining() as u64 {
            return Err(self.err(
                at,
                format!(
                    "{name} record length {len} runs past the end of its chunk ({} bytes left)",
                    self.remaining()
                ),
            ));
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(Cursor { data: self.data, pos: start, end: self.pos, big: self.big, file: self.file })
    }
}

/// One chunk's header.
#[derive(Clone, Copy, Debug)]
pub struct ChunkHeader {
    /// Absolute offset of the chunk in its file.
    pub start: usize,
    pub first_event: u64,
    pub last_event: u64,
}

/// Reads a chunked file (global definitions, local definitions, events): a
/// cursor over the current chunk plus the logic to step to the next one.
pub struct Chunked<'a> {
    pub cur: Cursor<'a>,
    chunk_size: usize,
    pub header: ChunkHeader,
}

impl<'a> Chunked<'a> {
    pub fn new(data: &'a [u8], file: &'a str, chunk_size: u64) -> Result<Self, Error> {
        if data.is_empty() {
            return Err(Error::corrupt(file, 0, "the file is empty: expected an OTF2 chunk header (0x03)"));
        }
        let chunk_size = usize::try_from(chunk_size).unwrap_or(usize::MAX);
        let mut c = Chunked {
            cur: Cursor::new(data, file, 0, 0, false),
            chunk_size,
            header: ChunkHeader { start: 0, first_event: 0, last_event: 0 },
        };
        c.open_chunk(0)?;
        Ok(c)
    }

    fn open_chunk(&mut self, start: usize) -> Result<(), Error> {
        let data = self.cur.data;
        let file = self.cur.file;
        let end = start.saturating_add(self.chunk_size).min(data.len());
        let mut cur = Cursor::new(data, file, start, end, false);
        let t = cur.u8("a chunk header")?;
        if t != CHUNK_HEADER {
            return Err(cur.err(start, format!("expected a chunk header (0x03), found 0x{t:02x}")));
        }
        let e = cur.u8("the byte-order marker of a chunk header")?;
        cur.big = match e {
            LITTLE_ENDIAN => false,
            BIG_ENDIAN => true,
            _ => {
                return Err(cur.err(
                    start + 1,
                    format!(
                        "expected a byte-order marker (0x42 or 0x23) in the chunk header, found 0x{e:02x}"
                    ),
                ))
            }
        };
        let first_event = cur.u64_full("the first event number of a chunk header")?;
        let last_event = cur.u64_full("the last event number of a chunk header")?;
        self.header = ChunkHeader { start, first_event, last_event };
        self.cur = cur;
        Ok(())
    }

    /// Steps to the next chunk after an END_OF_CHUNK byte at `at`.
    pub fn next_chunk(&mut self, at: usize) -> Result<(), Error> {
        let next = self.header.start.saturating_add(self.chunk_size);
        if next >= self.cur.data.len() {
            return Err(self.cur.err(
                at,
                format!(
                    "end of chunk, but the file ends there ({} bytes, chunk size {}): expected another chunk \
                     or an END_OF_FILE record (truncated file?)",
                    self.cur.data.len(),
                    self.chunk_size
                ),
            ));
        }
        self.open_chunk(next)
    }

    /// The next record type byte, or an error naming what was expected if the
    /// chunk's data ends.
    #[inline]
    pub fn record_type(&mut self) -> Result<u8, Error> {
        if self.cur.at_end() {
            return Err(self.cur.err(
                self.cur.pos,
                "the data ends inside a chunk: expected a record, END_OF_CHUNK or END_OF_FILE (truncated file?)",
            ));
        }
        let b = self.cur.data[self.cur.pos];
        self.cur.pos += 1;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers() {
        let cases: &[(&[u8], u64)] = &[
            (&[0], 0),
            (&[0xFF], u64::MAX),
            (&[1, 0xd0], 0xd0),
            (&[2, 0x34, 0x12], 0x1234),
            (&[8, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], (-10i64) as u64),
        ];
        for (bytes, v) in cases {
            let mut c = Cursor::new(bytes, "t", 0, bytes.len(), false);
            assert_eq!(c.u64("x").unwrap(), *v);
            assert!(c.at_end());
        }
        let mut c = Cursor::new(&[0xFF], "t", 0, 1, false);
        assert_eq!(c.u32("x").unwrap(), u32::MAX);
        let mut c = Cursor::new(&[2, 0x12, 0x34], "t", 0, 3, true);
        assert_eq!(c.u32("x").unwrap(), 0x1234);
        let mut c = Cursor::new(&[5, 1, 2, 3, 4, 5], "t", 0, 6, false);
        assert!(c.u32("x").is_err());
        let mut c = Cursor::new(&[3, 1, 2], "t", 0, 3, false);
        let e = c.u64("x").unwrap_err();
        assert_eq!(e.offset, Some(0));
    }

    #[test]
    fn record_lengths_are_bounded() {
        let data = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1];
        let mut c = Cursor::new(&data, "t", 0, data.len(), false);
        assert!(c.record("X").is_err());
        let data = [2, 7, 8, 9];
        let mut c = Cursor::new(&data, "t", 0, data.len(), false);
        let mut r = c.record("X").unwrap();
        assert_eq!(r.u8("a").unwrap(), 7);
        assert_eq!(r.u8("b").unwrap(), 8);
        assert!(r.u8("c").is_err());
        assert_eq!(c.pos, 3);
    }
}
