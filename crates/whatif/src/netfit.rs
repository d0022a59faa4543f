//! A network model (formats/network.md) fitted to a trace's own messages: `t = latency +
//! bytes / bandwidth` by least squares, remote and local apart, with the fit's quality
//! and a verdict on contention (whether messages that overlapped another transfer on the
//! same link took markedly longer a byte than those that did not).

use spoor_graph::pag::{ArcKind, Pag};
use spoor_graph::Local;
use std::io::{self, Write};

/// Messages of at least this many bytes are weighed for contention (smaller ones are
/// mostly latency: their time a byte says little about the link).
pub const CONTENTION_MIN_BYTES: u64 = 1024;
/// Overlapped messages taking at least this many times as long a byte as the others
/// mean a saturated link.
pub const CONTENTION_RATIO: f64 = 1.5;
/// Each group (overlapped, alone) needs at least this many messages for a verdict.
pub const CONTENTION_MIN_MESSAGES: usize = 5;
/// A fit with a coefficient of determination below this is poor.
pub const POOR_R2: f64 = 0.5;
/// A fit whose median relative error is above this is poor.
pub const POOR_ERROR: f64 = 0.25;

/// One message: its size, its measured transfer time (the message arc's weight), its
/// transfer interval (the wall times of its send and its receive) and the nodes (machines,
/// or processes when machines do not own the links) that send and receive it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Message {
    pub bytes: u64,
    pub ns: f64,
    pub start: i64,
    pub end: i64,
    pub from: u32,
    pub to: u32,
}

/// `t = latency + bytes / bandwidth` fitted to some messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Messages fitted.
    pub messages: usize,
    /// Nanoseconds, at least 0.
    pub latency: f64,
    /// Bytes a nanosecond, positive, `f64::INFINITY` when the time does not grow with size.
    pub bandwidth: f64,
    /// The coefficient of determination; `None` with fewer than 3 messages or when every
    /// time is the same (nothing to explain).
    pub r2: Option<f64>,
    /// The median of `|fit - measured| / measured` over the messages whose measured time
    /// is positive; `None` when there are none.
    pub median_error: Option<f64>,
    /// Whether the sizes differed (with one size, latency and bandwidth cannot be told
    /// apart: the line is flat at the mean time).
    pub sizes_differ: bool,
}

impl Line {
    /// The time the line gives `bytes`.
    pub fn time(&self, bytes: u64) -> f64 {
        self.latency + bytes as f64 / self.bandwidth
    }

