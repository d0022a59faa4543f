//! What the targets share: an allocator that refuses runaway requests, for
//! those that read several files one input split into the files (which they
//! read from memory, never from disk), and a one-thread rayon pool.
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

/// Where the first separator starts. With memchr's vectorized search: a compare
/// per byte is a libFuzzer hook per byte (instrumented code reports every
/// compare), and a byte-by-byte search took a sixth of a run; libc's `memcmp`
/// at each offset is hooked too.
fn find(data: &[u8]) -> Option<usize> {
    memchr::memmem::find(data, SEPARATOR)
}

/// Makes the calling thread the only thread of rayon's pool, for the targets
/// whose readers use rayon: their parallel parts then run inline on the fuzzing
/// thread. With idle workers, waking them, handing them work and their yielding
/// took a quarter of a run (as much again when the two cores are busy).
pub fn one_thread() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build_global()
        .expect("rayon's pool built before the first input");
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
