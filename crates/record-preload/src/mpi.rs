//! The Rust side of the PMPI wrappers (c/mpi_shim.c): communicators and their members
//! as world ranks, world ranks as locations, requests as ids, and the events.
//!
//! Layout of every rank's definitions: location 0 is this rank's main thread (process 0,
//! named `rank R` once MPI_Init has told R); every other rank of MPI_COMM_WORLD is defined
//! too (process `rank K`, rank K, on the machine MPI names for it, thread 0), so that peers
//! are locations and spoor-merge unifies the ranks' files by application, name and rank.

use crate::recorder;
use rustc_hash::FxHashMap as HashMap;
use spoor_model::{CollOp, CommId, Kind, LocId};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Default)]
struct State {
    /// World rank -> location; empty before MPI_Init.
    world_loc: Vec<LocId>,
    /// Communicator handle -> id.
    comms: HashMap<u64, CommId>,
    /// The last communicator looked up (handle, id): the wrappers of a loop mostly use one.
    last_comm: Option<(u64, CommId)>,
    /// The members of each communicator (indexed by id) as locations, rank by rank.
    locs: Vec<Vec<LocId>>,
    /// Open requests by handle, oldest first: several may share one handle (Open MPI hands
    /// out one static, already completed request for every send it completed inline).
    reqs: HashMap<u64, Reqs>,
    next_req: u64,
}

#[derive(Clone, Copy)]
struct Req {
    id: u64,
    recv: bool,
    comm: CommId,
}

/// The open requests of one handle: the oldest inline, so that the common case (one
/// request a handle) allocates nothing.
struct Reqs {
    first: Req,
    more: VecDeque<Req>,
}

impl State {
    fn new() -> State {
        // Room for many open requests: a table that requests keep entering and leaving
        // then seldom needs to be rebuilt.
        let reqs = HashMap::with_capacity_and_hasher(1024, Default::default());
        State { reqs, ..State::default() }
    }

    fn open(&mut self, handle: u64, req: Req) {
        match self.reqs.get_mut(&handle) {
            Some(q) => q.more.push_back(req),
            None => {
                self.reqs.insert(handle, Reqs { first: req, more: VecDeque::new() });
            }
        }
    }

    /// The oldest open request of `handle`, which completed.
    fn complete(&mut self, handle: u64) -> Option<Req> {
        let q = self.reqs.get_mut(&handle)?;
        match q.more.pop_front() {
            Some(next) => Some(std::mem::replace(&mut q.first, next)),
            None => self.reqs.remove(&handle).map(|q| q.first),
        }
    }
}

/// The state, behind a mutex only while several threads may call MPI at once: before
/// MPI_Init has said otherwise, and under MPI_THREAD_MULTIPLE. At the other thread levels
/// MPI's own rules serialize the wrappers (one thread calls MPI, or one at a time), and the
/// wrappers skip the lock.
struct Guarded {
    lock: Mutex<()>,
    multiple: AtomicBool,
    st: UnsafeCell<Option<State>>,
}

// SAFETY: `st` is only touched in `with_state`, under the lock or MPI's serialization.
unsafe impl Sync for Guarded {}

static STATE: Guarded =
    Guarded { lock: Mutex::new(()), multiple: AtomicBool::new(true), st: UnsafeCell::new(None) };

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let _g =
        STATE.multiple.load(Ordering::Acquire).then(|| STATE.lock.lock().unwrap_or_else(|e| e.into_inner()));
    // SAFETY: see Guarded; `f` does not call MPI or come back here.
    let st = unsafe { &mut *STATE.st.get() };
    f(st.get_or_insert_with(State::new))
}

impl State {
    /// The location of rank `rank` of communicator `comm`.
    fn loc(&self, comm: CommId, rank: c_int) -> Option<LocId> {
        self.locs.get(comm as usize)?.get(usize::try_from(rank).ok()?).copied()
    }
}

