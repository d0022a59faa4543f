//! Communicator reconstruction. DUMPI records communicators as per-rank
//! handles (small integers, `MPI_COMM_WORLD` = 2, `MPI_COMM_SELF` = 3), so
//! which world ranks a derived communicator holds must be worked out from the
//! calls that create it, across all ranks: the k-th creating call of each
//! member of a communicator is the same collective call. Handled:
//! `MPI_Comm_dup`, `MPI_Comm_split` (color, then key and old rank),
//! `MPI_Comm_create` (members: the ranks that got a communicator, in old-rank
//! order: groups are not tracked, so a reordering group is not seen),
//! `MPI_Cart_create` (no reordering: the first dims-product ranks),
//! `MPI_Cart_sub` (row-major coordinates), `MPI_Graph_create` (the first
//! `nodes` ranks). Intercommunicators, spawn, connect/accept, join and parents
//! stay unknown: messages on them are not translated (see the module docs).

use super::bin::Call;
use super::layout;
use crate::mpi::Warnings;
use spoor_model::{CommId, Definitions, LocId};
use std::collections::{BTreeMap, HashMap};

/// DUMPI's handle for `MPI_COMM_NULL` (and `MPI_REQUEST_NULL`).
pub const COMM_NULL: i64 = 1;
pub const COMM_WORLD: u16 = 2;
pub const COMM_SELF: u16 = 3;

/// After call `.0`, handle `.1` means communicator `.2` (`None`: unknown).
pub type Binding = (usize, u16, Option<CommId>);

/// The communicators and, per rank, which handle means which communicator when.
pub struct CommTable {
    pub world: CommId,
    pub self_comm: CommId,
    /// Per rank, in call order.
    pub bindings: Vec<Vec<Binding>>,
}

#[derive(Clone, Debug)]
enum How {
    Dup,
    Split { color: i64, key: i64 },
    Create { got: bool },
    Cart { dims: Vec<i64> },
    Sub { remain: Vec<i64> },
    FirstN(i64),
    Unknown,
}

struct Creation {
    call: usize,
    old: Option<u16>,
    new: u16,
    how: How,
}

fn creation(c: &Call, i: usize) -> Option<Creation> {
    let name = layout::layout(c.label)?.0;
    let h = |n: &str| c.int(n).map(|v| v as u16);
    let (old, new, how) = match name {
        "MPI_Comm_dup" => (h("oldcomm"), h("newcomm")?, How::Dup),
        "MPI_Comm_split" => {
            (h("oldcomm"), h("newcomm")?, How::Split { color: c.int("color")?, key: c.int("key")? })
        }
        "MPI_Comm_create" => {
            let new = h("newcomm")?;
            (h("oldcomm"), new, How::Create { got: new as i64 > COMM_NULL })
        }
        "MPI_Cart_create" => (h("oldcomm"), h("newcomm")?, How::Cart { dims: c.ints("dims").to_vec() }),
        "MPI_Cart_sub" => (h("oldcomm"), h("newcomm")?, How::Sub { remain: c.ints("remain_dims").to_vec() }),
        "MPI_Graph_create" => (h("oldcomm"), h("newcomm")?, How::FirstN(c.int("nodes")?)),
        "MPI_Intercomm_create" => (h("localcomm"), h("newcomm")?, How::Unknown),
        "MPI_Intercomm_merge" => (h("comm"), h("newcomm")?, How::Unknown),
        "MPI_Comm_accept" | "MPI_Comm_connect" | "MPI_Comm_spawn" | "MPI_Comm_spawn_multiple" => {
            (h("oldcomm"), h("newcomm")?, How::Unknown)
        }
        // Not collective: the handle just becomes unknown.
        "MPI_Comm_get_parent" => (None, h("parent")?, How::Unknown),
        "MPI_Comm_join" => (None, h("comm")?, How::Unknown),
        _ => return None,
    };
    Some(Creation { call: i, old, new, how })
}

struct Participant {
    rank: usize,
    call: usize,
    new: u16,
    how: How,
}

