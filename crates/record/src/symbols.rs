//! Procedure addresses to names, after the run, from the ELF symbol tables of the
//! mapped files. An address is first placed in its mapping (/proc/self/maps: start, file
//! offset, path), which gives its file offset whatever the load bias (PIE executables and
//! shared libraries are loaded anywhere); the loadable segment holding that offset gives
//! the virtual address the symbol tables use.

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
use std::collections::BTreeMap;

/// One line of /proc/PID/maps that maps a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: usize,
    pub end: usize,
    pub offset: u64,
    pub path: String,
}

/// Parses /proc/PID/maps text, keeping the mappings of files.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    let mut v = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(_perms), Some(off), Some(_dev), Some(_inode)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let path: Vec<&str> = f.collect();
        let path = path.join(" ");
        if !path.starts_with('/') {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end), Ok(offset)) =
            (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16), u64::from_str_radix(off, 16))
        else {
            continue;
        };
        v.push(Mapping { start, end, offset, path });
    }
    v
}

/// The function symbols of one ELF file and its loadable segments.
pub struct SymbolTable {
    /// Start address -> (size, name); the larger table (symtab) wins over dynsym.
    syms: BTreeMap<u64, (u64, String)>,
    /// (file offset, file size, virtual address) of each segment.
    segments: Vec<(u64, u64, u64)>,
}

impl SymbolTable {
    /// Reads the symbol tables of an ELF file's bytes.
    pub fn parse(data: &[u8]) -> Option<SymbolTable> {
        let file = object::File::parse(data).ok()?;
        let mut syms = BTreeMap::new();
        for s in file.dynamic_symbols().chain(file.symbols()) {
            if s.kind() != SymbolKind::Text || s.address() == 0 {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            if name.is_empty() {
                continue;
            }
            syms.insert(s.address(), (s.size(), name.to_owned()));
        }
        let segments = file
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                (off, size, s.address())
            })
            .collect();
        Some(SymbolTable { syms, segments })
    }

    /// The virtual address of a file offset.
    pub fn vaddr_of_offset(&self, off: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|&&(o, size, _)| off >= o && off < o + size)
            .map(|&(o, _, vaddr)| off - o + vaddr)
    }

    /// The function containing a virtual address (a symbol without a size matches only
    /// its own start).
    pub fn lookup(&self, vaddr: u64) -> Option<&str> {
        let (&start, (size, name)) = self.syms.range(..=vaddr).next_back()?;
        (vaddr < start + (*size).max(1)).then_some(name.as_str())
    }
}

/// Names for code addresses of this process; `None` where no symbol covers one.
pub fn resolve(addrs: &[usize]) -> Vec<Option<String>> {
    let maps = std::fs::read_to_string("/proc/self/maps").map(|t| parse_maps(&t)).unwrap_or_default();
    resolve_in(addrs, &maps)
}

/// [`resolve`] against given mappings.
pub fn resolve_in(addrs: &[usize], maps: &[Mapping]) -> Vec<Option<String>> {
    let mut tables: BTreeMap<&str, Option<SymbolTable>> = BTreeMap::new();
    addrs
        .iter()
        .map(|&a| {
            let m = maps.iter().find(|m| a >= m.start && a < m.end)?;
            let table = tables
                .entry(m.path.as_str())
                .or_insert_with(|| std::fs::read(&m.path).ok().and_then(|d| SymbolTable::parse(&d)))
                .as_ref()?;
            let off = (a - m.start) as u64 + m.offset;
            let vaddr = table.vaddr_of_offset(off)?;
            table.lookup(vaddr).map(str::to_owned)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    #[no_mangle]
    pub extern "C" fn spoor_symbols_test_target(x: u64) -> u64 {
        x.wrapping_mul(31) ^ 7
    }

    #[test]
    fn maps_lines_parse() {
        let t = "5581f000-55820000 r-xp 00001000 08:01 123 /usr/bin/prog\n\
                 7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]\n\
                 7f00-7f10 r--p 0000a000 08:01 9 /lib/with space.so\n";
        let m = parse_maps(t);
        assert_eq!(
            m,
            vec![
                Mapping { start: 0x5581f000, end: 0x55820000, offset: 0x1000, path: "/usr/bin/prog".into() },
                Mapping { start: 0x7f00, end: 0x7f10, offset: 0xa000, path: "/lib/with space.so".into() },
            ]
        );
    }

    #[test]
    fn resolves_a_function_of_this_test_binary() {
        // The test binary is a PIE: the address is only right after the load bias is undone.
        let f = spoor_symbols_test_target as extern "C" fn(u64) -> u64 as usize;
        assert_eq!(spoor_symbols_test_target(1), 24);
        let names = resolve(&[f, f + 1, 8]);
        assert_eq!(names[0].as_deref(), Some("spoor_symbols_test_target"));
        assert_eq!(names[1].as_deref(), Some("spoor_symbols_test_target"));
        assert_eq!(names[2], None);
    }
}
