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
    let mut st = Reconstruction {
        self_comm,
        maps: (0..n).map(|_| HashMap::from([(COMM_WORLD, world), (COMM_SELF, self_comm)])).collect(),
        bindings: vec![Vec::new(); n],
        blocked: vec![false; n],
        seq: vec![HashMap::new(); n],
        pending: BTreeMap::new(),
        cart_dims: HashMap::new(),
    };
    let mut cursor = vec![0usize; n];
    loop {
        let mut progress = false;
        for r in 0..n {
            while !st.blocked[r] && cursor[r] < creations[r].len() {
                let cr = &creations[r][cursor[r]];
                cursor[r] += 1;
                progress = true;
                st.take(defs, main_loc, warnings, r, cr);
            }
        }
        if progress {
            continue;
        }
        // Nothing moves: some members never made the matching call (missing or truncated ranks).
        let Some((_, parts)) = st.pending.pop_first() else { break };
        warnings
            .add("a communicator-creating call was not made by all members: the new communicator is unknown");
        for p in parts {
            bind(&mut st.maps, &mut st.bindings, p.rank, p.call, p.new, None);
            st.blocked[p.rank] = false;
        }
    }
    let mut bindings = st.bindings;
    for b in &mut bindings {
        b.sort_by_key(|x| x.0);
    }
    CommTable { world, self_comm, bindings }
}

/// The reconstruction under way: each rank's handles, the creations waiting for the
/// other members of their communicator.
struct Reconstruction {
    self_comm: CommId,
    /// Per rank, its communicator handles.
    maps: Vec<HashMap<u16, CommId>>,
    bindings: Vec<Vec<Binding>>,
    /// Per rank, whether it waits for the other members of its last creation.
    blocked: Vec<bool>,
    /// Per rank, the creations it made on each communicator.
    seq: Vec<HashMap<CommId, u64>>,
    /// The creations made by some of the members: by communicator and creation number.
    pending: BTreeMap<(CommId, u64), Vec<Participant>>,
    cart_dims: HashMap<CommId, Vec<i64>>,
}

impl Reconstruction {
    /// Rank `r`'s creation `cr`: resolved when it is the last member's, else `r` waits.
    fn take(
        &mut self,
        defs: &mut Definitions,
        main_loc: &[LocId],
        warnings: &mut Warnings,
        r: usize,
        cr: &Creation,
    ) {
        let Some(old) = cr.old else {
            bind(&mut self.maps, &mut self.bindings, r, cr.call, cr.new, None);
            return;
        };
        let Some(g) = self.maps[r].get(&old).copied() else {
            warnings.add(
                "communicators created from unknown ones are unknown: messages on them are not translated",
            );
            bind(&mut self.maps, &mut self.bindings, r, cr.call, cr.new, None);
            return;
        };
        let k = {
            let s = self.seq[r].entry(g).or_insert(0);
            *s += 1;
            *s - 1
        };
        if matches!(cr.how, How::Unknown) {
            warnings.add(
                "intercommunicators and dynamic processes are not reconstructed: messages on them are not translated",
            );
            bind(&mut self.maps, &mut self.bindings, r, cr.call, cr.new, None);
            return;
        }
        let self_comm = self.self_comm;
        let p = Participant { rank: r, call: cr.call, new: cr.new, how: cr.how.clone() };
        let members: Vec<LocId> =
            if g == self_comm { vec![main_loc[r]] } else { defs.comms[g as usize].members.clone() };
        // MPI_COMM_SELF is one spoor communicator for every rank: key its instances by rank too.
        let key = if g == self_comm { (g, (r as u64) << 32 | k) } else { (g, k) };
        let list = self.pending.entry(key).or_default();
        list.push(p);
        if list.len() < members.len() {
            self.blocked[r] = true;
            return;
        }
        let parts = self.pending.remove(&key).unwrap_or_default();
        let Reconstruction { maps, bindings, cart_dims, .. } = self;
        resolve(defs, &members, g, &parts, main_loc, cart_dims, warnings, &mut |r, call, h, c| {
            bind(maps, bindings, r, call, h, c)
        });
        for p in &parts {
            self.blocked[p.rank] = false;
        }
    }
}

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
    let mut r = Resolver { defs, main_loc, pos, bind };
    let kind = std::mem::discriminant(&parts[0].how);
    if parts.iter().any(|p| std::mem::discriminant(&p.how) != kind) {
        warnings.add(
            "the members of a communicator made different creating calls: the new communicators are unknown",
        );
        r.unknown(parts);
        return;
    }
    match &parts[0].how {
        How::Dup => {
            let c = r.new_comm(parts.iter().map(|p| ((0, r.q(p)), p)).collect());
            if let (Some(c), Some(d)) = (c, cart_dims.get(&g).cloned()) {
                cart_dims.insert(c, d);
            }
        }
        How::Split { .. } => r.split(parts),
        How::Create { .. } => {
            let got =
                parts.iter().filter(|p| matches!(p.how, How::Create { got: true })).map(|p| ((0, r.q(p)), p));
            r.new_comm(got.collect());
            r.unknown(parts.iter().filter(|p| matches!(p.how, How::Create { got: false })));
        }
        How::Cart { dims } => {
            let size = dims.iter().try_fold(1i64, |a, &d| if d > 0 { a.checked_mul(d) } else { None });
            let Some(size) = size else {
                warnings.add("MPI_Cart_create with bad dimensions: the new communicator is unknown");
                r.unknown(parts);
                return;
            };
            if let Some(c) = r.first_n(parts, size) {
                cart_dims.insert(c, dims.clone());
            }
        }
        How::Sub { .. } => {
            let Some(dims) = cart_dims.get(&g).cloned() else {
                warnings.add("MPI_Cart_sub of a communicator without known dimensions: the new communicator is unknown");
                r.unknown(parts);
                return;
            };
            r.cart_sub(parts, &dims, cart_dims);
        }
        How::FirstN(nodes) => {
            r.first_n(parts, *nodes);
        }
        How::Unknown => r.unknown(parts),
    }
}

