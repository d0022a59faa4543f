//! Replaying a trace in a causal order: the [`Engine`] knows, for the next event of
//! each location, whether everything it waits for (its send, the begins of its
//! collective, the release of its lock, its parent's spawn point) has been replayed,
//! and carries a value along happened-before (a Lamport clock for spoor-order, a
//! corrected time for the controlled logical clock of spoor-align). The drivers pick
//! which ready location goes next.

use crate::coded::Coded;
use crate::describe;
use crate::fasthash::FxHashMap as HashMap;
use crate::matching::{Point, Shape, Sync};
use spoor_format::mem::prefetch;
use spoor_model::{Definitions, EventRef, LocId};

/// What a driver knows of a location's next event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Head {
    /// The location has no events left.
    Finished,
    /// Its next event has this wall time.
    At(i64),
}

/// How a dependency reaches an event (the controlled logical clock adds the minimum
/// latency to messages and collectives only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    Message,
    Collective,
    Lock,
    Spawn,
}

/// What the next event of a location receives along happened-before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// The largest value among the events it waits for.
    pub value: i64,
    /// The event it waited for: the send, the latest begin (by wall time) of its
    /// collective, the release, the parent's spawn point.
    pub from: EventRef,
    pub from_wall: i64,
    pub via: Via,
}

/// Two largest entries by key, remembering whose they are.
#[derive(Clone, Copy, Debug, Default)]
struct Top2 {
    a: Option<(i64, u32)>,
    b: Option<(i64, u32)>,
}

impl Top2 {
    /// Larger keys win; among equal keys the lower member.
    fn push(&mut self, key: i64, member: u32) {
        let better = |x: (i64, u32), y: Option<(i64, u32)>| match y {
            None => true,
            Some(y) => x.0 > y.0 || (x.0 == y.0 && x.1 < y.1),
        };
        let e = (key, member);
        if better(e, self.a) {
            self.b = self.a;
            self.a = Some(e);
        } else if better(e, self.b) {
            self.b = Some(e);
        }
    }

    /// The largest entry that is not `member`'s.
    fn best_except(&self, member: u32) -> Option<(i64, u32)> {
        match self.a {
            Some(a) if a.1 != member => Some(a),
            _ => self.b,
        }
    }
}

struct InstState {
    /// (wall, value) of each member's begin once replayed.
    begun: Vec<Option<(i64, i64)>>,
    n_begun: usize,
    /// Members 0..prefix have all begun.
    prefix: usize,
    by_value: Top2,
    by_wall: Top2,
    waiting: Vec<LocId>,
    ends_left: usize,
}

/// What the engine keeps of one location, in one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct LocState {
    /// The index of its next event.
    next: u64,
    /// Its next entry in `Sync::points`: where it is, and its event index (`u64::MAX`:
    /// none).
    pt: usize,
    pt_index: u64,
    /// (index, wall, value) of its last replayed event.
    last: Option<(u64, i64, i64)>,
    forced: bool,
}

/// The state of a causal replay.
pub struct Engine<'s> {
    sync: &'s Sync,
    locs: Vec<LocState>,
    /// (wall, value) of replayed sources not yet consumed.
    src: HashMap<EventRef, (i64, i64)>,
    inst: Vec<Option<InstState>>,
    wait_ev: HashMap<EventRef, Vec<LocId>>,
    wait_parent: HashMap<LocId, Vec<LocId>>,
}

impl<'s> Engine<'s> {
    pub fn new(sync: &'s Sync, locations: usize) -> Self {
        Engine {
            sync,
            locs: (0..locations)
                .map(|l| {
                    let (pt, pt_index) = sync.points.get(l).map_or((0, u64::MAX), Coded::first);
                    LocState { next: 0, pt, pt_index, last: None, forced: false }
                })
                .collect(),
            src: HashMap::default(),
            inst: (0..sync.instances.len()).map(|_| None).collect(),
            wait_ev: HashMap::default(),
            wait_parent: HashMap::default(),
        }
    }

