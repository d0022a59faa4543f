//! Vectors kept in a file rather than in memory: an analysis whose arrays grow with the
//! trace (the wait states' timelines, synchronization points and waits) keeps them in a
//! [`SpillVec`], in memory as a plain vector or, given an [`Arena`], in a file of a
//! directory the user chose, mapped into the address space. The process then holds
//! only the pages it touched since it last let them go ([`Arena::release`]): the kernel
//! writes the file's pages out and reads them back as it would any file's, and what a
//! vector holds is the same either way.
//!
//! The file is unlinked as soon as it is made, so it goes with the process however that
//! ends (a signal too). It grows by `fallocate` ahead of the writes, so that a disk that
//! fills is an error ([`Arena::error`]) and never a write through the mapping, which the
//! kernel answers with SIGBUS; a vector that cannot grow drops what is pushed onto it
//! from then on, and the arena's error must be asked for before its results are used.

use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const PAGE: usize = 4096;
/// The file grows this much at a time, ahead of the writes.
const GROW: usize = 16 << 20;
/// Address space asked for at first: the file's pages are only those written, and no
/// place is used twice (a vector that grows moves to a new place, its old one's disk
/// given back), so it bounds all a stage ever writes. Halved where the address space
/// is limited (`ulimit -v`), down to [`LEAST_RESERVE`].
const RESERVE: usize = 1 << 40;
const LEAST_RESERVE: usize = 1 << 30;

/// Bytes a pass over a spilled vector reads or writes between two lettings-go of the
/// arena's pages ([`SpillVec::iter`], [`SpillVec::extend_from_slice`]).
const RELEASE_BYTES: usize = 32 << 20;

/// A spill file mapped into the address space, from which [`SpillVec`]s take their places.
pub struct Arena {
    base: *mut u8,
    reserved: usize,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    file: std::fs::File,
    dir: PathBuf,
    state: Mutex<State>,
    failed: AtomicBool,
}

struct State {
    /// The first byte no place has taken.
    next: usize,
    /// The file's length: what `fallocate` has reserved on disk.
    file_len: usize,
    /// Bytes in places not given back, and their most.
    used: usize,
    most: usize,
    error: Option<io::Error>,
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena").field("dir", &self.dir).field("reserved", &self.reserved).finish()
    }
}

// SAFETY: the mapping is shared memory owned by the arena; places are handed out under
// the state's lock, each to one vector, which alone writes it.
unsafe impl Send for Arena {}
unsafe impl Sync for Arena {}

