//! The recorder: one trace file per process, events buffered per thread and written as
//! blocks (formats/trace.md), so memory stays bounded whatever the length of the run.
//!
//! Every thread that records gets its own location (the thread that starts the recorder
//! is location 0, thread 0) and its own [`BlockEncoder`]; a full buffer is written out as
//! one block under the file's lock. Definitions are written before the first block and
//! again, complete, before any block written after they changed, so a trace cut short
//! still has definitions for every block it holds. Procedure addresses (the
//! `-finstrument-functions` hooks) get a placeholder name on the hot path and are
//! resolved from the ELF symbols when the trace is finished ([`crate::symbols`]).
//!
//! The hot path (an event on a thread that has recorded before) reads the wall clock (in
//! user space), marks the location's buffer busy (plain stores, see [`ThreadBuf`]) and
//! encodes the event, its CPU time pending until the next reading of the CPU clock when
//! it needs none: no allocation, no system call, no lock, except when the CPU clock is
//! read (see [`Inner::push`] and formats/trace.md, "CPU time of recorded traces") and
//! when a full block is written out.

use crate::clock;
use crate::encode::{Block, MAX_EVENT_BYTES};
use rustc_hash::FxHashMap;
use spoor_format::binary::{self, chunk, End, Header, IndexEntry};
use spoor_model::{CollOp, CommId, Definitions, Kind, LocId, MetricId, StrId};
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{
    compiler_fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};

/// Which CPU clock events carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuClock {
    /// The recording thread's CPU time (CLOCK_THREAD_CPUTIME_ID): a location is a thread.
    Thread,
    /// The process's CPU time (CLOCK_PROCESS_CPUTIME_ID).
    Process,
    /// No CPU time.
    None,
}

/// The default of [`Config::cpu_interval_ns`]: 10 µs.
pub const DEFAULT_CPU_INTERVAL_NS: i64 = 10_000;

/// At most this many events wait for the next reading of the CPU clock; the next event
/// reads it.
const PENDING: usize = 256;

/// How to record: where, under which names.
#[derive(Clone, Debug)]
pub struct Config {
    /// The directory the trace file is written to (created if missing).
    pub dir: PathBuf,
    /// The application's name (processes of one application share it).
    pub app: String,
    /// This process's name and rank within the application.
    pub process: String,
    pub rank: u32,
    /// The machine's name; the host name when `None`.
    pub machine: Option<String>,
    /// The file name within `dir`; `APP.PROCESS.RANK.PID.spoor` when `None`.
    pub file_name: Option<String>,
    /// A thread's buffer is written out as a block when it holds this many bytes.
    pub block_bytes: usize,
    pub cpu: CpuClock,
    /// The CPU clock (a system call) is read at the events whose CPU time must be exact
    /// (process and thread begin and end, the begin and end of every wait: `recv_begin`,
    /// `recv_end`, `coll_begin`, `coll_end`, `lock_request`, `lock_acquire`; clock
    /// offsets) and at the first event more than this many nanoseconds of wall time after
    /// the last reading. The events in between get CPU times from the readings around
    /// them, never more than this far from the truth (formats/trace.md). 0: read it at
    /// every event.
    pub cpu_interval_ns: i64,
    /// Flush the trace on SIGTERM, SIGINT and SIGSEGV.
    pub signals: bool,
    /// The process of this application that started this one (name, rank): defined as a
    /// peer (location 1), it is the parent of `process_begin`, the spawn arc.
    pub parent: Option<(String, u32)>,
}

impl Config {
    pub fn new(dir: impl Into<PathBuf>, app: &str, process: &str, rank: u32) -> Config {
        Config {
            dir: dir.into(),
            app: app.to_owned(),
            process: process.to_owned(),
            rank,
            machine: None,
            file_name: None,
            block_bytes: 64 * 1024,
            cpu: CpuClock::Thread,
            cpu_interval_ns: DEFAULT_CPU_INTERVAL_NS,
            signals: true,
            parent: None,
        }
    }
}