    /// Why the fit is poor (R^2 below [`POOR_R2`], median relative error above
    /// [`POOR_ERROR`]), or `None` when it is not.
    pub fn poor(&self) -> Option<String> {
        let mut why = Vec::new();
        if let Some(r2) = self.r2.filter(|&r| r < POOR_R2) {
            why.push(format!("R^2 = {r2:.3} (below {POOR_R2})"));
        }
        if let Some(e) = self.median_error.filter(|&e| e > POOR_ERROR) {
            why.push(format!("median relative error {:.1} % (above {:.0} %)", e * 100.0, POOR_ERROR * 100.0));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }

    /// One line on the fit: messages, latency, bandwidth, quality.
    pub fn describe(&self) -> String {
        let r2 = self.r2.map_or("n/a".to_owned(), |r| format!("{r:.4}"));
        let err = self.median_error.map_or("n/a".to_owned(), |e| format!("{:.1} %", e * 100.0));
        format!(
            "{} messages: latency {} ns, bandwidth {}; R^2 {r2}, median relative error {err}",
            self.messages,
            self.latency.round(),
            bandwidth_value(self.bandwidth),
        )
    }
}

/// A bandwidth of bytes a nanosecond as formats/network.md writes it: whole bytes a
/// second, or `inf`.
pub fn bandwidth_value(bytes_per_ns: f64) -> String {
    if bytes_per_ns.is_finite() {
        format!("{:.0}B/s", bytes_per_ns * 1e9)
    } else {
        "inf".to_owned()
    }
}

/// Least squares of `ns` on `bytes`, with latency at least 0 and a positive bandwidth:
/// a negative intercept is refitted through the origin, a slope that is not positive
/// leaves a flat line at the mean time (infinite bandwidth). `None` without messages.
pub fn fit_line(points: &[(u64, f64)]) -> Option<Line> {
    if points.is_empty() {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0 as f64).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(x, y) in points {
        let dx = x as f64 - mx;
        sxx += dx * dx;
        sxy += dx * (y - my);
    }
    let sizes_differ = sxx > 0.0;
    let (mut latency, mut slope) = if sizes_differ { (my - sxy / sxx * mx, sxy / sxx) } else { (my, 0.0) };
    if slope <= 0.0 {
        (latency, slope) = (my.max(0.0), 0.0);
    } else if latency < 0.0 {
        let xx: f64 = points.iter().map(|p| (p.0 as f64).powi(2)).sum();
        let xy: f64 = points.iter().map(|p| p.0 as f64 * p.1).sum();
        (latency, slope) = (0.0, if xx > 0.0 { (xy / xx).max(0.0) } else { 0.0 });
    }
    let bandwidth = if slope > 0.0 { 1.0 / slope } else { f64::INFINITY };
    let mut line =
        Line { messages: points.len(), latency, bandwidth, r2: None, median_error: None, sizes_differ };
    let ss_tot: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let ss_res: f64 = points.iter().map(|p| (p.1 - line.time(p.0)).powi(2)).sum();
    if points.len() >= 3 && ss_tot > 0.0 {
        line.r2 = Some(1.0 - ss_res / ss_tot);
    }
    let mut errors: Vec<f64> =
        points.iter().filter(|p| p.1 > 0.0).map(|p| (line.time(p.0) - p.1).abs() / p.1).collect();
    line.median_error = median(&mut errors);
    Some(line)
}

/// The median (the upper one of an even count), `None` when empty.
pub(crate) fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// For each message, whether another message's transfer interval intersects its own on
/// its sending node's way out or its receiving node's way in. Intervals are half-open,
/// so one that ends when another starts does not overlap it, and an empty one (received
/// when sent) overlaps nothing.
pub fn overlapped(messages: &[Message]) -> Vec<bool> {
    let mut out = vec![false; messages.len()];
    for key in [|m: &Message| m.from, |m: &Message| m.to] {
        let mut order: Vec<usize> =
            (0..messages.len()).filter(|&i| messages[i].end > messages[i].start).collect();
        order.sort_by_key(|&i| (key(&messages[i]), messages[i].start, messages[i].end));
        for group in order.chunk_by(|&a, &b| key(&messages[a]) == key(&messages[b])) {
            // Sorted by start: a message overlaps an earlier one when the latest end so
            // far is after its start, and a later one when the next start is before its end.
            let mut latest_end = i64::MIN;
            for (k, &i) in group.iter().enumerate() {
                let m = &messages[i];
                if latest_end > m.start || group.get(k + 1).is_some_and(|&j| messages[j].start < m.end) {
                    out[i] = true;
                }
                latest_end = latest_end.max(m.end);
            }
        }
    }
    out
}

/// The contention verdict: the median time a byte (after the fitted latency) of the
/// messages of at least [`CONTENTION_MIN_BYTES`] that overlapped another transfer and of
/// those that did not.
#[derive(Clone, Debug, PartialEq)]
pub struct Contention {
    pub overlapped: usize,
    pub alone: usize,
    /// ns a byte, when the group has messages.
    pub overlapped_ns_per_byte: Option<f64>,
    pub alone_ns_per_byte: Option<f64>,
    /// Overlapped messages took at least [`CONTENTION_RATIO`] times as long a byte, with
    /// at least [`CONTENTION_MIN_MESSAGES`] in each group.
    pub saturated: bool,
}

impl Contention {
    /// Weighs `messages` (with `overlapped` from [`overlapped`]) against a latency.
    pub fn judge(messages: &[Message], overlapped: &[bool], latency: f64) -> Contention {
        let (mut over, mut alone) = (Vec::new(), Vec::new());
        for (m, &o) in messages.iter().zip(overlapped) {
            if m.bytes >= CONTENTION_MIN_BYTES {
                let per_byte = (m.ns - latency) / m.bytes as f64;
                if o {
                    over.push(per_byte)
                } else {
                    alone.push(per_byte)
                }
            }
        }
        let (o, a) = (median(&mut over), median(&mut alone));
        let saturated = over.len() >= CONTENTION_MIN_MESSAGES
            && alone.len() >= CONTENTION_MIN_MESSAGES
            && matches!((o, a), (Some(o), Some(a)) if o > 0.0 && o >= CONTENTION_RATIO * a.max(0.0));
        Contention {
            overlapped: over.len(),
            alone: alone.len(),
            overlapped_ns_per_byte: o,
            alone_ns_per_byte: a,
            saturated,
        }
    }