impl Arena {
    /// An arena in a file made in `dir` (and unlinked at once).
    #[cfg(target_os = "linux")]
    pub fn new(dir: &Path) -> io::Result<Arc<Arena>> {
        use std::os::fd::AsRawFd;
        let named = |e: io::Error| io::Error::new(e.kind(), format!("spill file in {}: {e}", dir.display()));
        let path = (0..)
            .map(|k| dir.join(format!("spill-{}-{k}", std::process::id())))
            .find(|p| !p.exists())
            .expect("some name is free");
        let file =
            std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).map_err(named)?;
        std::fs::remove_file(&path).map_err(named)?;
        let mut reserved = RESERVE;
        let base = loop {
            // SAFETY: a fresh shared mapping of our own file; nothing else maps it.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    reserved,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_NORESERVE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                // No read-ahead: a page first touched is read as zeros from the file's
                // reserved blocks, and reading ahead would zero (and map) up to a
                // megabyte beside it, a tenth of a spilled analysis's time.
                // SAFETY: advice on the mapping just made.
                unsafe { libc::madvise(p, reserved, libc::MADV_RANDOM) };
                break p.cast::<u8>();
            }
            if reserved <= LEAST_RESERVE {
                return Err(named(io::Error::last_os_error()));
            }
            reserved /= 2;
        };
        let state = State { next: 0, file_len: 0, used: 0, most: 0, error: None };
        Ok(Arc::new(Arena {
            base,
            reserved,
            file,
            dir: dir.to_owned(),
            state: Mutex::new(state),
            failed: AtomicBool::new(false),
        }))
    }

    /// Spilling maps a file with Linux's calls; elsewhere it is refused.
    #[cfg(not(target_os = "linux"))]
    pub fn new(dir: &Path) -> io::Result<Arc<Arena>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, format!("spilling to {} needs Linux", dir.display())))
    }

    /// The most bytes its places held at once: the spill file's largest size (disk
    /// reserved for room not yet used included), for `-v`.
    pub fn most_bytes(&self) -> u64 {
        self.state.lock().map_or(0, |s| s.most as u64)
    }

    /// The first error met (the disk full, the address space used up): what the
    /// vectors hold is incomplete once there is one. Asked again, the same.
    pub fn error(&self) -> Option<io::Error> {
        if !self.failed.load(Ordering::Relaxed) {
            return None;
        }
        // Every one who asks hears of it: a graph's file is checked by each pass.
        let s = self.state.lock().ok()?;
        s.error.as_ref().map(|e| io::Error::new(e.kind(), e.to_string()))
    }

    /// Whether an error was met (it stays so once taken).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Lets go of the pages touched so far: they stay in the file (and in the kernel's
    /// page cache until it writes them out), and are read back when touched again.
    pub fn release(&self) {
        #[cfg(target_os = "linux")]
        if let Ok(s) = self.state.lock() {
            if s.next > 0 {
                // SAFETY: the range lies inside the arena's own shared file mapping;
                // MADV_DONTNEED there keeps the contents, which are the file's.
                unsafe {
                    libc::madvise(self.base.cast(), s.next, libc::MADV_DONTNEED);
                }
            }
        }
    }

    /// Has the kernel read ahead where a page is read back from the file, as for arrays
    /// passed over in order once evicted (by default it reads only the page touched).
    pub fn read_ahead(&self) {
        #[cfg(target_os = "linux")]
        // SAFETY: advice on the arena's own mapping.
        unsafe {
            libc::madvise(self.base.cast(), self.reserved, libc::MADV_NORMAL);
        }
    }

    /// Lets go of the pages touched, every `every`, on a thread of its own until the arena
    /// goes: then whatever passes over what it holds, on any thread, keeps only what it
    /// touched lately resident, without counting its steps.
    pub fn release_every(self: &Arc<Self>, every: std::time::Duration) {
        let arena = Arc::downgrade(self);
        let releasing = std::thread::Builder::new().name("spoor-spill".into()).spawn(move || loop {
            std::thread::sleep(every);
            match arena.upgrade() {
                Some(a) => a.release(),
                None => return,
            }
        });
        // Without a thread, the pages stay until the passes' own releases.
        drop(releasing);
    }

    /// A vector could not have room for `n` values: past the address space reserved.
    fn refuse(&self, n: usize) {
        if let Ok(mut s) = self.state.lock() {
            let e = io::Error::other(format!(
                "room for {n} values asked for, past the {} GiB the spill file may take",
                self.reserved >> 30
            ));
            self.fail(&mut s, e);
        }
    }

    fn fail(&self, s: &mut State, e: io::Error) {
        if !self.failed.swap(true, Ordering::Relaxed) {
            s.error = Some(io::Error::new(e.kind(), format!("spilling to {}: {e}", self.dir.display())));
        }
    }

    /// A place of `bytes` (whole pages): its offset, or `None` after an error, or where
    /// the file or the address space has no room (then an error, unless `soft`).
    fn take(&self, bytes: usize, soft: bool) -> Option<usize> {
        let bytes = bytes.checked_next_multiple_of(PAGE)?;
        let mut s = self.state.lock().ok()?;
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let at = s.next;
        let end = at.checked_add(bytes).filter(|&e| e <= self.reserved)?;
        if end > s.file_len {
            let grow = (end - s.file_len).next_multiple_of(GROW);
            if let Err(e) = self.allocate(s.file_len, grow) {
                if !soft {
                    self.fail(&mut s, e);
                }
                return None;
            }
            s.file_len += grow;
        }
        s.next = end;
        s.used += bytes;
        s.most = s.most.max(s.used);
        Some(at)
    }

    #[cfg(target_os = "linux")]
    fn allocate(&self, at: usize, len: usize) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: fallocate on our own descriptor.
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), 0, at as libc::off_t, len as libc::off_t) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e);
        }
        // A file system without fallocate: the blocks written with zeros, which a full
        // disk fails as plainly.
        use std::os::unix::fs::FileExt;
        let zeros = vec![0u8; 1 << 20];
        let mut done = 0;
        while done < len {
            let n = zeros.len().min(len - done);
            self.file.write_all_at(&zeros[..n], (at + done) as u64)?;
            done += n;
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn allocate(&self, _: usize, _: usize) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "spilling needs Linux"))
    }

    /// Gives back the disk of a place no longer used.
    fn give_back(&self, at: usize, bytes: usize) {
        let bytes = bytes.next_multiple_of(PAGE);
        if let Ok(mut s) = self.state.lock() {
            s.used -= bytes.min(s.used);
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: the range is a whole-page place of this arena that its vector has
            // left; punching it frees its disk and drops its pages from the mapping.
            unsafe {
                libc::fallocate(
                    self.file.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    at as libc::off_t,
                    bytes as libc::off_t,
                );
            }
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the mapping is the arena's; every vector holding a place keeps the
        // arena alive, so none is left.
        unsafe {
            libc::munmap(self.base.cast(), self.reserved);
        }
    }
}