/// Works out the communicators of `ranks` (each rank's calls), adding them to
/// `defs`. `main_loc[r]` is rank r's main-thread location.
pub(crate) fn reconstruct(
    defs: &mut Definitions,
    ranks: &[&[Call]],
    main_loc: &[LocId],
    warnings: &mut Warnings,
) -> CommTable {
    let world = defs.add_comm("MPI_COMM_WORLD", main_loc.to_vec());
    let self_comm = defs.add_comm("MPI_COMM_SELF", Vec::new());
    let n = ranks.len();
    let creations: Vec<Vec<Creation>> = ranks
        .iter()
        .map(|calls| calls.iter().enumerate().filter_map(|(i, c)| creation(c, i)).collect())
        .collect();
    let mut maps: Vec<HashMap<u16, CommId>> =
        (0..n).map(|_| HashMap::from([(COMM_WORLD, world), (COMM_SELF, self_comm)])).collect();
    let mut bindings: Vec<Vec<Binding>> = vec![Vec::new(); n];
    let mut cursor = vec![0usize; n];
    let mut blocked = vec![false; n];
    let mut seq: Vec<HashMap<CommId, u64>> = vec![HashMap::new(); n];
    let mut pending: BTreeMap<(CommId, u64), Vec<Participant>> = BTreeMap::new();
    let mut cart_dims: HashMap<CommId, Vec<i64>> = HashMap::new();

    fn bind(
        maps: &mut [HashMap<u16, CommId>],
        bindings: &mut [Vec<Binding>],
        r: usize,
        call: usize,
        h: u16,
        c: Option<CommId>,
    ) {
        match c {
            Some(c) => maps[r].insert(h, c),
            None => maps[r].remove(&h),
        };
        bindings[r].push((call, h, c));
    }

    loop {
        let mut progress = false;
        for r in 0..n {
            while !blocked[r] && cursor[r] < creations[r].len() {
                let cr = &creations[r][cursor[r]];
                cursor[r] += 1;
                progress = true;
                let Some(old) = cr.old else {
                    bind(&mut maps, &mut bindings, r, cr.call, cr.new, None);
                    continue;
                };
                let Some(g) = maps[r].get(&old).copied() else {
                    warnings.add("communicators created from unknown ones are unknown: messages on them are not translated");
                    bind(&mut maps, &mut bindings, r, cr.call, cr.new, None);
                    continue;
                };
                let k = {
                    let s = seq[r].entry(g).or_insert(0);
                    *s += 1;
                    *s - 1
                };
                if matches!(cr.how, How::Unknown) {
                    warnings.add(
                        "intercommunicators and dynamic processes are not reconstructed: messages on them are not translated",
                    );
                    bind(&mut maps, &mut bindings, r, cr.call, cr.new, None);
                    continue;
                }
                let p = Participant { rank: r, call: cr.call, new: cr.new, how: cr.how.clone() };
                let members: Vec<LocId> =
                    if g == self_comm { vec![main_loc[r]] } else { defs.comms[g as usize].members.clone() };
                // MPI_COMM_SELF is one spoor communicator for every rank: key its instances by rank too.
                let key = if g == self_comm { (g, (r as u64) << 32 | k) } else { (g, k) };
                let list = pending.entry(key).or_default();
                list.push(p);
                if list.len() >= members.len() {
                    let parts = pending.remove(&key).unwrap_or_default();
                    resolve(
                        defs,
                        &members,
                        g,
                        &parts,
                        main_loc,
                        &mut cart_dims,
                        warnings,
                        &mut |r, call, h, c| bind(&mut maps, &mut bindings, r, call, h, c),
                    );
                    for p in &parts {
                        blocked[p.rank] = false;
                    }
                } else {
                    blocked[r] = true;
                }
            }
        }
        if progress {
            continue;
        }
        // Nothing moves: some members never made the matching call (missing or truncated ranks).
        let Some((_, parts)) = pending.pop_first() else { break };
        warnings
            .add("a communicator-creating call was not made by all members: the new communicator is unknown");
        for p in parts {
            bind(&mut maps, &mut bindings, p.rank, p.call, p.new, None);
            blocked[p.rank] = false;
        }
    }
    for b in &mut bindings {
        b.sort_by_key(|x| x.0);
    }
    CommTable { world, self_comm, bindings }
}

type Keyed<'p> = Vec<((i64, usize), &'p Participant)>;