    /// What the verdict is, as a sentence: `the link was saturated: ...` or why not.
    pub fn verdict(&self) -> String {
        let per_byte = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.3} ns"));
        let (o, a) = (per_byte(self.overlapped_ns_per_byte), per_byte(self.alone_ns_per_byte));
        let figures = format!(
            "{} remote messages of at least {CONTENTION_MIN_BYTES} bytes that overlapped another transfer \
             on the same link took {o} a byte, the {} that did not {a} (medians, after the fitted latency)",
            self.overlapped, self.alone
        );
        if self.saturated {
            let ratio = match (self.overlapped_ns_per_byte, self.alone_ns_per_byte) {
                (Some(o), Some(a)) if a > 0.0 => format!("{:.2}x", o / a),
                _ => "far more than".to_owned(),
            };
            format!("the link was saturated: {figures}, {ratio} as long a byte")
        } else if self.overlapped < CONTENTION_MIN_MESSAGES || self.alone < CONTENTION_MIN_MESSAGES {
            format!("contention not judged: {figures}; a verdict needs {CONTENTION_MIN_MESSAGES} of each")
        } else {
            format!(
                "no saturated link: {figures}, less than {CONTENTION_RATIO}x as long a byte; links unlimited"
            )
        }
    }
}

/// A network model fitted to a trace.
#[derive(Clone, Debug)]
pub struct ModelFit {
    /// Which messages were taken as local.
    pub local: Local,
    /// The remote line, `None` without remote messages.
    pub remote: Option<Line>,
    /// The local line, `None` without local messages.
    pub local_line: Option<Line>,
    /// The contention verdict over the remote messages, `None` without them.
    pub contention: Option<Contention>,
    /// Remote messages left out of the remote line's final fit because they overlapped
    /// another transfer on a saturated link (0 when none was).
    pub left_out: usize,
    /// What was fitted, as comment lines.
    pub comments: Vec<String>,
    /// What makes the model doubtful: poor fits.
    pub warnings: Vec<String>,
}

/// The message arcs of `pag`, remote and local by `local`. Links belong to machines when
/// `local` is `machine`, otherwise to processes (processes in separate network
/// namespaces or virtual machines, which is why the user calls their messages remote).
pub fn messages(pag: &Pag, local: Local) -> (Vec<Message>, Vec<Message>) {
    let (mut remote, mut loc) = (Vec::new(), Vec::new());
    for a in 0..pag.arcs() {
        if pag.arc_kind[a] != ArcKind::Message {
            continue;
        }
        let (fnode, tnode) = (pag.arc_from[a] as usize, pag.arc_to[a] as usize);
        let (f, t) = (pag.loc[fnode], pag.loc[tnode]);
        let node = |l: u32| if local == Local::Machine { pag.machine_of(l) } else { pag.process_of(l) };
        let m = Message {
            bytes: pag.arc_bytes[a],
            ns: pag.arc_weight[a] as f64,
            start: pag.wall[fnode],
            end: pag.wall[tnode],
            from: node(f),
            to: node(t),
        };
        if pag.is_local(local, f, t) {
            loc.push(m);
        } else {
            remote.push(m);
        }
    }
    (remote, loc)
}

