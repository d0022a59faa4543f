//! The workloads, each a loop over steps that keeps O(processes) state.

use crate::sim::{Ctx, Draw, P};
use spoor_model::CollOp;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

/// Tag of ring and pipeline messages.
const TAG_DATA: u32 = 0;
/// master-worker tags.
const TAG_TASK: u32 = 1;
const TAG_RESULT: u32 = 2;
const TAG_STOP: u32 = 3;
/// Bytes of the stencil's allreduce (one double).
const ALLREDUCE_BYTES: u64 = 8;

/// spa: rank 0 serves requests from ranks 1.. in arrival order.
pub(crate) fn spa(ctx: &mut Ctx) -> io::Result<()> {
    let spec = ctx.spec;
    let (p, steps, bytes) = (ctx.procs(), spec.steps, spec.bytes);
    let class = |c: u32| if c == 1 { 1 } else { 2 };
    let serve_mean = spec.compute_ns / 2;
    // Requests each client has had answered.
    let mut done = vec![0u64; p as usize];
    // Requests on their way or waiting at the server: (arrival, client).
    let mut pending = BinaryHeap::new();

    let request = |ctx: &mut Ctx, c: u32, k: u64, pending: &mut BinaryHeap<Reverse<(i64, u32)>>| {
        let d = ctx.draw(spec.compute_ns, Draw::Work, c as u64, k);
        ctx.compute(c, P::Work, d)?;
        let arrival = ctx.send(c, 0, class(c), bytes)?;
        ctx.recv_post(c, Some(0), Some(class(c)))?;
        pending.push(Reverse((arrival, c)));
        io::Result::Ok(())
    };

    for c in 1..p {
        if steps > 0 {
            request(ctx, c, 0, &mut pending)?;
        } else {
            ctx.finish(c)?;
        }
    }
    // Every unfinished client has exactly one request pending, so the earliest
    // arrival among them is the message an any-source receive gets.
    while let Some(Reverse((arrival, c))) = pending.pop() {
        let k = done[c as usize];
        let tag = class(c);
        ctx.recv_post(0, None, None)?;
        ctx.recv_complete(0, c, tag, bytes, arrival)?;
        let d = ctx.draw(serve_mean, Draw::Serve, c as u64, k);
        ctx.compute(0, if tag == 1 { P::Work1 } else { P::Work2 }, d)?;
        let reply = ctx.send(0, c, tag, bytes)?;
        ctx.recv_complete(c, 0, tag, bytes, reply)?;
        done[c as usize] += 1;
        if done[c as usize] < steps {
            request(ctx, c, k + 1, &mut pending)?;
        } else {
            ctx.finish(c)?;
        }
    }
    ctx.finish(0)
}

/// ring: all ranks compute, send to r+1, then receive from r-1.
pub(crate) fn ring(ctx: &mut Ctx) -> io::Result<()> {
    let spec = ctx.spec;
    let (p, bytes) = (ctx.procs(), spec.bytes);
    let mut arrival = vec![0i64; p as usize];
    for step in 0..spec.steps {
        for r in 0..p {
            let d = ctx.draw(spec.compute_ns, Draw::Work, r as u64, step);
            ctx.compute(r, P::Work, d)?;
            arrival[r as usize] = ctx.send(r, (r + 1) % p, TAG_DATA, bytes)?;
        }
        for r in 0..p {
            let from = (r + p - 1) % p;
            ctx.recv(r, from, TAG_DATA, bytes, arrival[from as usize])?;
        }
    }
    for r in 0..p {
        ctx.finish(r)?;
    }
    Ok(())
}

/// Directions of the stencil's neighbours: north, south, west, east.
const DIRS: usize = 4;
const OPPOSITE: [usize; DIRS] = [1, 0, 3, 2];

