//! One rank's DUMPI `.bin` file: lead-in magic, the stream of call records,
//! the header, footer and label sections, and the trailing index of section
//! offsets. All integers are big-endian.
//!
//! ```text
//! 0        ff aa dd 'D' 'U' 'M' 'P' 'I'
//! body     u32 cpu bias (s), u32 wall bias (s), then records until label 293:
//!          u16 label, u8 mask, [u16 thread if mask & 0x40],
//!          [cpu start, cpu stop if mask & 0x04], [wall start, wall stop if mask & 0x08]
//!              (each u16 seconds minus the bias, u32 ns),
//!          [u8, then per perf counter label two u64 if mask & 0x80],
//!          arguments (layout.rs); statuses only if mask & 0x03
//! header   u8 version[3], u64 start time, u16-length host and user names, mesh
//! footer   u64 0xf007fee7, u32 call count per label (291), u32 ignored count per label
//! sizes    i32 n, n x i32: the size of each datatype id
//! perf     i32 n, n x u16-length counter names
//! funcs    i32 n, n x (u64 address, u16-length name)
//! index    (last 8, 7, 6 or 5 u64 by version) magic, [sizes], [funcs], [perf], header, body, footer, keyval
//! ```

use super::layout::{self, Arg, Ty, END_OF_STREAM, FINALIZE};
use spoor_format::Error;
use std::collections::HashMap;

/// The lead-in magic, also the first entry of the index.
pub const MAGIC: [u8; 8] = [0xff, 0xaa, 0xdd, b'D', b'U', b'M', b'P', b'I'];
const FOOTER_MAGIC: u64 = 0xf007_fee7;

/// One MPI status as DUMPI stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub bytes: i32,
    pub source: i32,
    pub cancelled: u8,
    pub error: u8,
    /// Absent before DUMPI 0.6.3.
    pub tag: Option<i32>,
}

/// An argument's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Int(i64),
    Ints(Vec<i64>),
    Str(String),
    Strs(Vec<String>),
    /// Statuses (empty if not recorded or ignored).
    Statuses(Vec<Status>),
    /// Read over, not kept (nested string and integer arrays).
    Skipped,
}

/// One call record, times in ns (absolute: bias and unwrapped seconds included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub label: u16,
    /// Byte offset of the record in the file.
    pub offset: u64,
    pub thread: u16,
    /// CPU time at entry and exit, if recorded.
    pub cpu: Option<(i64, i64)>,
    /// Wall time at entry and exit, if recorded.
    pub wall: Option<(i64, i64)>,
    pub args: Vec<(&'static str, Val)>,
}

impl Call {
    pub fn get(&self, name: &str) -> Option<&Val> {
        self.args.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// An integer argument.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Val::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// An integer array argument (empty if absent).
    pub fn ints(&self, name: &str) -> &[i64] {
        match self.get(name) {
            Some(Val::Ints(v)) => v,
            _ => &[],
        }
    }

    /// A status argument (empty if absent or not recorded).
    pub fn statuses(&self, name: &str) -> &[Status] {
        match self.get(name) {
            Some(Val::Statuses(v)) => v,
            _ => &[],
        }
    }
}

/// A decoded `.bin` file.
#[derive(Clone, Debug, Default)]
pub struct BinFile {
    pub version: (u8, u8, u8),
    pub start_time: u64,
    pub hostname: String,
    pub username: String,
    /// Size in bytes of each datatype id.
    pub datatype_sizes: Vec<i64>,
    pub perf_labels: Vec<String>,
    /// Names of profiled functions by address.
    pub functions: HashMap<u64, String>,
    /// Calls per label as the footer counts them (index = label), if the footer is there.
    pub footer_counts: Option<Vec<u32>>,
    pub cpu_bias: u32,
    pub wall_bias: u32,
    pub calls: Vec<Call>,
}

struct Cur<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    file: &'a str,
}

impl<'a> Cur<'a> {
    fn at(data: &'a [u8], pos: usize, end: usize, file: &'a str) -> Self {
        Cur { data, pos, end: end.min(data.len()), file }
    }