    /// The index of the next event of `loc` to replay.
    pub fn next_index(&self, loc: LocId) -> u64 {
        self.locs[loc as usize].next
    }

    #[inline]
    fn point(&self, loc: LocId) -> Option<Point> {
        let l = loc as usize;
        let s = self.locs.get(l)?;
        if s.pt_index != s.next {
            return None;
        }
        Some(self.sync.points[l].get(s.pt, s.pt_index).0)
    }

    /// The part the next event of `loc` plays in synchronization, if any (then
    /// [`Engine::incoming`] may have something for it).
    #[inline]
    pub fn point_of(&self, loc: LocId) -> Option<Point> {
        self.point(loc)
    }

    /// Whether the next event of `loc` waits for nothing: [`Engine::check`] would say
    /// yes without looking at anything else.
    #[inline]
    pub fn needs_nothing(&self, loc: LocId) -> bool {
        self.locs[loc as usize].forced
            || matches!(self.point(loc), None | Some(Point::Source) | Some(Point::CollBegin { .. }))
    }

    fn begun(&self, inst: u32, j: usize) -> bool {
        self.inst[inst as usize].as_ref().is_some_and(|s| s.begun[j].is_some())
    }

    fn coll_ready(&self, inst: u32, m: usize) -> bool {
        let members = self.sync.instances[inst as usize].members.len();
        let st = self.inst[inst as usize].as_ref();
        let others = st.map_or(0, |s| s.n_begun - usize::from(s.begun[m].is_some()));
        match self.sync.instances[inst as usize].shape {
            Shape::AllToAll => others + 1 == members,
            Shape::OneToAll { root } => m == root as usize || self.begun(inst, root as usize),
            Shape::AllToOne { root } => m != root as usize || others + 1 == members,
            Shape::Prefix => st.map_or(0, |s| s.prefix) >= m,
        }
    }

    /// Whether the next event of `loc` (at `wall`) can be replayed now. If not, `loc`
    /// is remembered and handed back by [`Engine::emit`] when what it waits for happens
    /// (then check again). `head` tells the driver's view of other locations.
    pub fn check(&mut self, loc: LocId, wall: i64, head: &dyn Fn(LocId) -> Head) -> bool {
        if self.locs[loc as usize].forced {
            return true;
        }
        match self.point(loc) {
            None | Some(Point::Source) | Some(Point::CollBegin { .. }) => true,
            Some(Point::Recv { from }) | Some(Point::Acquire { from }) => {
                if self.locs[from.loc as usize].next > from.index {
                    true
                } else {
                    self.wait_ev.entry(from).or_default().push(loc);
                    false
                }
            }
            Some(Point::CollEnd { inst, member, .. }) => {
                if self.coll_ready(inst, member as usize) {
                    true
                } else {
                    let members = self.sync.instances[inst as usize].members.len();
                    self.state(inst, members).waiting.push(loc);
                    false
                }
            }
            Some(Point::Spawn { parent }) => match head(parent) {
                Head::Finished => true,
                Head::At(w) if w > wall => true,
                Head::At(_) => {
                    self.wait_parent.entry(parent).or_default().push(loc);
                    false
                }
            },
        }
    }

    fn state(&mut self, inst: u32, members: usize) -> &mut InstState {
        self.inst[inst as usize].get_or_insert_with(|| InstState {
            begun: vec![None; members],
            n_begun: 0,
            prefix: 0,
            by_value: Top2::default(),
            by_wall: Top2::default(),
            waiting: Vec::new(),
            ends_left: members,
        })
    }