/// What [`resolve`] works with: the definitions, and where the participants go.
struct Resolver<'a> {
    defs: &'a mut Definitions,
    /// Each rank's main-thread location.
    main_loc: &'a [LocId],
    /// A location's position in the old communicator.
    pos: HashMap<LocId, usize>,
    bind: &'a mut dyn FnMut(usize, usize, u16, Option<CommId>),
}

impl Resolver<'_> {
    /// The participant's rank in the old communicator (`usize::MAX`: not a member).
    fn q(&self, p: &Participant) -> usize {
        self.pos.get(&self.main_loc[p.rank]).copied().unwrap_or(usize::MAX)
    }

    /// A new communicator of `ps` in key order (none if empty), bound for each of them.
    fn new_comm(&mut self, mut ps: Keyed) -> Option<CommId> {
        if ps.is_empty() {
            return None;
        }
        ps.sort_by_key(|(k, _)| *k);
        let members = ps.iter().map(|(_, p)| self.main_loc[p.rank]).collect();
        let name = format!("comm {}", self.defs.comms.len());
        let c = self.defs.add_comm(&name, members);
        for (_, p) in ps {
            (self.bind)(p.rank, p.call, p.new, Some(c));
        }
        Some(c)
    }

    /// `ps` get no communicator.
    fn unknown<'p>(&mut self, ps: impl IntoIterator<Item = &'p Participant>) {
        for p in ps {
            (self.bind)(p.rank, p.call, p.new, None);
        }
    }

    /// The first `n` ranks of the old communicator in a new one; the others get none.
    fn first_n(&mut self, parts: &[Participant], n: i64) -> Option<CommId> {
        let inside = parts.iter().filter(|p| (self.q(p) as i64) < n).map(|p| ((0, self.q(p)), p)).collect();
        let c = self.new_comm(inside);
        let outside: Vec<&Participant> = parts.iter().filter(|p| (self.q(p) as i64) >= n).collect();
        self.unknown(outside);
        c
    }

    /// MPI_Comm_split: a communicator per color, ordered by key; a negative color gets none.
    fn split(&mut self, parts: &[Participant]) {
        let mut by_color: BTreeMap<i64, Keyed> = BTreeMap::new();
        let mut undefined = Vec::new();
        for p in parts {
            if let How::Split { color, key } = p.how {
                if color < 0 {
                    undefined.push(p);
                } else {
                    by_color.entry(color).or_default().push(((key, self.q(p)), p));
                }
            }
        }
        for (_, ps) in by_color {
            self.new_comm(ps);
        }
        self.unknown(undefined);
    }

    /// MPI_Cart_sub of a grid of `dims`: a communicator per value of the dimensions not
    /// kept, with the kept ones as its dimensions.
    fn cart_sub(&mut self, parts: &[Participant], dims: &[i64], cart_dims: &mut HashMap<CommId, Vec<i64>>) {
        let mut groups: BTreeMap<Vec<i64>, Keyed> = BTreeMap::new();
        let mut bad = Vec::new();
        let mut sub_dims = None;
        for p in parts {
            let How::Sub { remain } = &p.how else { continue };
            if remain.len() != dims.len() {
                bad.push(p);
                continue;
            }
            let mut rest = self.q(p) as i64;
            let mut coords = vec![0i64; dims.len()];
            for i in (0..dims.len()).rev() {
                coords[i] = rest % dims[i];
                rest /= dims[i];
            }
            let fixed: Vec<i64> = (0..dims.len()).filter(|&i| remain[i] == 0).map(|i| coords[i]).collect();
            sub_dims.get_or_insert_with(|| {
                (0..dims.len()).filter(|&i| remain[i] != 0).map(|i| dims[i]).collect::<Vec<_>>()
            });
            groups.entry(fixed).or_default().push(((0, self.q(p)), p));
        }
        for (_, ps) in groups {
            if let (Some(c), Some(d)) = (self.new_comm(ps), &sub_dims) {
                cart_dims.insert(c, d.clone());
            }
        }
        self.unknown(bad);
    }
}
