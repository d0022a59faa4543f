//! Pages given back: under `keep_freed_memory` a freed block stays resident, and
//! `drop_returning_pages` gives its pages to the kernel (one test: this process's
//! allocator settings and resident size are its own).

use spoor_format::mem::{drop_returning_pages, keep_freed_memory};

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.trim_start_matches("VmRSS:").trim().trim_end_matches("kB").trim().parse().unwrap()
}

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn a_vector_dropped_returning_pages_leaves_memory() {
    keep_freed_memory();
    const N: usize = 4 << 20; // 32 MiB of u64
    let touched = || {
        // Seen by the optimizer as used, so that an optimized build still makes them.
        std::hint::black_box((0..N as u64).collect::<Vec<u64>>())
    };
    // A plain drop keeps the pages of a block below others.
    let before = resident_kib();
    let v = touched();
    let above = touched();
    assert!(resident_kib() > before + 60_000);
    drop(v);
    let kept = resident_kib();
    assert!(kept > before + 60_000, "{before} KiB before, {kept} KiB after a plain drop");
    // The same block again, given back.
    let v = touched();
    assert_eq!(v[N - 1], N as u64 - 1);
    let full = resident_kib();
    drop_returning_pages(v);
    let after = resident_kib();
    assert!(after + 30_000 < full, "{full} KiB before, {after} KiB after");
    assert_eq!(above[N - 1], N as u64 - 1);
    // The memory serves the next block as any other, its pages faulted in afresh.
    let again = std::hint::black_box(vec![7u64; N]);
    assert!(again.iter().all(|&x| x == 7));
    drop_returning_pages(Vec::<u64>::new());
    drop_returning_pages(vec![1u8; 3]);
}
