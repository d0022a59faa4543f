//! Server loops: a location whose blocking receives for any source each take one request
//! and answer its sender before the next (a master and its workers, a server and its
//! clients). A prediction that keeps the recorded matching serves the requests in the
//! order they came when the trace was recorded; under another placement or network they
//! may come in another order, and the server would take them as they come. With
//! [`Wildcards::Arrival`] the simulation does that: each request's service (from its
//! receive to the reply) moves with the request (formats/placement.md, "Requests from
//! any source").

use rustc_hash::FxHashMap;
use spoor_graph::pag::{ArcKind, Pag, NONE};

/// Which message a blocking receive for any source takes in a prediction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wildcards {
    /// The one it took when the trace was recorded.
    #[default]
    Recorded,
    /// In a server loop, the first request to arrive (its service moving with it);
    /// other receives for any source keep their recorded match.
    Arrival,
}

impl std::str::FromStr for Wildcards {
    type Err = String;

    fn from_str(s: &str) -> Result<Wildcards, String> {
        match s {
            "recorded" => Ok(Wildcards::Recorded),
            "arrival" => Ok(Wildcards::Arrival),
            _ => Err(format!("`{s}`: expected recorded or arrival")),
        }
    }
}

/// One request of a server loop: where its service lies among the location's nodes
/// (from the receive's end through the reply), and the message that brought it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    /// Position of the receive's end among the location's nodes.
    pub first: u32,
    /// Position of the reply (the last node of the service).
    pub last: u32,
    /// The process that sent it.
    pub source: u32,
    /// The message arc and its origin (the send); `NONE` when the request was sent
    /// before the stretch predicted (it is there from its start).
    pub arc: u32,
    pub origin: u32,
}

/// A server loop: its location, the location's nodes in order, and its requests in
/// recorded order.
#[derive(Debug)]
pub(crate) struct ServerLoop {
    pub loc: u32,
    pub nodes: Vec<u32>,
    pub requests: Vec<Request>,
}

/// The server loops of `pag`: every location whose blocking receives for any source
/// each take one message and answer its sender (only messages to that process leave
/// the service, and nothing else comes in) before the next such receive.
pub(crate) fn server_loops(pag: &Pag) -> Vec<ServerLoop> {
    let mut by_loc: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for &x in &pag.wildcard_receives {
        if let Some(&l) = pag.loc.get(x as usize).filter(|&&l| l != NONE) {
            by_loc.entry(l).or_default().push(x);
        }
    }
    if by_loc.is_empty() {
        return Vec::new();
    }
    let mut nodes: FxHashMap<u32, Vec<u32>> = by_loc.keys().map(|&l| (l, Vec::new())).collect();
    for (i, l) in pag.loc.iter().enumerate() {
        if let Some(v) = nodes.get_mut(l) {
            v.push(i as u32);
        }
    }
    // The remote arcs out of each node of those locations.
    let mut outs: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for a in 0..pag.arcs() {
        let from = pag.arc_from[a];
        if by_loc.contains_key(&pag.loc[from as usize]) {
            outs.entry(from).or_default().push(a as u32);
        }
    }
    let mut loops: Vec<ServerLoop> = by_loc
        .into_iter()
        .filter_map(|(loc, receives)| {
            let nodes = nodes.remove(&loc)?;
            let requests = requests_of(pag, &nodes, &receives, &outs)?;
            Some(ServerLoop { loc, nodes, requests })
        })
        .collect();
    loops.sort_by_key(|s| s.loc);
    loops
}

/// The requests of one location's receives for any source, `None` unless each is
/// served and answered before the next.
fn requests_of(
    pag: &Pag,
    nodes: &[u32],
    receives: &[u32],
    outs: &FxHashMap<u32, Vec<u32>>,
) -> Option<Vec<Request>> {
    let pos = |x: u32| nodes.binary_search(&x).ok();
    let mut requests = Vec::with_capacity(receives.len());
    for (k, &r) in receives.iter().enumerate() {
        let into = pag.arcs_into(r);
        if into.len() > 1
            || into.clone().any(|a| pag.arc_kind[a] != ArcKind::Message)
            || outs.contains_key(&r)
        {
            return None;
        }
        let first = pos(r)?;
        let limit = match receives.get(k + 1) {
            Some(&next) => pos(next)?,
            None => nodes.len(),
        };
        let mut reply = None;
        for (p, &x) in nodes.iter().enumerate().take(limit).skip(first + 1) {
            if !pag.arcs_into(x).is_empty() {
                return None;
            }
            if let Some(out) = outs.get(&x) {
                reply = Some((p, out));
                break;
            }
        }
        let (last, out) = reply?;
        let process_to = |a: u32| {
            (pag.arc_kind[a as usize] == ArcKind::Message)
                .then(|| pag.process_of(pag.loc[pag.arc_to[a as usize] as usize]))
        };
        // The request's sender; of a request sent before the stretch, whom it answers.
        let (arc, origin, source) = match into.clone().next() {
            Some(a) => (a as u32, pag.arc_from[a], pag.process_of(pag.loc[pag.arc_from[a] as usize])),
            None => (NONE, NONE, process_to(out[0])?),
        };
        if !out.iter().all(|&a| process_to(a) == Some(source)) {
            return None;
        }
        requests.push(Request { first: first as u32, last: last as u32, source, arc, origin });
    }
    Some(requests)
}

/// What `Wildcards::Arrival` does with `pag`'s receives for any source, for a note:
/// `None` when it has none.
pub fn arrival_note(pag: &Pag) -> Option<String> {
    let all = pag.wildcard_receives.len();
    if all == 0 {
        return None;
    }
    let loops = server_loops(pag);
    let served: usize = loops.iter().map(|s| s.requests.len()).sum();
    let names: Vec<String> = loops
        .iter()
        .map(|s| format!("{} ({} requests)", pag.defs.location_name(s.loc), s.requests.len()))
        .collect();
    let kept = all - served;
    Some(match loops.len() {
        0 => format!(
            "--wildcards arrival: no server loop (each receive for any source served and answered \
             before the next): the {all} receive(s) from any source keep their recorded sends"
        ),
        n => format!(
            "--wildcards arrival: {n} server loop(s) take their requests as they arrive: {}{}",
            names.join(", "),
            if kept > 0 {
                format!("; {kept} other receive(s) from any source keep their recorded sends")
            } else {
                String::new()
            }
        ),
    })
}