#[allow(clippy::too_many_arguments)]
fn resolve(
    defs: &mut Definitions,
    old_members: &[LocId],
    g: CommId,
    parts: &[Participant],
    main_loc: &[LocId],
    cart_dims: &mut HashMap<CommId, Vec<i64>>,
    warnings: &mut Warnings,
    bind: &mut dyn FnMut(usize, usize, u16, Option<CommId>),
) {
    let pos: HashMap<LocId, usize> = old_members.iter().enumerate().map(|(i, &l)| (l, i)).collect();
    let q = |p: &Participant| pos.get(&main_loc[p.rank]).copied().unwrap_or(usize::MAX);
    let kind = std::mem::discriminant(&parts[0].how);
    if parts.iter().any(|p| std::mem::discriminant(&p.how) != kind) {
        warnings.add(
            "the members of a communicator made different creating calls: the new communicators are unknown",
        );
        for p in parts {
            bind(p.rank, p.call, p.new, None);
        }
        return;
    }
    let mut new_comm = |defs: &mut Definitions, mut ps: Keyed| -> Option<CommId> {
        if ps.is_empty() {
            return None;
        }
        ps.sort_by_key(|(k, _)| *k);
        let members = ps.iter().map(|(_, p)| main_loc[p.rank]).collect();
        let name = format!("comm {}", defs.comms.len());
        let c = defs.add_comm(&name, members);
        for (_, p) in ps {
            bind(p.rank, p.call, p.new, Some(c));
        }
        Some(c)
    };
    match &parts[0].how {
        How::Dup => {
            let c = new_comm(defs, parts.iter().map(|p| ((0, q(p)), p)).collect());
            if let (Some(c), Some(d)) = (c, cart_dims.get(&g).cloned()) {
                cart_dims.insert(c, d);
            }
        }
        How::Split { .. } => {
            let mut by_color: BTreeMap<i64, Keyed> = BTreeMap::new();
            let mut undefined = Vec::new();
            for p in parts {
                if let How::Split { color, key } = p.how {
                    if color < 0 {
                        undefined.push(p);
                    } else {
                        by_color.entry(color).or_default().push(((key, q(p)), p));
                    }
                }
            }
            for (_, ps) in by_color {
                new_comm(defs, ps);
            }
            for p in undefined {
                bind(p.rank, p.call, p.new, None);
            }
        }
        How::Create { .. } => {
            let got =
                parts.iter().filter(|p| matches!(p.how, How::Create { got: true })).map(|p| ((0, q(p)), p));
            new_comm(defs, got.collect());
            for p in parts.iter().filter(|p| matches!(p.how, How::Create { got: false })) {
                bind(p.rank, p.call, p.new, None);
            }
        }
        How::Cart { dims } => {
            let size = dims.iter().try_fold(1i64, |a, &d| if d > 0 { a.checked_mul(d) } else { None });
            let Some(size) = size else {
                warnings.add("MPI_Cart_create with bad dimensions: the new communicator is unknown");
                for p in parts {
                    bind(p.rank, p.call, p.new, None);
                }
                return;
            };
            let inside = parts.iter().filter(|p| (q(p) as i64) < size).map(|p| ((0, q(p)), p)).collect();
            if let Some(c) = new_comm(defs, inside) {
                cart_dims.insert(c, dims.clone());
            }
            for p in parts.iter().filter(|p| (q(p) as i64) >= size) {
                bind(p.rank, p.call, p.new, None);
            }
        }
        How::Sub { .. } => {
            let Some(dims) = cart_dims.get(&g).cloned() else {
                warnings.add("MPI_Cart_sub of a communicator without known dimensions: the new communicator is unknown");
                for p in parts {
                    bind(p.rank, p.call, p.new, None);
                }
                return;
            };
            let mut groups: BTreeMap<Vec<i64>, Keyed> = BTreeMap::new();
            let mut bad = Vec::new();
            let mut sub_dims = None;
            for p in parts {
                let How::Sub { remain } = &p.how else { continue };
                if remain.len() != dims.len() {
                    bad.push(p);
                    continue;
                }
                let mut rest = q(p) as i64;
                let mut coords = vec![0i64; dims.len()];
                for i in (0..dims.len()).rev() {
                    coords[i] = rest % dims[i];
                    rest /= dims[i];
                }
                let fixed: Vec<i64> =
                    (0..dims.len()).filter(|&i| remain[i] == 0).map(|i| coords[i]).collect();
                sub_dims.get_or_insert_with(|| {
                    (0..dims.len()).filter(|&i| remain[i] != 0).map(|i| dims[i]).collect::<Vec<_>>()
                });
                groups.entry(fixed).or_default().push(((0, q(p)), p));
            }
            for (_, ps) in groups {
                if let (Some(c), Some(d)) = (new_comm(defs, ps), &sub_dims) {
                    cart_dims.insert(c, d.clone());
                }
            }
            for p in bad {
                bind(p.rank, p.call, p.new, None);
            }
        }
        How::FirstN(nodes) => {
            let inside = parts.iter().filter(|p| (q(p) as i64) < *nodes).map(|p| ((0, q(p)), p)).collect();
            new_comm(defs, inside);
            for p in parts.iter().filter(|p| (q(p) as i64) >= *nodes) {
                bind(p.rank, p.call, p.new, None);
            }
        }
        How::Unknown => {
            for p in parts {
                bind(p.rank, p.call, p.new, None);
            }
        }
    }
}
