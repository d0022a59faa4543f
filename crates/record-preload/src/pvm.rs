//! The Rust side of the PVM wrappers (c/pvm_shim.c): task ids as processes, messages on
//! one communicator, barriers on their group, and the spawn arc of a spawned task.
//!
//! Every task is process `task tTID` (TID in hex, as PVM prints it) with rank TID, so that
//! the traces of all tasks, each of which defines the tasks it names, are unified by
//! spoor-merge (application, name and rank). A task spawned while its parent was recorded
//! starts its trace with a `process_begin` whose parent is the spawning task (the spawn
//! arc; `SPOOR_RECORD_PVM_PARENT`, passed on by the daemon through PVM_EXPORT).

use crate::recorder;
use rustc_hash::FxHashMap as HashMap;
use spoor_model::{CollOp, CommId, Definitions, Kind, LocId, PVM_GROUP_PREFIX};
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// The communicator of PVM's point-to-point messages: every task may send to every task,
/// and the members are not known in advance, so it lists none.
pub const P2P_COMM: &str = "pvm";

#[derive(Default)]
struct State {
    /// Task id -> location (this task's is 0 once enrolled).
    locs: HashMap<c_int, LocId>,
    /// Tasks whose messages are not recorded (the group server).
    ignored: Vec<c_int>,
    /// The task that spawned this one.
    parent: Option<c_int>,
    p2p: Option<CommId>,
    /// The communicator of the barrier in progress.
    barrier: Option<CommId>,
    /// The id of the receive posted by a pvm_trecv with a time limit.
    posted: Option<u64>,
    next_req: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(State::default))
}

/// The process name of task `tid`.
pub fn task_name(tid: u32) -> String {
    format!("task t{tid:x}")
}

/// The spawning task's id, when this process is a task the PVM daemon started for a
/// recorded parent: `SPOOR_RECORD_PVM_PARENT` is set and `PVMEPID` (which the daemon sets
/// to the pid it started) is this process, not a program the task ran in turn.
pub fn spawned_by() -> Option<u32> {
    let parent = std::env::var("SPOOR_RECORD_PVM_PARENT").ok()?;
    let parent = u32::from_str_radix(parent.trim(), 16).ok().filter(|&t| t > 0 && t <= i32::MAX as u32)?;
    let epid: u32 = std::env::var("PVMEPID").ok()?.trim().parse().ok()?;
    (epid == std::process::id()).then_some(parent)
}

/// Recording started in a spawned task whose parent is location `loc`.
pub fn started_by(parent: u32, loc: LocId) {
    with_state(|st| {
        st.parent = Some(parent as c_int);
        st.locs.insert(parent as c_int, loc);
    });
}

fn machine_id(d: &mut Definitions, host: &str) -> u32 {
    let id = d.strings.lookup(host);
    match d.machines.iter().position(|m| Some(m.name) == id) {
        Some(m) => m as u32,
        None => d.add_machine(host),
    }
}

fn loc_of(st: &State, tid: c_int) -> Option<LocId> {
    st.locs.get(&tid).copied()
}

#[no_mangle]
pub extern "C" fn spoor_rs_pvm_known(tid: c_int) -> c_int {
    with_state(|st| st.locs.contains_key(&tid) || st.ignored.contains(&tid)) as c_int
}

/// Task `tid` is PVM's group server: messages from and to it are the group functions'.
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_ignore(tid: c_int) {
    with_state(|st| st.ignored.push(tid));
}

fn host_str(host: *const c_char) -> Option<String> {
    if host.is_null() {
        return None;
    }
    // SAFETY: the shim passes a NUL-terminated host name.
    let h = unsafe { CStr::from_ptr(host) }.to_string_lossy().into_owned();
    (!h.is_empty()).then_some(h)
}

/// Defines task `tid` (or moves it to `host`, once its host is known).
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_task(tid: c_int, host: *const c_char) {
    let Some(rec) = recorder() else { return };
    if tid <= 0 {
        return;
    }
    let host = host_str(host);
    let loc =
        with_state(|st| loc_of(st, tid)).unwrap_or_else(|| rec.peer(&task_name(tid as u32), tid as u32));
    if let Some(h) = host {
        rec.with_defs(|d| {
            let m = machine_id(d, &h);
            let p = d.locations[loc as usize].process as usize;
            d.processes[p].machine = m;
        });
    }
    with_state(|st| st.locs.insert(tid, loc));
}

/// This process enrolled as task `tid` on `host`: its process is named after it, and so
/// is its trace file (`APP.tTID.spoor`).
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_enrolled(tid: c_int, host: *const c_char) {
    let Some(rec) = recorder() else { return };
    if tid <= 0 {
        return;
    }
    let name = task_name(tid as u32);
    rec.set_process(&name, tid as u32);
    if let Some(h) = host_str(host) {
        rec.with_defs(|d| {
            let m = machine_id(d, &h);
            d.processes[0].machine = m;
        });
    }
    with_state(|st| st.locs.insert(tid, 0));
    let app = rec.with_defs(|d| d.strings.name(d.apps[0].name).into_owned());
    let file = format!("{}.t{tid:x}.spoor", spoor_record::file_safe(&app));
    if let Err(e) = rec.rename_file(&file) {
        eprintln!("spoor-record: cannot rename {} to {file}: {e}", rec.path().display());
    }
}

/// The context the parent answers clock pings in (`SPOOR_RECORD_PVM_CTX`, set by a
/// recorded parent at spawn), or -1: no parent, or one without a handler.
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_parent_ctx() -> c_int {
    if with_state(|st| st.parent).is_none() {
        return -1;
    }
    std::env::var("SPOOR_RECORD_PVM_CTX")
        .ok()
        .and_then(|c| c.trim().parse::<c_int>().ok())
        .filter(|&c| c >= 0)
        .unwrap_or(-1)
}