/// MPI_Init is done: this process is world rank `rank` of `size`; `hosts` holds every
/// rank's machine name, `stride` bytes each.
#[no_mangle]
pub extern "C" fn spoor_rs_world(rank: c_int, size: c_int, hosts: *const c_char, stride: c_int) {
    let Some(rec) = recorder() else { return };
    let (rank, size, stride) = (rank.max(0) as u32, size.max(1) as usize, stride.max(1) as usize);
    let host = |k: usize| {
        // SAFETY: the shim passes `size` NUL-terminated names of `stride` bytes each.
        unsafe { CStr::from_ptr(hosts.add(k * stride)) }.to_string_lossy().into_owned()
    };
    rec.set_process(&format!("rank {rank}"), rank);
    let world_loc = rec.with_defs(|d| {
        let machine_of = |d: &mut spoor_model::Definitions, name: &str| {
            let id = d.strings.lookup(name);
            match d.machines.iter().position(|m| Some(m.name) == id) {
                Some(m) => m as u32,
                None => d.add_machine(name),
            }
        };
        let app = d.processes[0].app;
        let mut locs = Vec::with_capacity(size);
        for k in 0..size {
            let m = machine_of(d, &host(k));
            if k as u32 == rank {
                d.processes[0].machine = m;
                locs.push(0);
            } else {
                let name = format!("rank {k}");
                let p = d.add_process(&name, app, m, k as u32);
                locs.push(d.add_location(&name, p, 0));
            }
        }
        locs
    });
    with_state(|st| st.world_loc = world_loc);
    let app = rec.with_defs(|d| d.strings.name(d.apps[0].name).into_owned());
    let name = format!("{}.rank{rank:05}.spoor", spoor_record::file_safe(&app));
    if let Err(e) = rec.rename_file(&name) {
        eprintln!("spoor-record: cannot rename {} to {name}: {e}", rec.path().display());
    }
}

/// After MPI_Init: the handlers again over MPI's, and whether MPI calls may come from
/// several threads at once (MPI_THREAD_MULTIPLE).
#[no_mangle]
pub extern "C" fn spoor_rs_after_init(thread_multiple: c_int) {
    spoor_record::signals::reinstall();
    STATE.multiple.store(thread_multiple != 0, Ordering::Release);
}

#[no_mangle]
pub extern "C" fn spoor_rs_comm_known(comm: u64) -> i64 {
    with_state(|st| st.comms.get(&comm).map_or(-1, |&c| c as i64))
}

/// Defines a communicator whose rank `i` is world rank `world_ranks[i]`; `name` NULL for
/// one met without its creation (named by its members).
#[no_mangle]
pub extern "C" fn spoor_rs_comm_add(comm: u64, name: *const c_char, size: c_int, world_ranks: *const c_int) {
    let Some(rec) = recorder() else { return };
    let n = size.max(0) as usize;
    // SAFETY: the shim passes `size` ranks.
    let ranks: Vec<u32> =
        unsafe { std::slice::from_raw_parts(world_ranks, n) }.iter().map(|&r| r.max(0) as u32).collect();
    let name = if name.is_null() {
        // FNV-1a of the members: the same name on every member.
        let h =
            ranks.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &r| (h ^ r as u64).wrapping_mul(0x100_0000_01b3));
        format!("comm of {n} ranks {h:016x}")
    } else {
        // SAFETY: a NUL-terminated name from the shim.
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    };
    with_state(|st| {
        let Some(locs) =
            ranks.iter().map(|&w| st.world_loc.get(w as usize).copied()).collect::<Option<Vec<_>>>()
        else {
            return;
        };
        let id = rec.comm(&name, &locs);
        st.comms.insert(comm, id);
        if st.last_comm.is_some_and(|(h, _)| h == comm) {
            st.last_comm = Some((comm, id));
        }
        if st.locs.len() <= id as usize {
            st.locs.resize(id as usize + 1, Vec::new());
        }
        st.locs[id as usize] = locs;
    });
}

#[no_mangle]
pub extern "C" fn spoor_rs_comm_forget(comm: u64) {
    with_state(|st| {
        if st.last_comm.is_some_and(|(h, _)| h == comm) {
            st.last_comm = None;
        }
        st.comms.remove(&comm)
    });
}

#[inline]
fn comm_id(st: &mut State, comm: u64) -> Option<CommId> {
    match st.last_comm {
        Some((h, id)) if h == comm => Some(id),
        _ => {
            let id = st.comms.get(&comm).copied()?;
            st.last_comm = Some((comm, id));
            Some(id)
        }
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_send(comm: u64, dest: c_int, tag: c_int, bytes: u64) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let c = comm_id(st, comm)?;
        let to = st.loc(c, dest)?;
        Some(Kind::Send { to, comm: c, tag: tag.max(0) as u32, bytes })
    });
    if let Some(k) = ev {
        rec.record(k);
    }
}