/// A vector of plain values, in memory or in an [`Arena`]'s file.
pub struct SpillVec<T> {
    inner: Inner<T>,
}

enum Inner<T> {
    Heap(Vec<T>),
    Mapped { arena: Arc<Arena>, at: usize, len: usize, cap: usize, _of: PhantomData<T> },
}

impl<T: Copy> SpillVec<T> {
    /// An empty vector: in `arena`'s file, or in memory.
    pub fn new_in(arena: Option<&Arc<Arena>>) -> Self {
        Self::with_capacity_in(0, arena)
    }

    /// An empty vector with room for `n`.
    pub fn with_capacity_in(n: usize, arena: Option<&Arc<Arena>>) -> Self {
        assert!(std::mem::size_of::<T>() > 0 && std::mem::align_of::<T>() <= PAGE);
        let inner = match arena {
            None => Inner::Heap(Vec::with_capacity(n)),
            Some(a) => Inner::Mapped { arena: a.clone(), at: 0, len: 0, cap: 0, _of: PhantomData },
        };
        let mut v = SpillVec { inner };
        if n > 0 {
            v.reserve(n);
        }
        v
    }

    /// `n` copies of `x`.
    pub fn filled_in(n: usize, x: T, arena: Option<&Arc<Arena>>) -> Self {
        if arena.is_none() {
            // In memory, zeros come from pages the kernel maps only when written.
            return SpillVec { inner: Inner::Heap(vec![x; n]) };
        }
        let mut v = Self::with_capacity_in(n, arena);
        let step = v.release_step();
        for k in 0..n {
            v.push(x);
            if k % step == step - 1 {
                v.release();
            }
        }
        v
    }

    /// Elements a pass goes over between two lettings-go of the pages.
    fn release_step(&self) -> usize {
        (RELEASE_BYTES / std::mem::size_of::<T>()).max(1)
    }

    /// Lets go of the pages of its arena touched so far (in memory, nothing).
    pub fn release(&self) {
        if let Inner::Mapped { arena, .. } = &self.inner {
            arena.release();
        }
    }

