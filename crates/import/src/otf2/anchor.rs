//! The anchor file (`traces.otf2`): an unchunked OTF2 buffer holding the
//! archive's version, chunk sizes, file substrate, compression, number of
//! locations and global definitions, creator, and properties.

use super::buf::{Cursor, BIG_ENDIAN, CHUNK_HEADER, END_OF_FILE, LITTLE_ENDIAN};
use spoor_format::{Error, ErrorKind};

/// The newest OTF2 major version this reader knows. Newer anchor files are
/// refused with a version error (exit code 3).
pub const MAX_MAJOR: u8 = 3;

/// The anchor file is a few hundred bytes; refuse anything absurd before reading it.
const MAX_ANCHOR_SIZE: u64 = 64 << 20;

#[derive(Clone, Debug, Default)]
pub struct Anchor {
    pub anchor_format: u8,
    pub trace_format: u8,
    pub version: (u8, u8, u8),
    pub chunk_size_events: u64,
    pub chunk_size_defs: u64,
    pub substrate: u8,
    pub compression: u8,
    pub locations: u64,
    pub global_defs: u64,
    pub machine: String,
    pub creator: String,
    pub description: String,
    pub properties: Vec<(String, String)>,
    pub trace_id: Option<u64>,
}

fn version_error(file: &str, offset: u64, message: String) -> Error {
    Error { kind: ErrorKind::Version, file: file.into(), offset: Some(offset), line: None, message }
}

/// Reads and parses the anchor file at `path` (named `file` in errors).
pub fn read(path: &std::path::Path, file: &str) -> Result<Anchor, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(file, &e))?;
    if meta.len() > MAX_ANCHOR_SIZE {
        return Err(Error::corrupt(
            file,
            0,
            format!(
                "an OTF2 anchor file of {} bytes: expected a small file (at most {MAX_ANCHOR_SIZE})",
                meta.len()
            ),
        ));
    }
    let data = std::fs::read(path).map_err(|e| Error::io(file, &e))?;
    parse(&data, file)
}

pub fn parse(data: &[u8], file: &str) -> Result<Anchor, Error> {
    let mut c = Cursor::new(data, file, 0, data.len(), false);
    let t = c.u8("the anchor file's buffer header")?;
    if t != CHUNK_HEADER {
        return Err(c.err(
            0,
            format!("not an OTF2 anchor file: expected the buffer header byte 0x03, found 0x{t:02x}"),
        ));
    }
    let e = c.u8("the byte-order marker")?;
    c.big = match e {
        LITTLE_ENDIAN => false,
        BIG_ENDIAN => true,
        _ => return Err(c.err(1, format!("expected a byte-order marker (0x42 or 0x23), found 0x{e:02x}"))),
    };
    let magic_at = c.pos;
    let magic = c.string("the magic string \"OTF2\"")?;
    if magic != "OTF2" {
        return Err(c.err(
            magic_at,
            format!("not an OTF2 anchor file: expected the magic \"OTF2\", found {magic:?}"),
        ));
    }
    let mut a = Anchor::default();
    let at = c.pos;
    a.anchor_format = c.u8("the anchor format version")?;
    if a.anchor_format == 0 {
        return Err(c.err(at, "anchor format version 0: expected 1 or later"));
    }
    a.trace_format = c.u8("the trace format version")?;
    let vat = c.pos;
    a.version =
        (c.u8("the OTF2 major version")?, c.u8("the OTF2 minor version")?, c.u8("the OTF2 bugfix version")?);
    if a.version.0 == 0 || a.version.0 > MAX_MAJOR {
        return Err(version_error(
            file,
            vat as u64,
            format!(
                "OTF2 version {}.{}.{}: this reader understands OTF2 1.x to {MAX_MAJOR}.x; upgrade spoor to read it",
                a.version.0, a.version.1, a.version.2
            ),
        ));
    }
    let at = c.pos;
    a.chunk_size_events = c.u64_full("the event chunk size")?;
    a.chunk_size_defs = c.u64_full("the definition chunk size")?;
    for (cs, what, off) in [(a.chunk_size_events, "event", at), (a.chunk_size_defs, "definition", at + 8)] {
        if !(64..=(1u64 << 40)).contains(&cs) {
            return Err(c.err(off, format!("{what} chunk size {cs}: expected between 64 bytes and 1 TiB")));
        }
    }
    let at = c.pos;
    a.substrate = c.u8("the file substrate")?;
    match a.substrate {
        1 => {}
        2 => {
            return Err(version_error(
                file,
                at as u64,
                "the archive uses the SION file substrate: only POSIX (one file per location) is supported"
                    .into(),
            ))
        }
        3 => return Err(version_error(file, at as u64, "the archive has no files (substrate NONE)".into())),
        s => return Err(c.err(at, format!("unknown file substrate {s}: expected 1 (POSIX)"))),
    }
    let at = c.pos;
    a.compression = c.u8("the compression")?;
    match a.compression {
        1 => {}
        2 => {
            return Err(version_error(
                file,
                at as u64,
                "the archive is zlib-compressed: not supported".into(),
            ))
        }
        s => return Err(c.err(at, format!("unknown compression {s}: expected 1 (none)"))),
    }
    a.locations = c.u64_full("the number of locations")?;
    a.global_defs = c.u64_full("the number of global definitions")?;
    a.machine = c.string("the machine name")?;
    a.creator = c.string("the creator")?;
    a.description = c.string("the description")?;
    if a.anchor_format > 1 {
        let at = c.pos;
        let n = c.u32_full("the number of properties")?;
        // Each property is two strings of at least one byte each.
        if n as usize > c.remaining() / 2 {
            return Err(c.err(at, format!("{n} properties cannot fit in the {} bytes left", c.remaining())));
        }
        for _ in 0..n {
            let k = c.string("a property name")?;
            let v = c.string("a property value")?;
            a.properties.push((k, v));
        }
        a.trace_id = Some(c.u64_full("the trace identifier")?);
    }
    if a.anchor_format > 2 {
        c.u32_full("the number of snapshots")?;
        c.u32_full("the number of thumbnails")?;
    }
    if a.anchor_format == 3 {
        let at = c.pos;
        let t = c.u8("the END_OF_FILE marker")?;
        if t != END_OF_FILE {
            return Err(c.err(at, format!("expected the END_OF_FILE marker (0x02), found 0x{t:02x}")));
        }
    }
    Ok(a)
}
