//! A PAG file written as the graph is built, without keeping the graph (spoor-pag past
//! its `--memory`): the nodes and arcs go to two files of a spill directory in chunks as
//! their batches fill, and are copied after the definitions and contexts once the build
//! has ended. The chunks that hold a location's first node are coded again on the way,
//! as its source arc's weight needs the trace's start. The file is the one
//! [`crate::file::write`] writes of the whole graph, byte for byte.

use crate::build::{self, Sieve};
use crate::cost::Mode;
use crate::error::{Error, Result};
use crate::file::{self, kind, BATCH};
use crate::pag::{ArcKind, Pag, Partial};
use crate::streamed::ClockCount;
use spoor_format::TraceReader;
use spoor_model::Feedback;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The nodes and arcs of a build that keeps no graph, on their way to a spill directory.
pub(crate) struct PagSpill {
    /// The batches being filled (only their node or arc arrays are used).
    nodes: Pag,
    arcs: Pag,
    /// The number of the nodes batch's first node.
    first: usize,
    node_file: Spilled,
    arc_file: Spilled,
    /// Each location's first node and its source arc's weight, known at the end.
    sources: Vec<(u32, i64)>,
    made: usize,
    arcs_made: usize,
    /// Bytes written to the spill files.
    spilled: u64,
    clock: ClockCount,
    /// The first failed write (arcs are made where no error can be returned).
    failed: Option<Error>,
    payload: Vec<u8>,
    frame: Vec<u8>,
}

/// One spill file being written, removed when dropped (whatever ends the writing).
struct Spilled {
    path: PathBuf,
    out: BufWriter<File>,
}

impl Spilled {
    fn create(dir: &Path, name: &str) -> Result<Spilled> {
        let path = dir.join(name);
        let f = File::create(&path).map_err(|e| io_error(&path, &e))?;
        Ok(Spilled { out: BufWriter::with_capacity(1 << 20, f), path })
    }

    /// What was written, to read back.
    fn reopen(&mut self) -> Result<BufReader<File>> {
        self.out.flush().map_err(|e| io_error(&self.path, &e))?;
        let f = File::open(&self.path).map_err(|e| io_error(&self.path, &e))?;
        Ok(BufReader::with_capacity(1 << 20, f))
    }
}

impl Drop for Spilled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn io_error(path: &Path, e: &io::Error) -> Error {
    Error::Format(spoor_format::Error::io(&path.display().to_string(), e))
}

impl PagSpill {
    pub(crate) fn new(dir: &Path) -> Result<PagSpill> {
        Ok(PagSpill {
            nodes: Pag::default(),
            arcs: Pag::default(),
            first: 0,
            node_file: Spilled::create(dir, "nodes")?,
            arc_file: Spilled::create(dir, "arcs")?,
            sources: Vec::new(),
            made: 0,
            arcs_made: 0,
            spilled: 0,
            clock: ClockCount::default(),
            failed: None,
            payload: Vec::new(),
            frame: Vec::new(),
        })
    }

    /// The next node, as `Builder::push_node` makes it.
    #[allow(clippy::too_many_arguments)] // one per node array
    pub(crate) fn node(
        &mut self,
        loc: u32,
        prev: u32,
        wall: i64,
        weight: i64,
        ctx: u32,
        kind: u8,
    ) -> Result<()> {
        self.nodes.push_node(loc, prev, wall, weight, ctx, kind);
        self.made += 1;
        if self.nodes.nodes() == BATCH {
            self.flush_nodes()?;
        }
        Ok(())
    }

    fn flush_nodes(&mut self) -> Result<()> {
        let n = self.nodes.loc.len();
        if n == 0 {
            return Ok(());
        }
        file::encode_nodes(&mut self.payload, self.first, &self.nodes, 0..n);
        self.spilled += self.payload.len() as u64 + 9;
        let f = &mut self.node_file;
        file::emit(&mut f.out, kind::NODES, &self.payload, &mut self.frame)
            .map_err(|e| io_error(&f.path, &e))?;
        self.first += n;
        self.nodes.clear_nodes();
        Ok(())
    }

    /// Remote arc into `to` (the newest node) from `from`, with their wall times.
    #[allow(clippy::too_many_arguments)] // one per arc array, and the walls compared
    pub(crate) fn arc(
        &mut self,
        to: (u32, i64),
        from: (u32, i64),
        weight: i64,
        kind: ArcKind,
        bytes: u64,
        op: u8,
    ) {
        self.clock.arc(kind, to.1, from.1);
        self.arcs_made += 1;
        self.arcs.push_arc(to.0, from.0, weight, kind, bytes, op);
        if self.arcs.arcs() == BATCH {
            if let Err(e) = self.flush_arcs() {
                self.failed.get_or_insert(e);
            }
        }
    }