/// A clock sample against the parent, measured by the shim's ping-pong: parent time =
/// local time + offset (± error, half the shortest round trip).
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_clock_offset(offset: i64, error: u64) {
    let Some(rec) = recorder() else { return };
    let Some(parent) = with_state(|st| st.parent.and_then(|p| loc_of(st, p))) else { return };
    rec.record(Kind::ClockOffset { reference: parent, offset, error });
}

/// The application's name, which the spawned tasks take (a static copy, valid for ever).
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_app() -> *const c_char {
    static APP: OnceLock<CString> = OnceLock::new();
    APP.get_or_init(|| {
        let app = recorder().map(|r| r.with_defs(|d| d.strings.name(d.apps[0].name).into_owned()));
        CString::new(app.unwrap_or_default().replace('\0', "")).unwrap_or_default()
    })
    .as_ptr()
}

fn p2p(st: &mut State) -> Option<CommId> {
    if st.p2p.is_none() {
        st.p2p = Some(recorder()?.comm(P2P_COMM, &[]));
    }
    st.p2p
}

fn opt(v: c_int) -> Option<u32> {
    (v >= 0).then_some(v as u32)
}

/// Records what `f` makes of the state, if anything.
fn record(f: impl FnOnce(&mut State) -> Option<Kind>) {
    let Some(rec) = recorder() else { return };
    if let Some(k) = with_state(f) {
        rec.record(k);
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_pvm_send(tid: c_int, tag: c_int, bytes: u64) {
    record(|st| {
        let to = loc_of(st, tid)?;
        Some(Kind::Send { to, comm: p2p(st)?, tag: opt(tag)?, bytes })
    });
}

/// A wildcard (-1) source or tag is `None`; a source that names no task records nothing.
fn posted_from(st: &State, tid: c_int) -> Option<Option<LocId>> {
    if tid == -1 {
        Some(None)
    } else {
        loc_of(st, tid).map(Some)
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_pvm_recv_begin(tid: c_int, tag: c_int) {
    record(|st| {
        let from = posted_from(st, tid)?;
        Some(Kind::RecvBegin { from, comm: p2p(st)?, tag: opt(tag) })
    });
}

#[no_mangle]
pub extern "C" fn spoor_rs_pvm_recv_end(tid: c_int, tag: c_int, bytes: u64) {
    record(|st| {
        let from = loc_of(st, tid)?;
        Some(Kind::RecvEnd { from, comm: p2p(st)?, tag: opt(tag)?, bytes })
    });
}

#[no_mangle]
pub extern "C" fn spoor_rs_pvm_irecv(tid: c_int, tag: c_int) {
    record(|st| {
        let from = posted_from(st, tid)?;
        st.next_req += 1;
        st.posted = Some(st.next_req);
        Some(Kind::IrecvRequest { from, comm: p2p(st)?, tag: opt(tag), request: st.next_req })
    });
}

#[no_mangle]
pub extern "C" fn spoor_rs_pvm_irecv_complete(tid: c_int, tag: c_int, bytes: u64) {
    record(|st| {
        let request = st.posted.take()?;
        let from = loc_of(st, tid)?;
        Some(Kind::IrecvComplete { request, from, comm: p2p(st)?, tag: opt(tag)?, bytes })
    });
}

fn group_name(group: *const c_char) -> String {
    // SAFETY: the shim passes the program's NUL-terminated group name.
    format!("{PVM_GROUP_PREFIX}{}", unsafe { CStr::from_ptr(group) }.to_string_lossy())
}

fn member_locs(st: &State, size: c_int, tids: *const c_int) -> Option<Vec<LocId>> {
    // SAFETY: the shim passes `size` task ids.
    let tids = unsafe { std::slice::from_raw_parts(tids, size.max(0) as usize) };
    tids.iter().map(|&t| loc_of(st, t)).collect()
}

/// Adds the members a task sees now to its communicator of the group (defined at the
/// group's first barrier). Members join while a task waits at a barrier and may leave as
/// soon as it is released, so a task keeps every member it ever saw, in the order it saw
/// them; spoor-merge joins the tasks' views into one communicator.
fn see_members(group: *const c_char, size: c_int, tids: *const c_int) -> Option<CommId> {
    let rec = recorder()?;
    let name = group_name(group);
    let seen = with_state(|st| member_locs(st, size, tids))?;
    Some(rec.with_defs(|d| {
        let n = d.strings.lookup(&name);
        match d.comms.iter().position(|c| Some(c.name) == n) {
            Some(c) => {
                d.comms[c].add_members(seen);
                c as CommId
            }
            None => d.add_comm(&name, seen),
        }
    }))
}

/// A barrier starts on the group's members as they are now (by instance number).
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_barrier_begin(group: *const c_char, size: c_int, tids: *const c_int) {
    let Some(rec) = recorder() else { return };
    let Some(comm) = see_members(group, size, tids) else { return };
    with_state(|st| st.barrier = Some(comm));
    rec.record(Kind::CollBegin { op: CollOp::Barrier, comm });
}

/// The barrier ends; members that joined the group while this task waited took part too.
#[no_mangle]
pub extern "C" fn spoor_rs_pvm_barrier_end(group: *const c_char, size: c_int, tids: *const c_int) {
    let Some(rec) = recorder() else { return };
    let Some(comm) = with_state(|st| st.barrier.take()) else { return };
    see_members(group, size, tids);
    rec.record(Kind::CollEnd { op: CollOp::Barrier, comm, root: None, sent: 0, received: 0 });
}