/// The neighbours of `r` on a `rows` x `cols` grid, by direction.
fn neighbours(r: u32, rows: u32, cols: u32) -> [Option<u32>; DIRS] {
    let (row, col) = (r / cols, r % cols);
    [
        (row > 0).then(|| r - cols),
        (row + 1 < rows).then(|| r + cols),
        (col > 0).then(|| r - 1),
        (col + 1 < cols).then(|| r + 1),
    ]
}

/// stencil: compute, halo exchange with non-blocking calls and a wait, allreduce.
/// A message sent in direction d carries tag d.
pub(crate) fn stencil(ctx: &mut Ctx) -> io::Result<()> {
    let spec = ctx.spec;
    let (p, bytes) = (ctx.procs(), spec.bytes);
    let (rows, cols) = spec.grid();
    let n = p as usize;
    // Per rank and direction: receive and send requests, arrival of the message sent that way.
    let mut rreq = vec![[0u64; DIRS]; n];
    let mut sreq = vec![[0u64; DIRS]; n];
    let mut arrival = vec![[0i64; DIRS]; n];
    let mut begin = vec![0i64; n];
    for step in 0..spec.steps {
        for r in 0..p {
            let d = ctx.draw(spec.compute_ns, Draw::Work, r as u64, step);
            ctx.compute(r, P::Work, d)?;
            let nbs = neighbours(r, rows, cols);
            for (dir, nb) in nbs.iter().enumerate() {
                if let Some(nb) = *nb {
                    rreq[r as usize][dir] = ctx.irecv(r, nb, OPPOSITE[dir] as u32)?;
                }
            }
            for (dir, nb) in nbs.iter().enumerate() {
                if let Some(nb) = *nb {
                    let (req, arr) = ctx.isend(r, nb, dir as u32, bytes)?;
                    sreq[r as usize][dir] = req;
                    arrival[r as usize][dir] = arr;
                }
            }
            ctx.wait_enter(r)?;
        }
        for r in 0..p {
            let nbs = neighbours(r, rows, cols);
            for (nb, &req) in nbs.iter().zip(&sreq[r as usize]) {
                if nb.is_some() {
                    ctx.isend_complete(r, req)?;
                }
            }
            // Receives complete in the order their messages arrive.
            let mut recvs: [(i64, usize, u32); DIRS] = [(0, 0, 0); DIRS];
            let mut k = 0;
            for (dir, nb) in nbs.iter().enumerate() {
                if let Some(nb) = *nb {
                    recvs[k] = (arrival[nb as usize][OPPOSITE[dir]], dir, nb);
                    k += 1;
                }
            }
            recvs[..k].sort_unstable();
            for &(arr, dir, nb) in &recvs[..k] {
                ctx.irecv_complete(r, rreq[r as usize][dir], nb, OPPOSITE[dir] as u32, bytes, arr)?;
            }
            ctx.wait_leave(r)?;
            begin[r as usize] = ctx.coll_enter(r, CollOp::Allreduce)?;
        }
        let latest = begin.iter().copied().max().unwrap_or(0);
        let end = ctx.coll_end_time(CollOp::Allreduce, latest, ALLREDUCE_BYTES);
        for r in 0..p {
            ctx.coll_leave(r, CollOp::Allreduce, end, ALLREDUCE_BYTES, ALLREDUCE_BYTES)?;
        }
    }
    for r in 0..p {
        ctx.finish(r)?;
    }
    Ok(())
}