    fn flush_arcs(&mut self) -> Result<()> {
        let n = self.arcs.arc_to.len();
        if n == 0 {
            return Ok(());
        }
        file::encode_arcs(&mut self.payload, &self.arcs, 0..n);
        self.spilled += self.payload.len() as u64 + 9;
        let f = &mut self.arc_file;
        file::emit(&mut f.out, kind::ARCS, &self.payload, &mut self.frame)
            .map_err(|e| io_error(&f.path, &e))?;
        self.arcs.clear_arcs();
        Ok(())
    }

    /// A location's first node, `n`, weighs `weight` (known at the end).
    pub(crate) fn source(&mut self, n: u32, weight: i64) {
        self.sources.push((n, weight));
    }

    /// Writes the PAG file to `out`: `whole` (the build's graph without its nodes and
    /// arcs) gives its definitions, contexts, phases, notes and wildcard receives.
    /// Gives the bytes spilled.
    fn finish(mut self, whole: &Pag, out: &mut dyn Write) -> Result<u64> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.flush_nodes()?;
        self.flush_arcs()?;
        let out_error = |e: io::Error| Error::Format(spoor_format::Error::io("the output", &e));
        file::write_front(out, whole).map_err(out_error)?;
        self.sources.sort_unstable();
        let mut sources = &self.sources[..];
        let mut chunk = Vec::new();
        for f in [&mut self.node_file, &mut self.arc_file] {
            let mut input = f.reopen()?;
            let path = &f.path;
            loop {
                chunk.clear();
                let mut head = [0u8; 9];
                match input.read_exact(&mut head) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(io_error(path, &e)),
                }
                let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
                chunk.resize(len, 0);
                input.read_exact(&mut chunk).map_err(|e| io_error(path, &e))?;
                if head[0] == kind::NODES && !sources.is_empty() {
                    let (first, nodes) = file::decode_own_nodes(&chunk);
                    let end = first + nodes.nodes();
                    let k = sources.partition_point(|s| (s.0 as usize) < end);
                    if k > 0 {
                        let mut nodes = nodes;
                        for &(n, w) in &sources[..k] {
                            nodes.weight[n as usize - first] = w;
                        }
                        sources = &sources[k..];
                        file::encode_nodes(&mut self.payload, first, &nodes, 0..nodes.nodes());
                        file::emit(out, kind::NODES, &self.payload, &mut self.frame).map_err(out_error)?;
                        continue;
                    }
                }
                out.write_all(&head).map_err(out_error)?;
                out.write_all(&chunk).map_err(out_error)?;
            }
        }
        file::write_back(out, whole, self.made, self.arcs_made).map_err(out_error)?;
        Ok(self.spilled)
    }
}

/// Writes the PAG of the trace file `reader` reads (`streamed::trace_file`) to `out`
/// without keeping the graph, its
/// nodes and arcs spilled to `dir` on the way (and removed); gives back the graph's
/// definitions, contexts and notes with its size and clock violations (`Pag::partial`),
/// and the bytes spilled. `None`, with
/// nothing written, where the graph must be kept: processes sharing processors in CPU
/// mode (their arcs are weighed again at the end), a spawn (its arc is linked at the
/// end).
pub fn write_pag(
    reader: TraceReader,
    mode: Mode,
    dir: &Path,
    out: &mut dyn Write,
    feedback: &dyn Feedback,
) -> Result<Option<(Pag, u64)>> {
    if build::lengths_need_the_graph(reader.defs(), mode, false) {
        return Ok(None);
    }
    let spill = PagSpill::new(dir)?;
    let (whole, _, sieve) = build::build_sieved(reader, mode, &[], Sieve::Write(Box::new(spill)), feedback)?;
    // A spawn's arc needs the graph kept.
    let Sieve::Write(spill) = sieve else { return Ok(None) };
    let (nodes, arcs, clock) = (spill.made, spill.arcs_made, spill.clock.0);
    let spilled = spill.finish(&whole, out)?;
    let mut whole = whole;
    whole.partial = Some(Box::new(Partial { nodes, arcs, clock, ..Partial::default() }));
    Ok(Some((whole, spilled)))
}