/// Fits the model to the message arcs of `pag`, local ones by `local`.
pub fn fit_model(pag: &Pag, local: Local) -> ModelFit {
    let (remote, loc) = messages(pag, local);
    let mut fit = ModelFit {
        local,
        remote: None,
        local_line: None,
        contention: None,
        left_out: 0,
        comments: Vec::new(),
        warnings: Vec::new(),
    };
    fit.comments.push(format!(
        "{} remote and {} local messages (local: {}); t = latency + bytes / bandwidth by least squares",
        remote.len(),
        loc.len(),
        local.name()
    ));
    let points = |ms: &[Message]| ms.iter().map(|m| (m.bytes, m.ns)).collect::<Vec<_>>();
    if let Some(mut line) = fit_line(&points(&remote)) {
        let over = overlapped(&remote);
        let c = Contention::judge(&remote, &over, line.latency);
        fit.comments.push(if c.saturated {
            format!("{}: the model takes links_in = 1 and links_out = 1", c.verdict())
        } else {
            c.verdict()
        });
        if c.saturated {
            // The model queues overlapping messages for the link itself: their slowdown
            // is not the link's bandwidth, so the line is the messages that had it alone.
            let alone: Vec<Message> = remote.iter().zip(&over).filter(|p| !*p.1).map(|p| *p.0).collect();
            if let Some(l) = fit_line(&points(&alone)).filter(|l| l.sizes_differ) {
                fit.left_out = remote.len() - alone.len();
                fit.comments.push(format!(
                    "remote, all {} messages: latency {} ns, bandwidth {}; refitted to the {} that had the link to themselves",
                    line.messages,
                    line.latency.round(),
                    bandwidth_value(line.bandwidth),
                    l.messages
                ));
                line = l;
            }
        }
        fit.contention = Some(c);
        fit.remote = Some(line);
    }
    fit.local_line = fit_line(&points(&loc));
    for (side, line) in [("remote", &fit.remote), ("local", &fit.local_line)] {
        let Some(line) = line else {
            fit.comments.push(format!("{side}: no messages"));
            continue;
        };
        fit.comments.push(format!("{side}: {}", line.describe()));
        if !line.sizes_differ {
            fit.warnings.push(format!(
                "the {side} messages all have one size: latency and bandwidth cannot be told apart \
                 (the model takes their mean time as latency and an infinite bandwidth)"
            ));
        }
        if let Some(why) = line.poor() {
            fit.warnings.push(format!(
                "the {side} fit is poor: {why}: the {side} message times do not follow latency + bytes / bandwidth"
            ));
        }
    }
    fit
}

impl ModelFit {
    /// Whether the model limits links (a saturated link was seen).
    pub fn saturated(&self) -> bool {
        self.contention.as_ref().is_some_and(|c| c.saturated)
    }