/// master-worker: rank 0 deals `steps` tasks per worker to ranks 1.., first come first served.
pub(crate) fn master_worker(ctx: &mut Ctx) -> io::Result<()> {
    let spec = ctx.spec;
    let (p, bytes) = (ctx.procs(), spec.bytes);
    let workers = (p - 1) as u64;
    let tasks = spec.steps * workers;
    let mut issued = 0u64;
    // Results on their way or waiting at the master: (arrival, worker).
    let mut pending = BinaryHeap::new();

    // The master sends worker `w` its next task, or a stop message; the worker handles it.
    let dispatch =
        |ctx: &mut Ctx, w: u32, issued: &mut u64, pending: &mut BinaryHeap<Reverse<(i64, u32)>>| {
            if *issued < tasks {
                let t = *issued;
                *issued += 1;
                let arrival = ctx.send(0, w, TAG_TASK, bytes)?;
                ctx.recv_complete(w, 0, TAG_TASK, bytes, arrival)?;
                let d = ctx.draw(spec.compute_ns, Draw::Work, 0, t);
                ctx.compute(w, P::Work, d)?;
                let back = ctx.send(w, 0, TAG_RESULT, bytes)?;
                pending.push(Reverse((back, w)));
                ctx.recv_post(w, Some(0), None)?;
            } else {
                let arrival = ctx.send(0, w, TAG_STOP, 0)?;
                ctx.recv_complete(w, 0, TAG_STOP, 0, arrival)?;
                ctx.finish(w)?;
            }
            io::Result::Ok(())
        };

    for w in 1..p {
        ctx.recv_post(w, Some(0), None)?;
    }
    for w in 1..p {
        dispatch(ctx, w, &mut issued, &mut pending)?;
    }
    let mut received = 0u64;
    while let Some(Reverse((arrival, w))) = pending.pop() {
        ctx.recv_post(0, None, Some(TAG_RESULT))?;
        ctx.recv_complete(0, w, TAG_RESULT, bytes, arrival)?;
        let d = ctx.draw(spec.compute_ns / 10, Draw::Assign, 0, received);
        received += 1;
        ctx.compute(0, P::Work1, d)?;
        dispatch(ctx, w, &mut issued, &mut pending)?;
    }
    ctx.finish(0)
}

/// pipeline: each item flows from rank 0 to the last rank.
pub(crate) fn pipeline(ctx: &mut Ctx) -> io::Result<()> {
    let spec = ctx.spec;
    let (p, bytes) = (ctx.procs(), spec.bytes);
    for item in 0..spec.steps {
        let mut arrival = 0;
        for r in 0..p {
            if r > 0 {
                ctx.recv(r, r - 1, TAG_DATA, bytes, arrival)?;
            }
            let d = ctx.draw(spec.compute_ns, Draw::Work, r as u64, item);
            ctx.compute(r, P::Work, d)?;
            if r + 1 < p {
                arrival = ctx.send(r, r + 1, TAG_DATA, bytes)?;
            }
        }
    }
    for r in 0..p {
        ctx.finish(r)?;
    }
    Ok(())
}

/// Tag of the serialization point's token.
const TAG_TOKEN: u32 = 4;

/// barrier: compute, then a barrier, every step (with the serialization point and the
/// hot lock, when injected, in between).
pub(crate) fn barrier(ctx: &mut Ctx) -> io::Result<()> {
    let spec = ctx.spec;
    let p = ctx.procs();
    let injected = spec.serial_ns > 0 || spec.hot_lock_ns > 0;
    for step in 0..spec.steps {
        let mut latest = 0;
        for r in 0..p {
            let d = ctx.draw(spec.compute_ns, Draw::Work, r as u64, step);
            ctx.compute(r, P::Work, d)?;
            if !injected {
                latest = latest.max(ctx.coll_enter(r, CollOp::Barrier)?);
            }
        }
        if injected {
            if spec.serial_ns > 0 {
                ctx.token_round(TAG_TOKEN, spec.serial_ns as i64)?;
            }
            if spec.hot_lock_ns > 0 {
                ctx.lock_round(1, spec.hot_lock_ns as i64)?;
            }
            for r in 0..p {
                latest = latest.max(ctx.coll_enter(r, CollOp::Barrier)?);
            }
        }
        let end = ctx.coll_end_time(CollOp::Barrier, latest, 0);
        for r in 0..p {
            ctx.coll_leave(r, CollOp::Barrier, end, 0, 0)?;
        }
    }
    for r in 0..p {
        ctx.finish(r)?;
    }
    Ok(())
}