    fn left(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if self.left() < n {
            return Err(Error::corrupt(
                self.file,
                self.pos as u64,
                format!("truncated: {n} bytes of {what} expected, {} left", self.left()),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, Error> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i32(&mut self, what: &str) -> Result<i32, Error> {
        Ok(self.u32(what)? as i32)
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }

    /// A 32-bit element count (negative means none), checked against the bytes left
    /// given each element takes at least `min_size` bytes.
    fn count(&mut self, min_size: usize, what: &str) -> Result<usize, Error> {
        let at = self.pos as u64;
        let n = self.i32(what)?;
        if n <= 0 {
            return Ok(0);
        }
        let n = n as usize;
        let need = n.saturating_mul(min_size);
        if need > self.left() {
            return Err(Error::corrupt(
                self.file,
                at,
                format!("count {n} of {what} needs at least {need} bytes, only {} left", self.left()),
            ));
        }
        Ok(n)
    }

    fn str16(&mut self, what: &str) -> Result<String, Error> {
        let n = self.u16(what)? as usize;
        Ok(String::from_utf8_lossy(self.take(n, what)?).into_owned())
    }

    fn str32(&mut self, what: &str) -> Result<String, Error> {
        let at = self.pos as u64;
        let n = self.i32(what)?;
        if n < 0 {
            return Err(Error::corrupt(self.file, at, format!("negative length {n} of {what}")));
        }
        Ok(String::from_utf8_lossy(self.take(n as usize, what)?).into_owned())
    }

    fn i32s(&mut self, what: &str) -> Result<Vec<i64>, Error> {
        let n = self.count(4, what)?;
        (0..n).map(|_| self.i32(what).map(i64::from)).collect()
    }
}

/// Unwraps DUMPI's 16-bit seconds (seconds since the bias, modulo 65536).
#[derive(Default)]
struct Unwrap {
    epoch: u64,
    last: u64,
}

impl Unwrap {
    fn secs(&mut self, raw: u16) -> u64 {
        let mut s = self.epoch * 65536 + raw as u64;
        if s + 32768 < self.last {
            self.epoch += 1;
            s += 65536;
        }
        self.last = s;
        s
    }
}

fn ns(bias: u32, secs: u64, nsec: u32) -> i64 {
    let s = (bias as i128 + secs as i128) * 1_000_000_000 + nsec as i128;
    s.clamp(0, i64::MAX as i128) as i64
}

/// Decodes a whole `.bin` file held in `data`; `file` names it in errors.
pub fn parse(file: &str, data: &[u8]) -> Result<BinFile, Error> {
    if data.len() < 8 || data[..8] != MAGIC {
        return Err(Error::corrupt(file, 0, "not a DUMPI trace: the file does not start with DUMPI's magic"));
    }
    let ix = read_index(file, data)?;
    let mut out = BinFile::default();
    read_sections(&mut out, file, data, &ix)?;
    read_calls(&mut out, file, data, &ix)?;
    Ok(out)
}

/// Where a `.bin` file's sections start (0: absent), from the index at its end.
struct Index {
    /// Where the index starts: the end of the data.
    index_start: usize,
    header: usize,
    body: usize,
    footer: usize,
    keyval: usize,
    sizelbl: usize,
    addrlbl: usize,
    perflbl: usize,
}

impl Index {
    /// The end of the section that starts at `start`: the next section's start.
    fn section_end(&self, start: usize) -> usize {
        [self.header, self.footer, self.keyval, self.sizelbl, self.addrlbl, self.perflbl]
            .into_iter()
            .filter(|&o| o > start)
            .min()
            .unwrap_or(self.index_start)
    }
}

fn read_index(file: &str, data: &[u8]) -> Result<Index, Error> {
    // The index: the magic among the last 8, 7, 6 or 5 64-bit words.
    let len = data.len();
    let words = [8usize, 7, 6, 5]
        .into_iter()
        .find(|&w| len >= 8 + w * 8 && data[len - w * 8..len - w * 8 + 8] == MAGIC)
        .ok_or_else(|| {
            Error::corrupt(
                file,
                len.saturating_sub(64) as u64,
                "no DUMPI index record at the end of the file (truncated?)",
            )
        })?;
    let index_start = len - words * 8;
    let mut c = Cur::at(data, index_start + 8, len, file);
    let mut entries = Vec::with_capacity(words - 1);
    for _ in 1..words {
        entries.push(c.u64("an index entry")?);
    }
    // Entries: [sizes], [funcs], [perf], header, body, footer, keyval.
    let extra = words - 5;
    let (sizelbl, addrlbl, perflbl) = match extra {
        3 => (entries[0], entries[1], entries[2]),
        2 => (0, entries[0], entries[1]),
        1 => (0, 0, entries[0]),
        _ => (0, 0, 0),
    };
    let (header, body, footer, keyval) =
        (entries[extra], entries[extra + 1], entries[extra + 2], entries[extra + 3]);
    let check = |off: u64, what: &str| -> Result<usize, Error> {
        if off > index_start as u64 || (off != 0 && off < 8) {
            Err(Error::corrupt(
                file,
                index_start as u64,
                format!(
                    "the index puts the {what} at byte {off}, outside the file's {index_start} bytes of data"
                ),
            ))
        } else {
            Ok(off as usize)
        }
    };
    let ix = Index {
        index_start,
        sizelbl: check(sizelbl, "datatype sizes")?,
        addrlbl: check(addrlbl, "function names")?,
        perflbl: check(perflbl, "counter names")?,
        header: check(header, "header")?,
        body: check(body, "call stream")?,
        footer: check(footer, "footer")?,
        keyval: check(keyval, "keyval record")?,
    };
    if ix.body == 0 {
        return Err(Error::corrupt(file, index_start as u64, "the index has no call stream"));
    }
    Ok(ix)
}

/// The sections before the call stream: header, datatype sizes, counter and function
/// names, footer.
fn read_sections(out: &mut BinFile, file: &str, data: &[u8], ix: &Index) -> Result<(), Error> {
    let Index { header, sizelbl, perflbl, addrlbl, footer, .. } = *ix;
    let section_end = |start: usize| ix.section_end(start);
    if header > 0 {
        let mut c = Cur::at(data, header, section_end(header), file);
        out.version = (c.u8("the version")?, c.u8("the version")?, c.u8("the version")?);
        out.start_time = c.u64("the start time")?;
        out.hostname = c.str16("the host name")?;
        out.username = c.str16("the user name")?;
    }
    if sizelbl > 0 {
        let mut c = Cur::at(data, sizelbl, section_end(sizelbl), file);
        out.datatype_sizes = c.i32s("datatype sizes")?;
    }
    if perflbl > 0 {
        let mut c = Cur::at(data, perflbl, section_end(perflbl), file);
        let n = c.count(2, "counter names")?;
        out.perf_labels = (0..n).map(|_| c.str16("a counter name")).collect::<Result<_, _>>()?;
    }
    if addrlbl > 0 {
        let mut c = Cur::at(data, addrlbl, section_end(addrlbl), file);
        let n = c.count(10, "function names")?;
        for _ in 0..n {
            let addr = c.u64("a function address")?;
            let name = c.str16("a function name")?;
            out.functions.insert(addr, name);
        }
    }
    if footer > 0 {
        let mut c = Cur::at(data, footer, section_end(footer), file);
        let magic = c.u64("the footer magic")?;
        if magic != FOOTER_MAGIC {
            return Err(Error::corrupt(file, footer as u64, format!("bad footer magic {magic:#x}")));
        }
        let n = layout::ALL_FUNCTIONS as usize + 1;
        if c.left() >= n * 4 {
            out.footer_counts = Some((0..n).map(|_| c.u32("a call count")).collect::<Result<_, _>>()?);
        }
    }
    Ok(())
}

/// The call stream: every call record up to the end of the stream.
fn read_calls(out: &mut BinFile, file: &str, data: &[u8], ix: &Index) -> Result<(), Error> {
    let mut c = Cur::at(data, ix.body, ix.section_end(ix.body), file);
    out.cpu_bias = c.u32("the CPU time bias")?;
    out.wall_bias = c.u32("the wall time bias")?;
    let (mut cpu_wrap, mut wall_wrap) = (Unwrap::default(), Unwrap::default());
    let mut finalized = false;
    while c.left() > 0 {
        let offset = c.pos;
        let label = c.u16("a function label")?;
        if label == END_OF_STREAM || (finalized && label == 0) {
            break;
        }
        let Some((_, args)) = layout::layout(label) else {
            return Err(Error::corrupt(
                file,
                offset as u64,
                format!("unknown or undecodable function label {label}"),
            ));
        };
        let mask = c.u8("a record mask")?;
        let thread = if mask & 0x40 != 0 { c.u16("a thread id")? } else { 0 };
        let clock = |c: &mut Cur, w: &mut Unwrap, bias: u32, what: &str| -> Result<(i64, i64), Error> {
            let s0 = c.u16(what)?;
            let n0 = c.u32(what)?;
            let s1 = c.u16(what)?;
            let n1 = c.u32(what)?;
            let a = ns(bias, w.secs(s0), n0);
            let b = ns(bias, w.secs(s1), n1);
            Ok((a, b))
        };
        let cpu = if mask & 0x04 != 0 {
            Some(clock(&mut c, &mut cpu_wrap, out.cpu_bias, "a CPU time")?)
        } else {
            None
        };
        let wall = if mask & 0x08 != 0 {
            Some(clock(&mut c, &mut wall_wrap, out.wall_bias, "a wall time")?)
        } else {
            None
        };
        if mask & 0x80 != 0 {
            c.u8("a counter count")?;
            let n = out.perf_labels.len();
            c.take(n * 16, "counter values")?;
        }
        let mut vals: Vec<(&'static str, Val)> = Vec::with_capacity(args.len());
        for arg in args {
            if let Some(rank_field) = arg.if_root {
                let get = |n: &str| vals.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone());
                if get(rank_field) != get("root") {
                    continue;
                }
            }
            let v = read_arg(&mut c, arg, mask, out.version)?;
            vals.push((arg.name, v));
        }
        if label == FINALIZE {
            finalized = true;
        }
        out.calls.push(Call { label, offset: offset as u64, thread, cpu, wall, args: vals });
    }
    Ok(())
}

fn read_arg(c: &mut Cur, arg: &Arg, mask: u8, version: (u8, u8, u8)) -> Result<Val, Error> {
    let what = arg.name;
    Ok(match arg.ty {
        Ty::I8 => Val::Int(c.u8(what)? as i64),
        Ty::I16 => Val::Int(c.u16(what)? as i64),
        Ty::I32 => Val::Int(c.i32(what)? as i64),
        Ty::I64 => Val::Int(c.u64(what)? as i64),
        Ty::I32Arr => Val::Ints(c.i32s(what)?),
        Ty::I16Arr => {
            let n = c.count(2, what)?;
            Val::Ints((0..n).map(|_| c.u16(what).map(i64::from)).collect::<Result<_, _>>()?)
        }
        Ty::I8Arr => {
            let n = c.count(1, what)?;
            Val::Ints((0..n).map(|_| c.u8(what).map(i64::from)).collect::<Result<_, _>>()?)
        }
        Ty::I32Arr2 => {
            let rows = c.count(4, what)?;
            for _ in 0..rows {
                let n = c.count(4, what)?;
                c.take(n * 4, what)?;
            }
            Val::Skipped
        }
        Ty::Str => Val::Str(c.str32(what)?),
        Ty::StrArr => {
            let n = c.count(4, what)?;
            Val::Strs((0..n).map(|_| c.str32(what)).collect::<Result<_, _>>()?)
        }
        Ty::StrArr2 => {
            let n = c.count(4, what)?;
            for _ in 0..n {
                let m = c.count(4, what)?;
                for _ in 0..m {
                    c.str32(what)?;
                }
            }
            Val::Skipped
        }
        Ty::Status => {
            let mut v = Vec::new();
            if mask & 0x03 != 0 {
                let with_tag = version >= (0, 6, 3);
                let n = c.count(if with_tag { 14 } else { 10 }, what)?;
                v.reserve(n);
                for _ in 0..n {
                    let bytes = c.i32(what)?;
                    let source = c.i32(what)?;
                    let cancelled = c.u8(what)?;
                    let error = c.u8(what)?;
                    let tag = if with_tag { Some(c.i32(what)?) } else { None };
                    v.push(Status { bytes, source, cancelled, error, tag });
                }
            }
            Val::Statuses(v)
        }
        Ty::ArgvQuirk | Ty::Argv => {
            let at = c.pos as u64;
            let argc = c.i32(what)?;
            if arg.ty == Ty::ArgvQuirk && version < (0, 6, 2) {
                c.i32(what)?;
            }
            let argc = argc.max(0) as usize;
            if argc.saturating_mul(4) > c.left() {
                return Err(Error::corrupt(
                    c.file,
                    at,
                    format!("argc {argc} exceeds the {} bytes left", c.left()),
                ));
            }
            Val::Strs((0..argc).map(|_| c.str32(what)).collect::<Result<_, _>>()?)
        }
        Ty::I32ArrSince(a, b, d) => {
            if version >= (a, b, d) {
                Val::Ints(c.i32s(what)?)
            } else {
                Val::Int(c.i32(what)? as i64)
            }
        }
    })
}