    /// What the next event of `loc` receives; call before [`Engine::emit`].
    pub fn incoming(&self, loc: LocId) -> Option<Incoming> {
        match self.point(loc)? {
            Point::Recv { from } | Point::Acquire { from } => {
                let &(wall, value) = self.src.get(&from)?;
                let via = if matches!(self.point(loc), Some(Point::Recv { .. })) {
                    Via::Message
                } else {
                    Via::Lock
                };
                Some(Incoming { value, from, from_wall: wall, via })
            }
            Point::CollEnd { inst, member, .. } => {
                let instance = &self.sync.instances[inst as usize];
                let st = self.inst[inst as usize].as_ref()?;
                let pick = |j: u32| -> Option<Incoming> {
                    let (wall, value) = st.begun[j as usize]?;
                    Some(Incoming {
                        value,
                        from: instance.members[j as usize].begin,
                        from_wall: wall,
                        via: Via::Collective,
                    })
                };
                match instance.shape {
                    Shape::OneToAll { root } => (root != member).then(|| pick(root)).flatten(),
                    Shape::AllToOne { root } if root != member => None,
                    Shape::AllToAll | Shape::AllToOne { .. } => {
                        let (value, _) = st.by_value.best_except(member)?;
                        let (_, who) = st.by_wall.best_except(member)?;
                        pick(who).map(|i| Incoming { value, ..i })
                    }
                    Shape::Prefix => {
                        let mut value = None::<i64>;
                        let mut latest: Option<(i64, u32)> = None;
                        for j in 0..member {
                            if let Some((w, v)) = st.begun[j as usize] {
                                value = Some(value.map_or(v, |x| x.max(v)));
                                if latest.is_none_or(|(lw, _)| w > lw) {
                                    latest = Some((w, j));
                                }
                            }
                        }
                        let (_, who) = latest?;
                        pick(who).map(|i| Incoming { value: value.unwrap_or(i.value), ..i })
                    }
                }
            }
            Point::Spawn { parent } => {
                let (index, wall, value) = self.locs[parent as usize].last?;
                Some(Incoming {
                    value,
                    from: EventRef { loc: parent, index },
                    from_wall: wall,
                    via: Via::Spawn,
                })
            }
            Point::Source | Point::CollBegin { .. } => None,
        }
    }

    /// Records that the next event of `loc` was replayed at `wall` with `value`, and
    /// adds to `woken` the locations that may have become ready.
    #[inline]
    pub fn emit(&mut self, loc: LocId, wall: i64, value: i64, woken: &mut Vec<LocId>) {
        let l = loc as usize;
        let idx = self.locs[l].next;
        // Most events play no part in synchronization: their way is short and inline.
        if self.locs[l].pt_index == idx {
            self.emit_point(loc, idx, wall, value, woken);
        }
        let s = &mut self.locs[l];
        s.last = Some((idx, wall, value));
        s.next += 1;
        s.forced = false;
        if !self.wait_parent.is_empty() {
            if let Some(w) = self.wait_parent.remove(&loc) {
                woken.extend(w);
            }
        }
    }

    /// [`Engine::emit`] of an event with a point (event `idx` of `loc`).
    #[inline(never)]
    fn emit_point(&mut self, loc: LocId, idx: u64, wall: i64, value: i64, woken: &mut Vec<LocId>) {
        let l = loc as usize;
        let at = EventRef { loc, index: idx };
        let points = &self.sync.points[l];
        let (point, end) = points.get(self.locs[l].pt, idx);
        match point {
            Point::Source => {
                self.src.insert(at, (wall, value));
                if !self.wait_ev.is_empty() {
                    if let Some(w) = self.wait_ev.remove(&at) {
                        woken.extend(w);
                    }
                }
            }
            Point::CollBegin { inst, member } => self.begin(inst, member, wall, value, woken),
            Point::CollEnd { inst, member, also_begin } => {
                if also_begin {
                    self.begin(inst, member, wall, value, woken);
                }
                let members = self.sync.instances[inst as usize].members.len();
                let st = self.state(inst, members);
                st.ends_left -= 1;
                if st.ends_left == 0 {
                    self.inst[inst as usize] = None;
                }
            }
            Point::Recv { from } | Point::Acquire { from } => {
                self.src.remove(&from);
            }
            Point::Spawn { .. } => {}
        }
        let (pt, pt_index) = points.after(end, idx);
        self.locs[l].pt = pt;
        self.locs[l].pt_index = pt_index;
        prefetch(points.bytes_at(pt + 64));
    }