/// The host name (gethostname), or "localhost".
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or truncates.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if r != 0 {
        return "localhost".into();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// A name safe in a file name: anything but letters, digits, `-`, `_` and `.` becomes `_`.
pub fn file_safe(s: &str) -> String {
    let t: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    if t.is_empty() || t.starts_with('.') {
        format!("_{t}")
    } else {
        t
    }
}

fn gettid() -> libc::pid_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// One thread's buffer.
///
/// Its state is shared without a lock on the owning thread's side: the owner marks itself
/// `busy` with a plain store and checks that no other thread `claimed` the buffer, then
/// works on it; another thread (closing or flushing the trace) sets `claimed`, makes every
/// thread of the process pass a memory barrier (membarrier(2), [`barrier`]) and waits for
/// `busy` to clear. The barrier on the claiming side is what lets the owner's side do
/// without an atomic read-modify-write or a fence: an event costs two plain stores and a
/// load instead of a mutex's two locked instructions.
struct ThreadBuf {
    loc: LocId,
    /// The CPU clock of this location, readable from any thread (the owning thread's
    /// pthread_getcpuclockid, or the process's clock).
    clock: libc::clockid_t,
    /// The owning thread's kernel id.
    tid: libc::pid_t,
    st: UnsafeCell<ThreadState>,
    /// The owner works on `st` (written by the owner only).
    busy: AtomicBool,
    /// Another thread has `st`, or is taking it.
    claimed: AtomicBool,
    /// Serializes the other threads' claims.
    claim: Mutex<()>,
    /// The encoded events of `st` as of the owner's last finished event, for a signal
    /// handler that interrupts the owner in the middle of the next one.
    snap: Snapshot,
}

/// Where a buffer's complete events are (its block buffer never moves: its capacity is
/// reserved for a full block and the events that may follow it), for a signal handler
/// that interrupts the owner in the middle of an event. Two slots, so that one is whole
/// at every instant: `all` covers every encoded event, pending ones included, and is
/// torn while it is written and while settling rewrites the pending events in place;
/// `settled` covers the events before them, whose bytes never change, and is written
/// only while `all` is whole.
#[derive(Default)]
struct Snapshot {
    all: Facts,
    settled: Facts,
}

#[derive(Default)]
struct Facts {
    /// Odd while the fields may disagree.
    seq: AtomicU64,
    ptr: AtomicPtr<u8>,
    len: AtomicUsize,
    count: AtomicU64,
    min_wall: AtomicI64,
    max_wall: AtomicI64,
}

impl Facts {
    /// Records what `enc` holds now (plain stores, ordered after the encoding for a
    /// signal handler on this thread).
    #[inline]
    fn publish(&self, enc: &Block) {
        self.tear();
        self.ptr.store(enc.buf.as_ptr() as *mut u8, Ordering::Relaxed);
        self.count.store(enc.count, Ordering::Relaxed);
        self.min_wall.store(enc.min_wall, Ordering::Relaxed);
        self.max_wall.store(enc.max_wall, Ordering::Relaxed);
        self.len.store(enc.buf.len(), Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        self.seq.store(self.seq.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    #[inline]
    fn tear(&self) {
        self.seq.store(self.seq.load(Ordering::Relaxed) | 1, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
    }

    #[inline]
    fn clear(&self) {
        self.tear();
        self.len.store(0, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        self.seq.store(self.seq.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// (bytes, count, min wall, max wall), unless torn or empty.
    fn read(&self) -> Option<(*const u8, usize, u64, i64, i64)> {
        if self.seq.load(Ordering::Relaxed) & 1 == 1 {
            return None;
        }
        let (ptr, len) = (self.ptr.load(Ordering::Relaxed), self.len.load(Ordering::Relaxed));
        (!ptr.is_null() && len > 0).then(|| {
            (
                ptr as *const u8,
                len,
                self.count.load(Ordering::Relaxed),
                self.min_wall.load(Ordering::Relaxed),
                self.max_wall.load(Ordering::Relaxed),
            )
        })
    }
}

impl Snapshot {
    /// After an event whose encoding settled every pending event: both slots.
    #[inline]
    fn publish_settled(&self, enc: &Block) {
        self.all.publish(enc);
        self.settled.publish(enc);
    }

    /// After an event left pending: `settled` still holds for the bytes before it.
    #[inline]
    fn publish_pending(&self, enc: &Block) {
        self.all.publish(enc);
    }

    /// Settling is about to rewrite the pending events.
    #[inline]
    fn settling(&self) {
        self.all.tear();
    }

    #[inline]
    fn clear(&self) {
        self.all.clear();
        self.settled.clear();
    }

    /// The events a handler may write: every encoded one, or, while those bytes change,
    /// the settled ones.
    fn read(&self) -> Option<(*const u8, usize, u64, i64, i64)> {
        compiler_fence(Ordering::SeqCst);
        self.all.read().or_else(|| self.settled.read())
    }
}

// SAFETY: `st` is only touched under the owner/claim protocol above.
unsafe impl Sync for ThreadBuf {}
unsafe impl Send for ThreadBuf {}

impl ThreadBuf {
    fn new(loc: LocId, clock: libc::clockid_t, block_bytes: usize) -> ThreadBuf {
        ThreadBuf {
            loc,
            clock,
            tid: gettid(),
            st: UnsafeCell::new(ThreadState::new(block_bytes)),
            busy: AtomicBool::new(false),
            claimed: AtomicBool::new(false),
            claim: Mutex::new(()),
            snap: Snapshot::default(),
        }
    }

    /// Runs `f` on the state from the owning thread. `None` when the owner is already in
    /// the middle of an event (a signal handler interrupted it and records too): the
    /// nested event is dropped rather than corrupt the one interrupted.
    #[inline]
    fn own<R>(&self, f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
        if self.busy.load(Ordering::Relaxed) {
            return None;
        }
        loop {
            self.busy.store(true, Ordering::Relaxed);
            barrier::light();
            if !self.claimed.load(Ordering::Acquire) {
                // SAFETY: no other thread has the state (it claims it only after seeing
                // `busy` clear, and we saw no claim after setting `busy`).
                let r = f(unsafe { &mut *self.st.get() });
                self.busy.store(false, Ordering::Release);
                return Some(r);
            }
            self.busy.store(false, Ordering::Release);
            // Another thread is finishing or flushing the trace: wait for it.
            while self.claimed.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        }
    }

    /// Runs `f` on the state from any thread. From a signal handler (`from_signal`) it
    /// does not wait: `None` if another claim is under way, or if the owner is in the
    /// middle of an event and is the thread the handler interrupted (or does not finish
    /// it within about a millisecond).
    fn claim<R>(&self, from_signal: bool, f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
        let _g = if from_signal { try_lock(&self.claim)? } else { lock(&self.claim) };
        self.claimed.store(true, Ordering::Relaxed);
        barrier::heavy();
        let mut spins = 0u32;
        while self.busy.load(Ordering::Acquire) {
            if from_signal && (spins >= 1000 || gettid() == self.tid) {
                self.claimed.store(false, Ordering::Release);
                return None;
            }
            spins += 1;
            std::thread::yield_now();
        }
        // SAFETY: the owner saw our claim or finished its event (see `own`).
        let r = f(unsafe { &mut *self.st.get() });
        self.claimed.store(false, Ordering::Release);
        Some(r)
    }
}

/// The asymmetric memory barrier of [`ThreadBuf`]: a compiler barrier on the owners' side
/// and membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) on the claiming side once the process
/// is registered for it (Linux 4.14); full fences on both sides otherwise.
mod barrier {
    use std::sync::atomic::{compiler_fence, fence, AtomicBool, Ordering};

    const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    static REGISTERED: AtomicBool = AtomicBool::new(false);

    /// Registers the process for expedited barriers; call before any buffer exists.
    pub(super) fn register() {
        if REGISTERED.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: membarrier takes plain integers.
        let r = unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0, 0) };
        if r == 0 {
            REGISTERED.store(true, Ordering::Release);
        }
    }

    #[inline]
    pub(super) fn light() {
        if REGISTERED.load(Ordering::Relaxed) {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    pub(super) fn heavy() {
        if REGISTERED.load(Ordering::Relaxed) {
            // SAFETY: as above.
            let r = unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0, 0) };
            if r == 0 {
                return;
            }
        }
        fence(Ordering::SeqCst);
    }
}

struct ThreadState {
    enc: Block,
    /// The wall and CPU time of the last event given its CPU time on this location.
    last: Option<(i64, i64)>,
    /// The wall time of the last reading of the CPU clock.
    read_wall: i64,
    /// Procedure addresses already given a string id, so the hot path takes no other lock.
    addrs: AddrCache,
    /// The trace is finished: nothing more is recorded.
    done: bool,
}

/// Procedure address -> string id: a direct-mapped table in front of a hash map.
struct AddrCache {
    slots: Box<[(usize, StrId); AddrCache::SLOTS]>,
    more: FxHashMap<usize, StrId>,
}

impl AddrCache {
    const SLOTS: usize = 1024;

    fn new() -> AddrCache {
        AddrCache { slots: Box::new([(0, 0); AddrCache::SLOTS]), more: FxHashMap::default() }
    }

    #[inline]
    fn slot(addr: usize) -> usize {
        (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) & (AddrCache::SLOTS - 1)
    }

    #[inline]
    fn get(&self, addr: usize) -> Option<StrId> {
        let (a, id) = self.slots[Self::slot(addr)];
        if a == addr && addr != 0 {
            return Some(id);
        }
        self.more.get(&addr).copied()
    }

    fn insert(&mut self, addr: usize, id: StrId) {
        if addr == 0 {
            self.more.insert(addr, id);
            return;
        }
        let s = &mut self.slots[Self::slot(addr)];
        if s.0 != 0 {
            self.more.insert(s.0, s.1);
        }
        *s = (addr, id);
    }
}

/// What the file's lock protects.
struct Shared {
    file: File,
    path: PathBuf,
    defs: Definitions,
    /// The definitions changed since they were last written.
    dirty: bool,
    offset: u64,
    index: Vec<IndexEntry>,
    events: u64,
    /// Procedure addresses in the order they were first seen, with their string ids.
    addrs: Vec<(usize, StrId)>,
    addr_ids: HashMap<usize, StrId>,
    closed: bool,
    scratch: Vec<u8>,
}

impl Shared {
    fn write_chunk(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        binary::put_chunk(&mut buf, kind, payload);
        let r = self.file.write_all(&buf);
        self.offset += buf.len() as u64;
        self.scratch = buf;
        r
    }

    fn write_defs(&mut self) -> io::Result<()> {
        let payload = binary::encode_defs(&self.defs);
        self.dirty = false;
        self.write_chunk(chunk::DEFS, &payload)
    }

    fn write_block(&mut self, loc: LocId, enc: &Block) -> io::Result<()> {
        self.write_events(loc, &enc.buf, enc.count, enc.min_wall, enc.max_wall)
    }

    /// Writes `count` encoded events as one block.
    fn write_events(
        &mut self,
        loc: LocId,
        events: &[u8],
        count: u64,
        min_wall: i64,
        max_wall: i64,
    ) -> io::Result<()> {
        if self.closed || count == 0 {
            return Ok(());
        }
        if self.dirty {
            self.write_defs()?;
        }
        let mut payload = Vec::with_capacity(events.len() + 12);
        spoor_format::varint::put_u64(&mut payload, loc as u64);
        spoor_format::varint::put_u64(&mut payload, count);
        payload.extend_from_slice(events);
        self.index.push(IndexEntry { offset: self.offset, loc: Some(loc), count, min_wall, max_wall });
        self.events += count;
        self.write_chunk(chunk::BLOCK, &payload)
    }

    /// Names for the procedure addresses, then the final definitions, index and end chunk.
    fn close(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        if !self.addrs.is_empty() {
            let addrs: Vec<usize> = self.addrs.iter().map(|a| a.0).collect();
            let names = crate::symbols::resolve(&addrs);
            let renames: HashMap<StrId, String> =
                self.addrs.iter().zip(names).filter_map(|(&(_, id), n)| n.map(|n| (id, n))).collect();
            self.defs = rename_strings(&self.defs, &renames);
            self.addrs.clear();
        }
        crate::cpus::describe(&mut self.defs);
        self.write_defs()?;
        let index_offset = self.offset;
        let payload = binary::encode_index(&self.index);
        self.write_chunk(chunk::INDEX, &payload)?;
        let end = End { events: self.events, blocks: self.index.len() as u64, index_offset };
        self.write_chunk(chunk::END, &end.encode())?;
        self.closed = true;
        self.file.flush()
    }
}

/// The definitions with some strings renamed, ids kept. A new name that is already
/// taken gets its old text appended, as strings must stay unique.
fn rename_strings(defs: &Definitions, renames: &HashMap<StrId, String>) -> Definitions {
    let old: Vec<&str> = defs.strings.iter().collect();
    let mut taken: std::collections::HashSet<String> = old
        .iter()
        .enumerate()
        .filter(|(i, _)| !renames.contains_key(&(*i as StrId)))
        .map(|(_, s)| s.to_string())
        .collect();
    let mut out = Definitions { strings: spoor_model::StringTable::new(), ..defs.clone() };
    for (i, s) in old.iter().enumerate() {
        let text = match renames.get(&(i as StrId)) {
            Some(n) => {
                let mut t = n.clone();
                if taken.contains(&t) {
                    t = format!("{n} [{s}]");
                }
                taken.insert(t.clone());
                t
            }
            None => s.to_string(),
        };
        let id = out.strings.intern(&text);
        debug_assert_eq!(id as usize, i);
    }
    out
}

struct Inner {
    id: usize,
    shared: Mutex<Shared>,
    threads: Mutex<Vec<Arc<ThreadBuf>>>,
    main: Arc<ThreadBuf>,
    /// The kernel thread id of the thread that started the recorder: its events go to
    /// location 0 even once its thread-local storage is gone (glibc's exit() destroys it
    /// before running atexit handlers).
    main_tid: libc::pid_t,
    finished: AtomicBool,
    next_thread: AtomicU32,
    block_bytes: usize,
    cpu: CpuClock,
    cpu_interval_ns: i64,
    /// The process of this file (process 0) and its name, for naming new threads.
    process_name: Mutex<String>,
}

/// The recorder of one process. Cheap to clone; every clone records into the same file.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Inner>,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
/// Every recorder alive, for the signal handlers.
static ACTIVE: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

struct Local {
    id: usize,
    inner: Weak<Inner>,
    buf: Arc<ThreadBuf>,
}

impl Drop for Local {
    fn drop(&mut self) {
        let _ = LAST.try_with(|c| c.set((0, std::ptr::null())));
        if let Some(inner) = self.inner.upgrade() {
            if !Arc::ptr_eq(&self.buf, &inner.main) {
                inner.push(&self.buf, Kind::ThreadEnd, true);
            }
            inner.flush_thread(&self.buf);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Vec<Local>> = const { RefCell::new(Vec::new()) };
    /// The recorder (its id) and buffer this thread recorded into last: the hot path's
    /// way past LOCAL. The buffer is kept alive by that recorder's `threads`, and a
    /// recorder's id is never reused. No destructor: readable while LOCAL is destroyed.
    static LAST: Cell<(usize, *const ThreadBuf)> = const { Cell::new((0, std::ptr::null())) };
}

impl Recorder {
    /// Creates the trace file, writes its header and definitions, and records
    /// `process_begin` on the calling thread, which becomes location 0.
    pub fn start(cfg: Config) -> io::Result<Recorder> {
        std::fs::create_dir_all(&cfg.dir).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create the output directory {}: {e}", cfg.dir.display()))
        })?;
        let pid = std::process::id();
        crate::cpus::reset();
        crate::cpus::note();
        let name = cfg.file_name.clone().unwrap_or_else(|| {
            format!("{}.{}.{}.{pid}.spoor", file_safe(&cfg.app), file_safe(&cfg.process), cfg.rank)
        });
        let path = cfg.dir.join(name);
        let mut file = File::create(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))?;
        let mut defs = Definitions::new();
        let app = defs.add_app(&cfg.app);
        let machine = defs.add_machine(&cfg.machine.clone().unwrap_or_else(hostname));
        let proc = defs.add_process(&cfg.process, app, machine, cfg.rank);
        let loc = defs.add_location(&cfg.process, proc, 0);
        let parent = cfg.parent.as_ref().map(|(name, rank)| {
            let p = defs.add_process(name, app, machine, *rank);
            defs.add_location(name, p, 0)
        });
        defs.set_property("creator", "spoor-record");
        defs.set_property("clock", "CLOCK_REALTIME");
        defs.set_property(
            "cpu_clock",
            match cfg.cpu {
                CpuClock::Thread => "CLOCK_THREAD_CPUTIME_ID",
                CpuClock::Process => "CLOCK_PROCESS_CPUTIME_ID",
                CpuClock::None => "none",
            },
        );
        if cfg.cpu != CpuClock::None {
            defs.set_property("cpu_interval_ns", &cfg.cpu_interval_ns.max(0).to_string());
        }
        defs.set_property("pid", &pid.to_string());
        let header = Header::new(0).encode();
        file.write_all(&header)?;
        let cpu_clock = match cfg.cpu {
            CpuClock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
            _ => clock::this_thread_cpu_clock(),
        };
        let block_bytes = cfg.block_bytes.max(64);
        barrier::register();
        let main = Arc::new(ThreadBuf::new(loc, cpu_clock, block_bytes));
        let mut shared = Shared {
            file,
            path,
            defs,
            dirty: true,
            offset: header.len() as u64,
            index: Vec::new(),
            events: 0,
            addrs: Vec::new(),
            addr_ids: HashMap::new(),
            closed: false,
            scratch: Vec::new(),
        };
        shared.write_defs()?;
        let inner = Arc::new(Inner {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            shared: Mutex::new(shared),
            threads: Mutex::new(vec![main.clone()]),
            main: main.clone(),
            main_tid: gettid(),
            finished: AtomicBool::new(false),
            next_thread: AtomicU32::new(1),
            block_bytes,
            cpu: cfg.cpu,
            cpu_interval_ns: cfg.cpu_interval_ns.max(0),
            process_name: Mutex::new(cfg.process.clone()),
        });
        let _ = LOCAL.try_with(|l| {
            l.borrow_mut().push(Local { id: inner.id, inner: Arc::downgrade(&inner), buf: main.clone() })
        });
        {
            let mut active = lock(&ACTIVE);
            active.retain(|w| w.strong_count() > 0);
            active.push(Arc::downgrade(&inner));
        }
        if cfg.signals {
            crate::signals::install();
        }
        let rec = Recorder { inner };
        rec.record(Kind::ProcessBegin { parent });
        Ok(rec)
    }

    /// The trace file (it may be renamed by [`Recorder::rename_file`]).
    pub fn path(&self) -> PathBuf {
        lock(&self.inner.shared).path.clone()
    }

    /// Renames the trace file within its directory.
    pub fn rename_file(&self, name: &str) -> io::Result<PathBuf> {
        let mut sh = lock(&self.inner.shared);
        let to = sh.path.with_file_name(name);
        std::fs::rename(&sh.path, &to)?;
        sh.path = to.clone();
        Ok(to)
    }

    /// The location of the calling thread (a new one the first time a thread records).
    pub fn location(&self) -> LocId {
        self.inner.with_local(|b| b.loc)
    }

    /// Changes the definitions (ids already used must keep their meaning: add, rename,
    /// never remove or renumber). They are written out before the next block.
    pub fn with_defs<R>(&self, f: impl FnOnce(&mut Definitions) -> R) -> R {
        let mut sh = lock(&self.inner.shared);
        sh.dirty = true;
        f(&mut sh.defs)
    }

    /// A copy of the current definitions.
    pub fn defs(&self) -> Definitions {
        lock(&self.inner.shared).defs.clone()
    }

    /// Sets this process's name and rank (e.g. once MPI tells the rank).
    pub fn set_process(&self, name: &str, rank: u32) {
        *lock(&self.inner.process_name) = name.to_owned();
        self.with_defs(|d| {
            let n = d.strings.intern(name);
            d.processes[0].name = n;
            d.processes[0].rank = rank;
            d.locations[0].name = n;
        });
    }

    /// The id of a name in the string table (procedures, phases).
    pub fn intern(&self, s: &str) -> StrId {
        let mut sh = lock(&self.inner.shared);
        if let Some(id) = sh.defs.strings.lookup(s) {
            return id;
        }
        sh.dirty = true;
        sh.defs.strings.intern(s)
    }

    /// Records one event on the calling thread's location, with wall and CPU time now.
    #[inline]
    pub fn record(&self, kind: Kind) {
        let inner = &self.inner;
        inner.with_local(|b| inner.push(b, kind, true));
    }

    /// Records an event that the caller follows at once with the begin of a wait
    /// (`recv_begin`, `coll_begin`, `lock_request`), whose reading of the CPU clock then
    /// gives this event its CPU time too: it never reads the clock for being more than
    /// [`Config::cpu_interval_ns`] after the last reading (e.g. the `enter` of a blocking
    /// MPI call after a stretch of computing). Its CPU time is then off by at most the
    /// wall time between it and the wait's begin (formats/trace.md).
    #[inline]
    pub fn record_before_wait(&self, kind: Kind) {
        let inner = &self.inner;
        inner.with_local(|b| b.own(|st| inner.push_locked(b, st, kind, true, true)));
    }

    /// Records entering the procedure at `addr` (a code address, resolved to a name
    /// when the trace is finished).
    #[inline]
    pub fn enter_addr(&self, addr: usize) {
        let inner = &self.inner;
        inner.with_local(|b| inner.push_addr(b, addr, true));
    }

    #[inline]
    pub fn leave_addr(&self, addr: usize) {
        let inner = &self.inner;
        inner.with_local(|b| inner.push_addr(b, addr, false));
    }

    /// Writes out the calling thread's buffer now (its pending events get their CPU
    /// times from a reading of the clock now).
    pub fn flush(&self) {
        let inner = &self.inner;
        inner.with_local(|b| inner.flush_thread(b));
    }

    /// Whether [`Recorder::finish`] ran (or a fatal signal closed the trace).
    pub fn is_finished(&self) -> bool {
        self.inner.finished.load(Ordering::Acquire)
    }

    /// Records `process_end`, writes out every buffer, resolves procedure addresses to
    /// names, and writes the final definitions, the index and the end chunk. Later events
    /// are dropped. Returns the trace's path.
    pub fn finish(&self) -> io::Result<PathBuf> {
        let inner = &self.inner;
        if !inner.finished.load(Ordering::Acquire) {
            let main = inner.main.clone();
            let on_main = gettid() == inner.main_tid;
            inner.push(&main, Kind::ProcessEnd, on_main);
        }
        inner.close(false)
    }

    /// Events and blocks written so far (after [`Recorder::finish`]: all of them).
    pub fn written(&self) -> (u64, usize) {
        let sh = lock(&self.inner.shared);
        (sh.events, sh.index.len())
    }
}

impl ThreadState {
    fn new(block_bytes: usize) -> ThreadState {
        // A full block, then at most the pending events and one more before it is
        // written out: the buffer never moves (see Snapshot).
        let enc = Block::with_capacity(block_bytes + (PENDING + 1) * MAX_EVENT_BYTES, PENDING);
        ThreadState { enc, last: None, read_wall: 0, addrs: AddrCache::new(), done: false }
    }

    /// Encodes one event whose times are known.
    #[inline]
    fn encode(&mut self, wall: i64, cpu: Option<i64>, kind: Kind) {
        self.enc.push(wall, cpu, &kind);
        if let Some(c) = cpu {
            self.last = Some((wall, c));
        }
    }

    /// A reading `raw` of the CPU clock at wall time `wall` (`None`: no reading), made
    /// consistent with the location's last CPU time: never below it, never more above it
    /// than the wall time since (the two clocks are read one after the other, so a few
    /// nanoseconds of disagreement are possible). Without a reading: the last CPU time
    /// advanced by the wall time since.
    fn clamp_cpu(&self, wall: i64, raw: Option<i64>) -> i64 {
        match (self.last, raw) {
            (Some((lw, lc)), Some(c)) => c.clamp(lc, lc + (wall - lw).max(0)),
            (Some((lw, lc)), None) => lc + (wall - lw).max(0),
            (None, Some(c)) => c,
            (None, None) => 0,
        }
    }

    /// Gives the pending events their CPU times, `cpu` being the next reading (already
    /// clamped): between the last CPU time and `cpu`, the CPU time advances with the wall
    /// time from event to event ("computing") until it reaches `cpu`, then stays there
    /// ([`Block::settle`]). No pending event goes below the truth or back, none advances
    /// more than the wall time.
    fn settle(&mut self, cpu: i64) {
        let Some(last) = self.last else { return };
        if let Some(l) = self.enc.settle(last, cpu) {
            self.last = Some(l);
        }
    }
}

/// Whether an event's CPU time must come from a reading of the clock: process and thread
/// begin and end, and the begin and end of the waits of the cost model (formats/pag.md),
/// whose CPU time is not counted; clock offsets (rare).
#[inline]
fn needs_cpu_reading(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::ProcessBegin { .. }
            | Kind::ProcessEnd
            | Kind::ThreadBegin { .. }
            | Kind::ThreadEnd
            | Kind::RecvBegin { .. }
            | Kind::RecvEnd { .. }
            | Kind::CollBegin { .. }
            | Kind::CollEnd { .. }
            | Kind::LockRequest { .. }
            | Kind::LockAcquire { .. }
            | Kind::ClockOffset { .. }
    )
}

impl Inner {
    /// Runs `f` with the calling thread's buffer, creating its location on first use.
    #[inline]
    fn with_local<R>(self: &Arc<Self>, f: impl FnOnce(&ThreadBuf) -> R) -> R {
        let hit = LAST.try_with(|c| c.get()).ok().filter(|&(id, p)| id == self.id && !p.is_null());
        if let Some((_, p)) = hit {
            // SAFETY: see LAST: the buffer belongs to this recorder, which is alive.
            return f(unsafe { &*p });
        }
        self.with_local_slow(f)
    }

    #[cold]
    fn with_local_slow<R>(self: &Arc<Self>, f: impl FnOnce(&ThreadBuf) -> R) -> R {
        let found = LOCAL.try_with(|l| l.borrow().iter().find(|x| x.id == self.id).map(|x| x.buf.clone()));
        match found {
            Ok(Some(b)) => {
                let _ = LAST.try_with(|c| c.set((self.id, Arc::as_ptr(&b))));
                f(&b)
            }
            Ok(None) => {
                let b = self.new_thread();
                let _ = LOCAL.try_with(|l| {
                    l.borrow_mut().push(Local { id: self.id, inner: Arc::downgrade(self), buf: b.clone() })
                });
                let _ = LAST.try_with(|c| c.set((self.id, Arc::as_ptr(&b))));
                self.push(&b, Kind::ThreadBegin { parent: None }, true);
                f(&b)
            }
            // The thread's storage is gone (it is exiting): the main thread keeps location
            // 0; another thread records on a location of its own, not kept.
            Err(_) if gettid() == self.main_tid => f(&self.main),
            Err(_) => f(&self.new_thread()),
        }
    }

    fn new_thread(&self) -> Arc<ThreadBuf> {
        let n = self.next_thread.fetch_add(1, Ordering::Relaxed);
        let pname = lock(&self.process_name).clone();
        let loc = {
            let _deferred = crate::signals::Deferred::new();
            let mut sh = lock(&self.shared);
            sh.dirty = true;
            sh.defs.add_location(&format!("{pname} thread {n}"), 0, n)
        };
        let clock = match self.cpu {
            CpuClock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
            _ => clock::this_thread_cpu_clock(),
        };
        let b = Arc::new(ThreadBuf::new(loc, clock, self.block_bytes));
        lock(&self.threads).push(b.clone());
        b
    }

    /// Reads the CPU clock of `b`: `own` when the calling thread is `b`'s.
    #[inline]
    fn read_cpu(&self, b: &ThreadBuf, own: bool) -> Option<i64> {
        match self.cpu {
            CpuClock::None => None,
            CpuClock::Thread if own => {
                crate::cpus::note();
                clock::read_ns(libc::CLOCK_THREAD_CPUTIME_ID)
            }
            _ => {
                if own {
                    crate::cpus::note();
                }
                clock::read_ns(b.clock)
            }
        }
    }

    /// Records `kind` on `b` now (`own`: from `b`'s thread). The wall clock is read for
    /// every event. The CPU clock is read when the kind needs it ([`needs_cpu_reading`]),
    /// when more than `cpu_interval_ns` of wall time went by since the last reading, or
    /// when [`PENDING`] events wait; otherwise the event is encoded with its CPU time
    /// pending, which the next reading settles ([`ThreadState::settle`]).
    #[inline]
    fn push(&self, b: &ThreadBuf, kind: Kind, own: bool) {
        if own {
            b.own(|st| self.push_locked(b, st, kind, true, false));
        } else {
            b.claim(false, |st| self.push_locked(b, st, kind, false, false));
        }
    }

    #[inline]
    fn push_locked(&self, b: &ThreadBuf, st: &mut ThreadState, kind: Kind, own: bool, before_wait: bool) {
        if st.done {
            return;
        }
        if self.cpu == CpuClock::None {
            st.encode(clock::wall_ns(), None, kind);
        } else if needs_cpu_reading(&kind) || st.last.is_none() || self.cpu_interval_ns == 0 {
            // CPU first: the clamp absorbs the wall clock's read.
            let raw = self.read_cpu(b, own);
            let wall = clock::wall_ns();
            self.encode_read(b, st, wall, raw, kind);
        } else {
            let wall = clock::wall_ns();
            if (before_wait || wall - st.read_wall <= self.cpu_interval_ns) && st.enc.pending() < PENDING {
                // Complete as encoded (CPU advancing with wall time until settled), so
                // published: a fatal signal writes them.
                st.enc.push_pending(wall, &kind);
                b.snap.publish_pending(&st.enc);
                return;
            }
            let raw = self.read_cpu(b, own);
            self.encode_read(b, st, wall, raw, kind);
        }
        if st.enc.buf.len() >= self.block_bytes {
            self.write_out(b, st);
        } else {
            b.snap.publish_settled(&st.enc);
        }
    }

    /// Encodes the pending events and `kind` at `wall`, with the CPU reading `raw`.
    #[inline]
    fn encode_read(&self, b: &ThreadBuf, st: &mut ThreadState, wall: i64, raw: Option<i64>, kind: Kind) {
        let cpu = st.clamp_cpu(wall, raw);
        if st.enc.pending() > 0 {
            b.snap.settling();
        }
        st.settle(cpu);
        st.encode(wall, Some(cpu), kind);
        if raw.is_some() {
            st.read_wall = wall;
        }
    }

    #[inline]
    fn push_addr(&self, b: &ThreadBuf, addr: usize, enter: bool) {
        b.own(|st| {
            if st.done {
                return;
            }
            let id = match st.addrs.get(addr) {
                Some(id) => id,
                None => {
                    let id = self.addr_id(addr);
                    st.addrs.insert(addr, id);
                    id
                }
            };
            let kind = if enter { Kind::Enter { proc: id } } else { Kind::Leave { proc: id } };
            self.push_locked(b, st, kind, true, false);
        });
    }

    /// The string id of a procedure address: a placeholder `0x…` until the trace is closed.
    #[cold]
    fn addr_id(&self, addr: usize) -> StrId {
        let _deferred = crate::signals::Deferred::new();
        let mut sh = lock(&self.shared);
        if let Some(&id) = sh.addr_ids.get(&addr) {
            return id;
        }
        let id = sh.defs.strings.intern(&format!("{addr:#x}"));
        sh.dirty = true;
        sh.addr_ids.insert(addr, id);
        sh.addrs.push((addr, id));
        id
    }

    /// Gives `b`'s pending events their CPU times from a reading of its clock now (from
    /// any thread), or, if it cannot be read, as if its thread computed since.
    fn settle_now(&self, b: &ThreadBuf, st: &mut ThreadState) {
        if st.enc.pending() == 0 {
            return;
        }
        let raw = self.read_cpu(b, false);
        let wall = clock::wall_ns();
        let cpu = st.clamp_cpu(wall, raw);
        b.snap.settling();
        st.settle(cpu);
    }

    fn write_out(&self, b: &ThreadBuf, st: &mut ThreadState) {
        if st.enc.count == 0 {
            return;
        }
        // From the snapshot's clearing to the buffer's, a handler would find neither.
        let _deferred = crate::signals::Deferred::new();
        b.snap.clear();
        {
            let mut sh = lock(&self.shared);
            if let Err(e) = sh.write_block(b.loc, &st.enc) {
                report_io(&sh.path, &e);
            }
        }
        st.enc.clear();
    }

    /// Writes out the buffer of the calling thread.
    fn flush_thread(&self, b: &ThreadBuf) {
        b.own(|st| {
            self.settle_now(b, st);
            self.write_out(b, st);
        });
    }

    /// Writes out every buffer and closes the trace. In a signal handler (`from_signal`)
    /// no lock is waited for: a buffer another thread holds is left out.
    fn close(&self, from_signal: bool) -> io::Result<PathBuf> {
        let _deferred = (!from_signal).then(crate::signals::Deferred::new);
        self.finished.store(true, Ordering::Release);
        let threads: Vec<Arc<ThreadBuf>> = if from_signal {
            match try_lock(&self.threads) {
                Some(t) => t.clone(),
                None => vec![self.main.clone()],
            }
        } else {
            lock(&self.threads).clone()
        };
        for b in &threads {
            let claimed = b.claim(from_signal, |st| {
                st.done = true;
                self.settle_now(b, st);
                if st.enc.count > 0 {
                    b.snap.clear();
                    let sh = if from_signal { try_lock(&self.shared) } else { Some(lock(&self.shared)) };
                    let Some(mut sh) = sh else { return };
                    if let Err(e) = sh.write_block(b.loc, &st.enc) {
                        report_io(&sh.path, &e);
                    }
                    st.enc.clear();
                }
            });
            if claimed.is_none() && from_signal && b.busy.load(Ordering::Relaxed) && gettid() == b.tid {
                // The handler interrupted this thread's own event, and the process ends
                // with the signal: write the events complete before it.
                if let (Some((ptr, len, n, lo, hi)), Some(mut sh)) = (b.snap.read(), try_lock(&self.shared)) {
                    // SAFETY: the buffer never moves and holds `len` bytes of complete
                    // events (Snapshot); the interrupted owner does not run again.
                    let events = unsafe { std::slice::from_raw_parts(ptr, len) };
                    let _ = sh.write_events(b.loc, events, n, lo, hi);
                }
            }
        }
        let sh = if from_signal { try_lock(&self.shared) } else { Some(lock(&self.shared)) };
        let Some(mut sh) = sh else {
            return Err(io::Error::other("the trace file is busy"));
        };
        sh.close()?;
        Ok(sh.path.clone())
    }

    /// Writes out every buffer (and the definitions) without closing the trace.
    fn flush_all(&self, from_signal: bool) {
        let _deferred = (!from_signal).then(crate::signals::Deferred::new);
        let threads: Vec<Arc<ThreadBuf>> = if from_signal {
            match try_lock(&self.threads) {
                Some(t) => t.clone(),
                None => return,
            }
        } else {
            lock(&self.threads).clone()
        };
        for b in &threads {
            b.claim(from_signal, |st| {
                self.settle_now(b, st);
                b.snap.clear();
                let sh = if from_signal { try_lock(&self.shared) } else { Some(lock(&self.shared)) };
                let Some(mut sh) = sh else { return };
                let _ = sh.write_block(b.loc, &st.enc);
                drop(sh);
                st.enc.clear();
            });
        }
        if let Some(mut sh) = try_lock(&self.shared) {
            if sh.dirty && !sh.closed {
                let _ = sh.write_defs();
            }
        }
    }
}

fn report_io(path: &Path, e: &io::Error) {
    static ONCE: AtomicBool = AtomicBool::new(false);
    if !ONCE.swap(true, Ordering::Relaxed) {
        eprintln!("spoor-record: cannot write {}: {e}; later events may be lost", path.display());
    }
}

/// Called from the signal handlers: closes every trace (`terminating`), or writes out
/// what is buffered when the program's own handler runs next and may go on.
pub(crate) fn flush_from_signal(terminating: bool) {
    let Some(active) = try_lock(&ACTIVE) else { return };
    let recs: Vec<Arc<Inner>> = active.iter().filter_map(Weak::upgrade).collect();
    drop(active);
    for r in recs {
        if r.finished.load(Ordering::Acquire) {
            continue;
        }
        if terminating {
            let _ = r.close(true);
        } else {
            r.flush_all(true);
        }
    }
}

/// Helpers of the Rust API on top of [`Recorder::record`].
impl Recorder {
    /// Defines another process of this application (thread 0 of process `name`, `rank`)
    /// and returns its location, to name it as a peer of messages. Every process's trace
    /// may define its peers: spoor-merge unifies them by application, name and rank.
    pub fn peer(&self, name: &str, rank: u32) -> LocId {
        self.with_defs(|d| {
            let app = d.processes[0].app;
            let machine = d.processes[0].machine;
            let n = d.strings.lookup(name);
            if let Some(p) =
                d.processes.iter().position(|p| p.app == app && Some(p.name) == n && p.rank == rank)
            {
                if let Some(l) = d.locations.iter().position(|l| l.process == p as u32 && l.thread == 0) {
                    return l as LocId;
                }
            }
            let p = d.add_process(name, app, machine, rank);
            d.add_location(name, p, 0)
        })
    }

    /// Defines a communicator (a group of locations, `members[i]` the location of rank
    /// `i`), or returns the one already defined with that name and those members.
    pub fn comm(&self, name: &str, members: &[LocId]) -> CommId {
        self.with_defs(|d| {
            let n = d.strings.lookup(name);
            if let Some(c) = d.comms.iter().position(|c| Some(c.name) == n && c.members == members) {
                return c as CommId;
            }
            d.add_comm(name, members.to_vec())
        })
    }

    /// Defines a metric (or returns the one with that name and unit).
    pub fn metric_def(&self, name: &str, unit: &str) -> MetricId {
        self.with_defs(|d| {
            let (n, u) = (d.strings.lookup(name), d.strings.lookup(unit));
            if let Some(m) = d.metrics.iter().position(|m| Some(m.name) == n && Some(m.unit) == u) {
                return m as MetricId;
            }
            d.add_metric(name, unit)
        })
    }

    /// Interns a procedure name once, to pass to [`Recorder::enter`] on hot paths.
    pub fn procedure(&self, name: &str) -> StrId {
        self.intern(name)
    }

    pub fn enter(&self, proc: StrId) {
        self.record(Kind::Enter { proc });
    }

    pub fn leave(&self, proc: StrId) {
        self.record(Kind::Leave { proc });
    }

    /// Enters `proc` and returns a guard that leaves it when dropped.
    pub fn scope(&self, proc: StrId) -> ProcGuard<'_> {
        self.enter(proc);
        ProcGuard { rec: self, proc }
    }

    pub fn send(&self, to: LocId, comm: CommId, tag: u32, bytes: u64) {
        self.record(Kind::Send { to, comm, tag, bytes });
    }

    /// A blocking receive starts waiting; `None` for any source or any tag.
    pub fn recv_begin(&self, from: Option<LocId>, comm: CommId, tag: Option<u32>) {
        self.record(Kind::RecvBegin { from, comm, tag });
    }

    /// The receive completes with what actually arrived.
    pub fn recv_end(&self, from: LocId, comm: CommId, tag: u32, bytes: u64) {
        self.record(Kind::RecvEnd { from, comm, tag, bytes });
    }

    pub fn lock_request(&self, lock: u64) {
        self.record(Kind::LockRequest { lock });
    }

    pub fn lock_acquire(&self, lock: u64) {
        self.record(Kind::LockAcquire { lock });
    }

    pub fn lock_release(&self, lock: u64) {
        self.record(Kind::LockRelease { lock });
    }

    pub fn barrier_begin(&self, comm: CommId) {
        self.record(Kind::CollBegin { op: CollOp::Barrier, comm });
    }

    pub fn barrier_end(&self, comm: CommId) {
        self.record(Kind::CollEnd { op: CollOp::Barrier, comm, root: None, sent: 0, received: 0 });
    }

    pub fn phase_begin(&self, name: StrId) {
        self.record(Kind::PhaseBegin { name });
    }

    pub fn phase_end(&self, name: StrId) {
        self.record(Kind::PhaseEnd { name });
    }

    pub fn metric(&self, metric: MetricId, value: f64) {
        self.record(Kind::Metric { metric, value });
    }

    /// reference time = local time + `offset`, within ± `error`.
    pub fn clock_offset(&self, reference: LocId, offset: i64, error: u64) {
        self.record(Kind::ClockOffset { reference, offset, error });
    }
}

/// Leaves its procedure when dropped (see [`Recorder::scope`]).
pub struct ProcGuard<'a> {
    rec: &'a Recorder,
    proc: StrId,
}

impl Drop for ProcGuard<'_> {
    fn drop(&mut self) {
        self.rec.leave(self.proc);
    }
}