    /// Its elements in order; in a file, the pages read are let go every 32 MiB, so
    /// that a pass over the whole holds a few of them at a time.
    pub fn iter(&self) -> Iter<'_, T> {
        let arena = match &self.inner {
            Inner::Heap(_) => None,
            Inner::Mapped { arena, .. } => Some(&**arena),
        };
        Iter { items: (**self).iter(), arena, step: self.release_step(), left: self.release_step() }
    }

    /// Whether it lives in a file.
    pub fn is_spilled(&self) -> bool {
        matches!(self.inner, Inner::Mapped { .. })
    }

    /// Appends `x` (dropped after an error).
    #[inline]
    pub fn push(&mut self, x: T) {
        match &mut self.inner {
            Inner::Heap(v) => v.push(x),
            Inner::Mapped { arena, at, len, cap, .. } => {
                if *len == *cap && !grow::<T>(arena, at, *len, cap, *len + 1, false) {
                    return;
                }
                // SAFETY: `len < cap`, and the place holds `cap` values of T.
                unsafe { arena.base.add(*at).cast::<T>().add(*len).write(x) };
                *len += 1;
            }
        }
    }

    /// Appends `x` without looking for room.
    ///
    /// # Safety
    /// The vector holds fewer values than its capacity.
    #[inline(always)]
    pub unsafe fn push_unchecked(&mut self, x: T) {
        match &mut self.inner {
            Inner::Heap(v) => {
                v.as_mut_ptr().add(v.len()).write(x);
                v.set_len(v.len() + 1);
            }
            Inner::Mapped { arena, at, len, .. } => {
                arena.base.add(*at).cast::<T>().add(*len).write(x);
                *len += 1;
            }
        }
    }

    /// Room for `n` more (after an error, none).
    pub fn reserve(&mut self, n: usize) {
        match &mut self.inner {
            Inner::Heap(v) => v.reserve(n),
            Inner::Mapped { arena, at, len, cap, .. } => {
                if *len + n > *cap {
                    grow::<T>(arena, at, *len, cap, *len + n, false);
                }
            }
        }
    }

    /// Room for `n` more where it can be had: false where the allocator (in memory) or
    /// the file has none, which is no error (the vector grows as it needs instead).
    pub fn try_reserve(&mut self, n: usize) -> bool {
        match &mut self.inner {
            Inner::Heap(v) => v.try_reserve(n).is_ok(),
            Inner::Mapped { arena, at, len, cap, .. } => {
                *len + n <= *cap || grow::<T>(arena, at, *len, cap, *len + n, true)
            }
        }
    }

    /// Lets the vector go, giving its pages back to the kernel at once (in memory, as
    /// [`crate::mem::drop_returning_pages`]; in a file, with its disk).
    pub fn drop_returning_pages(self) {
        let mut me = self;
        if let Inner::Heap(v) = &mut me.inner {
            crate::mem::drop_returning_pages(std::mem::take(v));
        }
    }

    /// Appends a copy of each of `xs` (in a file, letting the pages written go every
    /// 32 MiB).
    pub fn extend_from_slice(&mut self, xs: &[T]) {
        if let Inner::Heap(v) = &mut self.inner {
            v.extend_from_slice(xs);
            return;
        }
        self.reserve(xs.len());
        let step = self.release_step();
        for part in xs.chunks(step) {
            for &x in part {
                self.push(x);
            }
            self.release();
        }
    }

    /// In a file, gives back the room past its length (its disk, for what comes next);
    /// in memory, nothing.
    pub fn give_back_spare(&mut self) {
        if let Inner::Mapped { arena, at, len, cap, .. } = &mut self.inner {
            let size = std::mem::size_of::<T>();
            let keep = (*len * size).next_multiple_of(PAGE);
            let room = (*cap * size).next_multiple_of(PAGE);
            if room > keep {
                arena.give_back(*at + keep, room - keep);
                *cap = keep / size;
            }
        }
    }

    /// Empties it, keeping its room.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Keeps its first `n` values.
    pub fn truncate(&mut self, n: usize) {
        match &mut self.inner {
            Inner::Heap(v) => v.truncate(n),
            Inner::Mapped { len, .. } => *len = (*len).min(n),
        }
    }

    /// Room for `n` more, no more than that in memory ([`Vec::reserve_exact`]).
    pub fn reserve_exact(&mut self, n: usize) {
        match &mut self.inner {
            Inner::Heap(v) => v.reserve_exact(n),
            Inner::Mapped { .. } => self.reserve(n),
        }
    }

    /// A copy where it lives: in its arena's file, or in memory.
    pub fn copy_beside(&self) -> Self {
        let mut v = Self::with_capacity_in(self.len(), self.arena());
        v.extend_from_slice(self);
        v
    }

    /// The arena it lives in (`None`: in memory).
    pub fn arena(&self) -> Option<&Arc<Arena>> {
        match &self.inner {
            Inner::Heap(_) => None,
            Inner::Mapped { arena, .. } => Some(arena),
        }
    }

    /// How many it holds room for.
    pub fn capacity(&self) -> usize {
        match &self.inner {
            Inner::Heap(v) => v.capacity(),
            Inner::Mapped { cap, .. } => *cap,
        }
    }
}