    fn begin(&mut self, inst: u32, member: u32, wall: i64, value: i64, woken: &mut Vec<LocId>) {
        let instance = &self.sync.instances[inst as usize];
        let members = instance.members.len();
        let shape = instance.shape;
        let st = self.state(inst, members);
        if st.begun[member as usize].is_some() {
            return;
        }
        st.begun[member as usize] = Some((wall, value));
        st.n_begun += 1;
        st.by_value.push(value, member);
        st.by_wall.push(wall, member);
        while st.prefix < members && st.begun[st.prefix].is_some() {
            st.prefix += 1;
        }
        let wake = match shape {
            Shape::AllToAll | Shape::AllToOne { .. } => st.n_begun + 1 >= members,
            Shape::OneToAll { root } => member == root,
            Shape::Prefix => true,
        };
        if wake {
            woken.append(&mut st.waiting);
        }
    }

    /// Lets one location waiting for its parent's spawn point go (to break a wait
    /// that time alone imposed); returns it.
    pub fn release_spawn(&mut self) -> Option<LocId> {
        let parent = *self.wait_parent.iter().filter(|(_, v)| !v.is_empty()).map(|(p, _)| p).min()?;
        let v = self.wait_parent.get_mut(&parent)?;
        v.sort_unstable();
        v.dedup();
        let child = v.remove(0);
        self.locs[child as usize].forced = true;
        Some(child)
    }

    /// The event the next event of `loc` waits for, if any.
    pub fn blocked_on(&self, loc: LocId) -> Option<EventRef> {
        match self.point(loc)? {
            Point::Recv { from } | Point::Acquire { from } => Some(from),
            Point::CollEnd { inst, member, .. } => {
                let instance = &self.sync.instances[inst as usize];
                (0..instance.members.len())
                    .find(|&j| instance.depends(member as usize, j) && !self.begun(inst, j))
                    .map(|j| instance.members[j].begin)
            }
            Point::Spawn { parent } => Some(EventRef { loc: parent, index: self.locs[parent as usize].next }),
            _ => None,
        }
    }

    /// Follows what blocked locations wait for, from `start`, until a location repeats:
    /// the cycle, as (waiting event, awaited event) pairs.
    pub fn cycle(&self, start: LocId) -> Vec<(EventRef, EventRef)> {
        let mut seen: HashMap<LocId, usize> = HashMap::default();
        let mut path: Vec<(EventRef, EventRef)> = Vec::new();
        let mut loc = start;
        loop {
            if let Some(&i) = seen.get(&loc) {
                return path.split_off(i);
            }
            let Some(awaited) = self.blocked_on(loc) else { return path };
            seen.insert(loc, path.len());
            path.push((EventRef { loc, index: self.locs[loc as usize].next }, awaited));
            loc = awaited.loc;
        }
    }
}

/// A cycle as text: each waiting event (with its kind and time from `what`) and what it waits for.
pub fn describe_cycle(
    defs: &Definitions,
    cycle: &[(EventRef, EventRef)],
    what: &dyn Fn(EventRef) -> Option<(&'static str, i64)>,
) -> String {
    let mut parts = Vec::new();
    for &(w, a) in cycle {
        let waiting = match what(w) {
            Some((k, t)) => describe::event(defs, w, k, t),
            None => describe::event_ref(defs, w),
        };
        let awaited = match what(a) {
            Some((k, t)) => describe::event(defs, a, k, t),
            None => describe::event_ref(defs, a),
        };
        parts.push(format!("{waiting} waits for {awaited}"));
    }
    format!("happened-before has a cycle: {}", parts.join("; "))
}