fn opt_tag(tag: c_int) -> Option<u32> {
    (tag >= 0).then_some(tag as u32)
}

#[no_mangle]
pub extern "C" fn spoor_rs_recv_begin(comm: u64, src: c_int, tag: c_int) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let c = comm_id(st, comm)?;
        let from = match src {
            -1 => None,
            s if s < 0 => return None, // MPI_PROC_NULL
            s => Some(st.loc(c, s)?),
        };
        Some(Kind::RecvBegin { from, comm: c, tag: opt_tag(tag) })
    });
    if let Some(k) = ev {
        rec.record(k);
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_recv_end(comm: u64, src: c_int, tag: c_int, bytes: u64) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let c = comm_id(st, comm)?;
        let from = st.loc(c, src)?;
        Some(Kind::RecvEnd { from, comm: c, tag: tag.max(0) as u32, bytes })
    });
    if let Some(k) = ev {
        rec.record(k);
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_isend(comm: u64, dest: c_int, tag: c_int, bytes: u64, request: u64) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let c = comm_id(st, comm)?;
        let to = st.loc(c, dest)?;
        st.next_req += 1;
        let id = st.next_req;
        st.open(request, Req { id, recv: false, comm: c });
        Some(Kind::Isend { to, comm: c, tag: tag.max(0) as u32, bytes, request: id })
    });
    if let Some(k) = ev {
        rec.record(k);
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_irecv(comm: u64, src: c_int, tag: c_int, request: u64) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let c = comm_id(st, comm)?;
        let from = match src {
            -1 => None,
            s if s < 0 => return None,
            s => Some(st.loc(c, s)?),
        };
        st.next_req += 1;
        let id = st.next_req;
        st.open(request, Req { id, recv: true, comm: c });
        Some(Kind::IrecvRequest { from, comm: c, tag: opt_tag(tag), request: id })
    });
    if let Some(k) = ev {
        rec.record(k);
    }
}

extern "C" {
    /// The byte count of a completed receive's MPI_Status (c/mpi_shim.c).
    fn spoor_c_status_bytes(status: *const std::ffi::c_void) -> u64;
}

/// The request that had handle `request` completed with this status (source, tag, and
/// the MPI_Status itself for the byte count of a receive).
#[no_mangle]
pub extern "C" fn spoor_rs_complete(request: u64, src: c_int, tag: c_int, status: *const std::ffi::c_void) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let r = st.complete(request)?;
        if !r.recv {
            return Some(Kind::IsendComplete { request: r.id });
        }
        let from = st.loc(r.comm, src)?; // none for MPI_PROC_NULL or a cancelled receive
        Some(Kind::IrecvComplete { request: r.id, from, comm: r.comm, tag: tag.max(0) as u32, bytes: 0 })
    });
    if let Some(mut k) = ev {
        if let Kind::IrecvComplete { bytes, .. } = &mut k {
            // SAFETY: the shim passes the status of this completion.
            *bytes = unsafe { spoor_c_status_bytes(status) };
        }
        rec.record(k);
    }
}

fn op_of(op: c_int) -> CollOp {
    CollOp::from_code(op.clamp(0, 255) as u8).unwrap_or(CollOp::Other)
}

#[no_mangle]
pub extern "C" fn spoor_rs_coll_begin(op: c_int, comm: u64) {
    let Some(rec) = recorder() else { return };
    if let Some(c) = with_state(|st| comm_id(st, comm)) {
        rec.record(Kind::CollBegin { op: op_of(op), comm: c });
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_coll_end(op: c_int, comm: u64, root: c_int, sent: u64, received: u64) {
    let Some(rec) = recorder() else { return };
    let ev = with_state(|st| {
        let c = comm_id(st, comm)?;
        let root = if root >= 0 { st.loc(c, root) } else { None };
        Some(Kind::CollEnd { op: op_of(op), comm: c, root, sent, received })
    });
    if let Some(k) = ev {
        rec.record(k);
    }
}

/// reference time = local time + offset (± error), against world rank `reference`.
#[no_mangle]
pub extern "C" fn spoor_rs_clock_offset(reference: c_int, offset: i64, error: u64) {
    let Some(rec) = recorder() else { return };
    if let Some(r) = with_state(|st| st.world_loc.get(reference.max(0) as usize).copied()) {
        rec.record(Kind::ClockOffset { reference: r, offset, error });
    }
}