/// Moves a mapped vector of `len` values at `at` to a place for at least `need` (twice
/// its room at least); false (nothing moved) after an error, or where there is no room
/// (an error unless `soft`).
#[cold]
fn grow<T>(arena: &Arena, at: &mut usize, len: usize, cap: &mut usize, need: usize, soft: bool) -> bool {
    let size = std::mem::size_of::<T>();
    let want = need.max(*cap * 2).max(PAGE / size);
    let Some(to) = want.checked_mul(size).and_then(|b| arena.take(b, soft)) else {
        if !soft {
            arena.refuse(need);
        }
        return false;
    };
    let bytes = (want * size).next_multiple_of(PAGE);
    // SAFETY: both places lie in the mapping; the new one is fresh, so they do not
    // overlap, and the old holds `len` values.
    unsafe { std::ptr::copy_nonoverlapping(arena.base.add(*at), arena.base.add(to), len * size) };
    if *cap > 0 {
        arena.give_back(*at, *cap * size);
    }
    (*at, *cap) = (to, bytes / size);
    true
}

impl<T> std::ops::Deref for SpillVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match &self.inner {
            Inner::Heap(v) => v,
            // SAFETY: the place holds `len` values written by `push`; with no room yet
            // (`cap` 0) the pointer is only dangling-aligned.
            Inner::Mapped { arena, at, len, cap, .. } => unsafe {
                if *cap == 0 {
                    &[]
                } else {
                    std::slice::from_raw_parts(arena.base.add(*at).cast::<T>(), *len)
                }
            },
        }
    }
}

impl<T> std::ops::DerefMut for SpillVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.inner {
            Inner::Heap(v) => v,
            // SAFETY: as for `deref`; the vector alone holds its place.
            Inner::Mapped { arena, at, len, cap, .. } => unsafe {
                if *cap == 0 {
                    &mut []
                } else {
                    std::slice::from_raw_parts_mut(arena.base.add(*at).cast::<T>(), *len)
                }
            },
        }
    }
}

impl<T> Drop for SpillVec<T> {
    fn drop(&mut self) {
        if let Inner::Mapped { arena, at, cap, .. } = &self.inner {
            if *cap > 0 {
                arena.give_back(*at, *cap * std::mem::size_of::<T>());
            }
        }
    }
}

impl<T> Default for SpillVec<T> {
    fn default() -> Self {
        SpillVec { inner: Inner::Heap(Vec::new()) }
    }
}

/// Collected in memory.
impl<T> FromIterator<T> for SpillVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        SpillVec { inner: Inner::Heap(items.into_iter().collect()) }
    }
}

impl<T> From<Vec<T>> for SpillVec<T> {
    fn from(v: Vec<T>) -> Self {
        SpillVec { inner: Inner::Heap(v) }
    }
}

