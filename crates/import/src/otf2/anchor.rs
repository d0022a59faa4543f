//! The anchor file (`traces.otf2`): the archive's version, chunk sizes,
//! substrate, compression, creator and properties.
//!
//! Layout (one unchunked little- or big-endian buffer): a chunk header (0x03
//! and the byte-order mark), the string "OTF2", the anchor format (1..3), the
//! trace format, the OTF2 version (major, minor, bugfix), the event and the
//! definition chunk sizes (8 bytes each), the file substrate and compression
//! (a byte each), the numbers of locations and of global definitions (8 bytes
//! each), the machine name, creator and description (strings); since anchor
//! format 2 the properties (a 4-byte count, then name and value strings) and
//! the trace id (8 bytes); since format 3 the numbers of snapshots and
//! thumbnails (4 bytes each); then an end-of-file marker.

use super::buf::{chunk_header, Bad, Cursor};

/// The newest OTF2 major version this reader knows.
pub const MAX_MAJOR: u8 = 3;

const SUBSTRATE_POSIX: u8 = 1;
const SUBSTRATE_SION: u8 = 2;
const SUBSTRATE_NONE: u8 = 3;
const COMPRESSION_NONE: u8 = 1;
const COMPRESSION_ZLIB: u8 = 2;

#[derive(Clone, Debug, Default)]
pub struct Anchor {
    pub version: (u8, u8, u8),
    pub chunk_size_events: u64,
    pub chunk_size_defs: u64,
    pub locations: u64,
    pub global_defs: u64,
    pub machine: String,
    pub creator: String,
    pub description: String,
    pub properties: Vec<(String, String)>,
    pub trace_id: u64,
}

/// Why an anchor cannot be read: bad bytes, or a version/feature this reader lacks.
pub enum AnchorError {
    Corrupt(Bad),
    Unsupported(usize, String),
}

impl From<Bad> for AnchorError {
    fn from(b: Bad) -> Self {
        AnchorError::Corrupt(b)
    }
}

pub fn parse(d: &[u8]) -> Result<Anchor, AnchorError> {
    let h = chunk_header(d, false)?;
    let mut c = Cursor::new(d, 2, d.len(), h.big_endian);
    let magic_at = c.pos;
    let magic = c.string().map_err(|_| Bad::new(magic_at, "not an OTF2 anchor file: no \"OTF2\" magic"))?;
    if magic != "OTF2" {
        return Err(Bad::new(magic_at, "not an OTF2 anchor file: no \"OTF2\" magic").into());
    }
    let format_at = c.pos;
    let anchor_format = c.u8()?;
    if anchor_format == 0 {
        return Err(Bad::new(format_at, "invalid anchor format 0").into());
    }
    let _trace_format = c.u8()?;
    let version_at = c.pos;
    let version = (c.u8()?, c.u8()?, c.u8()?);
    if version.0 > MAX_MAJOR {
        return Err(AnchorError::Unsupported(
            version_at,
            format!(
                "OTF2 version {}.{}.{} is newer than this reader (it reads OTF2 1.x to {MAX_MAJOR}.x): upgrade spoor",
                version.0, version.1, version.2
            ),
        ));
    }
    if version.0 == 0 {
        return Err(Bad::new(version_at, "invalid OTF2 version 0.x").into());
    }
    let mut a = Anchor { version, ..Anchor::default() };
    let sizes_at = c.pos;
    a.chunk_size_events = c.full_u64()?;
    a.chunk_size_defs = c.full_u64()?;
    for (what, s) in [("event", a.chunk_size_events), ("definition", a.chunk_size_defs)] {
        // OTF2 writes chunks of 256 KiB to 16 MiB.
        if !(64..=1 << 26).contains(&s) {
            return Err(Bad::new(sizes_at, format!("implausible {what} chunk size {s}")).into());
        }
    }
    let sub_at = c.pos;
    match c.u8()? {
        SUBSTRATE_POSIX | SUBSTRATE_NONE => {}
        SUBSTRATE_SION => {
            return Err(AnchorError::Unsupported(sub_at, "SIONlib archives are not supported".into()))
        }
        s => return Err(Bad::new(sub_at, format!("unknown file substrate {s}")).into()),
    }
    let comp_at = c.pos;
    match c.u8()? {
        COMPRESSION_NONE => {}
        COMPRESSION_ZLIB => {
            return Err(AnchorError::Unsupported(
                comp_at,
                "zlib-compressed OTF2 archives are not supported".into(),
            ))
        }
        s => return Err(Bad::new(comp_at, format!("unknown compression {s}")).into()),
    }
    a.locations = c.full_u64()?;
    a.global_defs = c.full_u64()?;
    a.machine = c.string()?;
    a.creator = c.string()?;
    a.description = c.string()?;
    if anchor_format > 1 {
        let n_at = c.pos;
        let n = c.full_u32()?;
        // A property is at least two NUL bytes.
        if n as usize > c.remaining() / 2 {
            return Err(Bad::new(n_at, format!("{n} properties cannot fit in the anchor file")).into());
        }
        for _ in 0..n {
            let k = c.string()?;
            let v = c.string()?;
            a.properties.push((k, v));
        }
        a.trace_id = c.full_u64()?;
    }
    if anchor_format > 2 {
        let _snapshots = c.full_u32()?;
        let _thumbnails = c.full_u32()?;
    }
    if anchor_format == 3 {
        let at = c.pos;
        if c.u8()? != super::buf::END_OF_FILE {
            return Err(Bad::new(at, "expected the end-of-file marker of the anchor file").into());
        }
    }
    Ok(a)
}
