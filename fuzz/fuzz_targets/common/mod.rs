//! What the targets share: an allocator that refuses runaway requests, and for
//! those that read several files, one input split into the files (which they
//! read from memory, never from disk).
#![allow(dead_code)]

/// Separates the files of one input (`fuzz/seed` writes seeds in this layout).
pub const SEPARATOR: &[u8] = b"\n%%spoor-fuzz-file%%\n";

/// The input's files, in order: the bytes between separators.
pub fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = find(rest) {
        parts.push(&rest[..at]);
        rest = &rest[at + SEPARATOR.len()..];
    }
    parts.push(rest);
    parts
}

/// Where the first separator starts. Byte by byte rather than with slice equality:
/// libFuzzer hooks every `memcmp`, and a hooked compare at each offset of a large input
/// took a third of the run.
fn find(data: &[u8]) -> Option<usize> {
    let n = SEPARATOR.len();
    (0..data.len().saturating_sub(n - 1))
        .find(|&i| data[i] == SEPARATOR[0] && data[i..i + n].iter().zip(SEPARATOR).all(|(a, b)| a == b))
}

/// The largest single allocation a target may ask for. Without AddressSanitizer,
/// libFuzzer's `-malloc_limit_mb` sees no allocation, and an untouched huge vector
/// never shows in the resident size: this allocator refuses any request over the
/// limit instead (a `try_reserve` then fails as it should, and an infallible
/// allocation aborts the run: a runaway allocation found).
const ALLOC_LIMIT: usize = 2048 << 20;

struct Limited;

// SAFETY: every call goes to the system allocator unchanged, or fails as an
// allocator may (a null pointer) when the request is over the limit.
unsafe impl std::alloc::GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.size() > ALLOC_LIMIT {
            return std::ptr::null_mut();
        }
        std::alloc::System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.size() > ALLOC_LIMIT {
            return std::ptr::null_mut();
        }
        std::alloc::System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOC_LIMIT {
            return std::ptr::null_mut();
        }
        std::alloc::System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Limited = Limited;