/// A copy in memory.
impl<T: Clone> Clone for SpillVec<T> {
    fn clone(&self) -> Self {
        SpillVec { inner: Inner::Heap(self.to_vec()) }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for SpillVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: PartialEq> PartialEq for SpillVec<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// [`SpillVec::iter`]'s iterator.
pub struct Iter<'a, T> {
    items: std::slice::Iter<'a, T>,
    arena: Option<&'a Arena>,
    step: usize,
    /// Elements until the pages are let go next.
    left: usize,
}

impl<T> Iter<'_, T> {
    #[inline]
    fn count_one(&mut self) {
        if let Some(a) = self.arena {
            self.left -= 1;
            if self.left == 0 {
                self.left = self.step;
                a.release();
            }
        }
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        let x = self.items.next()?;
        self.count_one();
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let x = self.items.next_back()?;
        self.count_one();
        Some(x)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<'a, T: Copy> IntoIterator for &'a SpillVec<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut SpillVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{Arena, SpillVec};

    /// Values pushed read back, across moves to larger places and after the pages were
    /// let go; a vector's disk is given back when it moves and when it goes.
    #[test]
    fn spilled_vectors_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let arena = Arena::new(dir.path()).unwrap();
        // Nothing is left in the directory: the file is unlinked.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut vs: Vec<SpillVec<(u64, u32)>> = (0..5).map(|_| SpillVec::new_in(Some(&arena))).collect();
        let mut heap: Vec<SpillVec<(u64, u32)>> = (0..5).map(|_| SpillVec::new_in(None)).collect();
        for k in 0..200_000u64 {
            let v = (k * 3 + 1, (k % 7) as u32);
            let at = (k % 5) as usize;
            vs[at].push(v);
            heap[at].push(v);
            if k % 50_000 == 0 {
                arena.release();
            }
        }
        arena.release();
        assert!(vs.iter().all(SpillVec::is_spilled));
        assert_eq!(vs, heap);
        vs[2][7].1 = 99;
        heap[2][7].1 = 99;
        arena.release();
        assert_eq!(vs[2][..], heap[2][..]);
        vs[1].sort_by_key(|x| std::cmp::Reverse(x.0));
        assert!(vs[1].windows(2).all(|w| w[0].0 > w[1].0));
        // Each vector holds at most twice what it needs, in whole pages.
        let most = arena.most_bytes() as usize;
        assert!(most <= 5 * 2 * 40_000 * 16 + 5 * 4096 * 2, "{most}");
        drop(vs);
        assert!(arena.error().is_none());
    }

    /// Room asked for and not used is given back, the values kept, and the vector grows
    /// again from there.
    #[test]
    fn spare_room_goes_back() {
        let dir = tempfile::tempdir().unwrap();
        let arena = Arena::new(dir.path()).unwrap();
        let mut v: SpillVec<u64> = SpillVec::with_capacity_in(1 << 20, Some(&arena));
        v.extend_from_slice(&[5, 6, 7]);
        v.give_back_spare();
        assert_eq!((v.capacity(), &v[..]), (512, &[5, 6, 7][..]));
        arena.release();
        for k in 0..1000 {
            v.push(k);
        }
        assert_eq!((v.len(), v[2], v[1002]), (1003, 7, 999));
        let mut empty: SpillVec<u32> = SpillVec::with_capacity_in(4096, Some(&arena));
        empty.give_back_spare();
        assert_eq!(empty.capacity(), 0);
        empty.push(9);
        assert_eq!(&empty[..], &[9]);
        assert!(arena.error().is_none());
    }

    /// A file that cannot grow (the file size limit here; a full disk fails the same
    /// call) is an error naming the directory, and the vectors stop growing.
    #[test]
    fn a_full_disk_is_an_error_not_a_signal() {
        let dir = tempfile::tempdir().unwrap();
        let arena = Arena::new(dir.path()).unwrap();
        // Take more than the whole address space asked for: the place is refused.
        let mut v: SpillVec<u64> = SpillVec::new_in(Some(&arena));
        v.reserve(usize::MAX / 16);
        assert!(v.is_empty() && arena.failed());
        let e = arena.error().unwrap().to_string();
        assert!(e.contains(&dir.path().display().to_string()), "{e}");
        v.push(1);
        assert!(v.is_empty(), "after an error nothing more is kept");
    }
}
