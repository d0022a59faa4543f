//! What can be drawn over the pictures: a path through the run (the critical path, once
//! crates/graph computes it) as segments of time on locations and the arcs between them,
//! and marks: stretches of a location's time with a label (spoor-diagnose's peer
//! annotations).

use spoor_model::LocId;

/// A stretch of the path on one location, from `start` to `end` (ns, the trace's times).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub loc: LocId,
    pub start: i64,
    pub end: i64,
}

/// A hop of the path from one location and time to another (a message, a collective,
/// a lock hand-off, a spawn).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathArc {
    pub from_loc: LocId,
    pub from_time: i64,
    pub to_loc: LocId,
    pub to_time: i64,
}

/// A stretch of a location's time to mark, with what it means: `rank5 overworked by up
/// to 67.6 points (stencil-0)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub loc: LocId,
    pub start: i64,
    pub end: i64,
    pub label: String,
}

/// A path to draw over the space-time diagram, the Chrome export and the HTML report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overlay {
    /// Shown in legends and as the name of the Chrome track (e.g. "critical path").
    pub name: String,
    pub segments: Vec<Segment>,
    pub arcs: Vec<PathArc>,
    /// The path's length (ns).
    pub length: i64,
    /// The path's time by entity at some levels (e.g. procedure, process), largest
    /// first: the HTML report's summary shows the first few.
    pub profiles: Vec<OverlayProfile>,
    /// Stretches marked with a label, drawn under the path.
    pub marks: Vec<Mark>,
}

/// The time a path spends on each entity of one level, largest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OverlayProfile {
    /// The level's name in the singular ("procedure", "process").
    pub level: String,
    /// (entity, time on the path in ns).
    pub rows: Vec<(String, i64)>,
}

impl Overlay {
    pub fn is_empty(&self) -> bool {
        !self.has_path() && self.marks.is_empty()
    }

    /// Whether there is a path to draw (not only marks).
    pub fn has_path(&self) -> bool {
        !self.segments.is_empty() || !self.arcs.is_empty()
    }

    /// Time on the path per location (summed segment lengths), sorted by location.
    pub fn time_per_location(&self) -> Vec<(LocId, i64)> {
        let mut m = std::collections::BTreeMap::new();
        for s in &self.segments {
            *m.entry(s.loc).or_insert(0i64) += (s.end - s.start).max(0);
        }
        m.into_iter().collect()
    }
}