    /// Writes the model in the form of formats/network.md, `comments` first, then the
    /// fit's own comment lines.
    pub fn write_toml(&self, out: &mut impl Write, comments: &[String]) -> io::Result<()> {
        for c in comments.iter().chain(&self.comments) {
            writeln!(out, "# {c}")?;
        }
        for w in &self.warnings {
            writeln!(out, "# warning: {w}")?;
        }
        if let Some(l) = &self.remote {
            writeln!(out, "latency = \"{}ns\"", l.latency.round())?;
            writeln!(out, "bandwidth = \"{}\"", bandwidth_value(l.bandwidth))?;
        }
        if let Some(l) = &self.local_line {
            writeln!(out, "local_latency = \"{}ns\"", l.latency.round())?;
            writeln!(out, "local_bandwidth = \"{}\"", bandwidth_value(l.bandwidth))?;
        }
        writeln!(out, "local = \"{}\"", self.local.name())?;
        if self.saturated() {
            if self.local != Local::Machine {
                writeln!(out, "node = \"processor\"")?;
            }
            writeln!(out, "links_in = 1")?;
            writeln!(out, "links_out = 1")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line_is_found() {
        let pts: Vec<(u64, f64)> =
            [0u64, 100, 1000, 5000].iter().map(|&b| (b, 1000.0 + b as f64 / 2.0)).collect();
        let l = fit_line(&pts).unwrap();
        assert!((l.latency - 1000.0).abs() < 1e-6 && (l.bandwidth - 2.0).abs() < 1e-9, "{l:?}");
        assert!((l.r2.unwrap() - 1.0).abs() < 1e-12 && l.median_error.unwrap() < 1e-12);
        assert!(l.poor().is_none());
    }

    #[test]
    fn latency_and_bandwidth_are_clamped() {
        // A negative intercept: refitted through the origin.
        let l = fit_line(&[(1000, 100.0), (2000, 1100.0), (3000, 2100.0)]).unwrap();
        assert_eq!(l.latency, 0.0);
        assert!(l.bandwidth > 0.0 && l.bandwidth.is_finite());
        // Times falling with the size: flat at the mean, infinite bandwidth.
        let l = fit_line(&[(10, 300.0), (20, 200.0), (30, 100.0)]).unwrap();
        assert_eq!((l.latency, l.bandwidth), (200.0, f64::INFINITY));
        assert_eq!(bandwidth_value(l.bandwidth), "inf");
        // One size.
        let l = fit_line(&[(10, 300.0), (10, 100.0)]).unwrap();
        assert!(!l.sizes_differ && l.latency == 200.0 && l.r2.is_none());
    }

    #[test]
    fn overlaps_on_the_same_way_out_or_in() {
        let m = |start, end, from, to| Message { bytes: 1, ns: 1.0, start, end, from, to };
        let ms = [
            m(0, 10, 0, 1),  // overlaps the next on 0's way out
            m(5, 15, 0, 2),  //
            m(20, 30, 1, 2), // alone: 1 out, 2 in, nothing else then
            m(30, 40, 3, 2), // touches the previous only at 30
            m(35, 45, 4, 2), // overlaps the previous on 2's way in
            m(0, 100, 5, 6), // no other message from 5 or to 6
            m(50, 50, 4, 2), // empty
        ];
        assert_eq!(overlapped(&ms), [true, true, false, true, true, false, false]);
    }

    #[test]
    fn the_model_is_toml_with_the_keys_of_formats_network_md() {
        let line = |latency, bandwidth| Line {
            messages: 6,
            latency,
            bandwidth,
            r2: Some(1.0),
            median_error: Some(0.0),
            sizes_differ: true,
        };
        let c = Contention {
            overlapped: 12,
            alone: 6,
            overlapped_ns_per_byte: Some(2.0),
            alone_ns_per_byte: Some(1.0),
            saturated: true,
        };
        let fit = ModelFit {
            local: Local::Never,
            remote: Some(line(1000.4, 1.0)),
            local_line: Some(line(0.0, f64::INFINITY)),
            contention: Some(c),
            left_out: 12,
            comments: vec!["what was fitted".into()],
            warnings: vec!["a warning".into()],
        };
        let mut out = Vec::new();
        fit.write_toml(&mut out, &["title".into()]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("# title\n# what was fitted\n# warning: a warning\n"), "{text}");
        let t: toml::Table = text.parse().unwrap();
        let s = |k: &str| t[k].as_str().unwrap().to_owned();
        assert_eq!(s("latency"), "1000ns");
        assert_eq!(s("bandwidth"), "1000000000B/s");
        assert_eq!((s("local_latency"), s("local_bandwidth")), ("0ns".into(), "inf".into()));
        assert_eq!((s("local"), s("node")), ("never".into(), "processor".into()));
        assert_eq!((t["links_in"].as_integer(), t["links_out"].as_integer()), (Some(1), Some(1)));
    }
}
