//! The store: one SQLite file (formats/exp.md), its schema and its migrations.

use crate::derive::Derived;
use crate::query::Query;
use crate::Error;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};
use std::path::Path;
use std::time::Duration;

/// The schema this build writes; older stores migrate forward to it.
pub const SCHEMA_VERSION: i64 = 2;

/// Each step takes a store from the version before it to its own (index + 1).
const MIGRATIONS: [&str; 2] = [
    // 1: runs, what the user and the trace say of them, and their flat metrics.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        trace TEXT NOT NULL,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        added TEXT NOT NULL,
        events INTEGER NOT NULL,
        elapsed_ns INTEGER NOT NULL
     );
     CREATE TABLE attrs (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        num REAL,
        source TEXT NOT NULL CHECK (source IN ('user', 'trace')),
        PRIMARY KEY (run, key)
     ) WITHOUT ROWID;
     CREATE INDEX attrs_by_key ON attrs (key, num, value);
     CREATE INDEX runs_by_hash ON runs (hash);
     CREATE TABLE resources (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        PRIMARY KEY (run, name)
     ) WITHOUT ROWID;
     CREATE TABLE metrics (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        focus TEXT NOT NULL,
        metric TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (run, focus, metric)
     ) WITHOUT ROWID;",
    // 2: the diagnosis: every node of the search and the bottlenecks it found.
    "CREATE TABLE shg (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        node INTEGER NOT NULL,
        hypothesis TEXT NOT NULL,
        focus TEXT NOT NULL,
        window TEXT NOT NULL,
        state TEXT NOT NULL,
        value REAL,
        threshold REAL NOT NULL,
        PRIMARY KEY (run, node)
     ) WITHOUT ROWID;
     CREATE TABLE findings (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL,
        hypothesis TEXT NOT NULL,
        focus TEXT NOT NULL,
        value REAL NOT NULL,
        amount_ns REAL NOT NULL,
        threshold REAL NOT NULL,
        PRIMARY KEY (run, rank)
     ) WITHOUT ROWID;",
];

/// An open store.
pub struct Store {
    conn: Connection,
    path: String,
}

/// One stored run, as lists show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Run {
    pub id: i64,
    pub trace: String,
    pub hash: String,
    pub size: i64,
    pub mtime_ns: i64,
    pub added: String,
    pub events: i64,
    pub elapsed_ns: i64,
    /// Attributes by key (the user's and the trace's).
    pub attrs: Vec<(String, String)>,
}

/// A node of a stored Search History Graph.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ShgRow {
    pub hypothesis: String,
    pub focus: String,
    pub window: String,
    pub state: String,
    pub value: Option<f64>,
    pub threshold: f64,
}

/// A stored bottleneck, most time first.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Finding {
    pub hypothesis: String,
    pub focus: String,
    pub value: f64,
    pub amount_ns: f64,
    pub threshold: f64,
}

/// How long a process waits for another's lock on the store.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

fn sql(path: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| Error::Store(format!("{path}: {e}"))
}

impl Store {
    /// Opens the store at `path`, creating it when missing. A file that is not a store,
    /// or a store of a newer schema, is an error that leaves the file as it was.
    pub fn open(path: &Path) -> Result<Store, Error> {
        let name = path.display().to_string();
        let exists = path.exists();
        if exists && path.is_dir() {
            return Err(Error::Store(format!("{name}: is a directory, expected a store (a SQLite file)")));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags).map_err(sql(&name))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql(&name))?;
        // Read before anything writes: a file that is not SQLite fails here, untouched.
        let not_store = |e: rusqlite::Error| Error::Store(format!("{name}: not a spoor-exp store: {e}"));
        let read_version =
            || conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0)).map_err(not_store);
        let mut version = read_version()?;
        if version == 0 && exists {
            let tables: i64 =
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).map_err(not_store)?;
            // Another process creating the store makes its tables and its version in one
            // transaction, which may have committed between the two reads: read again.
            version = if tables > 0 { read_version()? } else { 0 };
            if tables > 0 && version == 0 {
                return Err(Error::Store(format!(
                    "{name}: a SQLite database, but not a spoor-exp store (it has tables and no schema version)"
                )));
            }
        }
        if version > SCHEMA_VERSION {
            return Err(Error::Store(format!(
                "{name}: the store's schema is version {version}, newer than this spoor-exp's {SCHEMA_VERSION}; use a newer spoor"
            )));
        }
        let mut store = Store { conn, path: name };
        store.conn.pragma_update(None, "foreign_keys", "ON").map_err(sql(&store.path))?;
        if version < SCHEMA_VERSION {
            store.use_wal()?;
            store.migrate(SCHEMA_VERSION)?;
        }
        Ok(store)
    }

    /// Switches the file to WAL, which lets readers go on while one process adds (set
    /// once, it stays in the file). The switch needs the file to itself, and SQLite does
    /// not wait for that as it waits for locks elsewhere: processes creating one store
    /// at once got "database is locked". It is tried again while a lock would be waited for.
    fn use_wal(&self) -> Result<(), Error> {
        let start = std::time::Instant::now();
        loop {
            match self.conn.pragma_update(None, "journal_mode", "WAL") {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy && start.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                r => return r.map_err(sql(&self.path)),
            }
        }
    }

    /// Brings the schema up to `target`, one step a transaction (another process may be
    /// doing the same: each step re-reads the version inside its transaction).
    pub fn migrate(&mut self, target: i64) -> Result<(), Error> {
        let path = self.path.clone();
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sql(&path))?;
            let v: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql(&path))?;
            if v >= target {
                return Ok(());
            }
            tx.execute_batch(MIGRATIONS[v as usize]).map_err(sql(&path))?;
            tx.pragma_update(None, "user_version", v + 1).map_err(sql(&path))?;
            tx.commit().map_err(sql(&path))?;
        }
    }

    /// The store's schema version.
    pub fn version(&self) -> Result<i64, Error> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql(&self.path))
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The connection, for what the store has no method for (tests, benchmarks).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Records a run and everything derived from it in one transaction; its id.
    pub fn add(&mut self, d: &Derived, user_attrs: &[(String, String)], added: &str) -> Result<i64, Error> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql(&path))?;
        let id = insert(&tx, d, user_attrs, added).map_err(sql(&path))?;
        tx.commit().map_err(sql(&path))?;
        Ok(id)
    }

    /// Records several runs in one transaction (a store filled from elsewhere); their ids.
    pub fn add_all<'a>(
        &mut self,
        runs: impl IntoIterator<Item = (&'a Derived, &'a [(String, String)])>,
        added: &str,
    ) -> Result<Vec<i64>, Error> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql(&path))?;
        let mut ids = Vec::new();
        for (d, attrs) in runs {
            ids.push(insert(&tx, d, attrs, added).map_err(sql(&path))?);
        }
        tx.commit().map_err(sql(&path))?;
        Ok(ids)
    }

    /// Removes runs (and all that was derived from them); the ids that were not there.
    pub fn remove(&mut self, ids: &[i64]) -> Result<Vec<i64>, Error> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql(&path))?;
        let mut missing = Vec::new();
        for &id in ids {
            if tx.execute("DELETE FROM runs WHERE id = ?1", [id]).map_err(sql(&path))? == 0 {
                missing.push(id);
            }
        }
        tx.commit().map_err(sql(&path))?;
        Ok(missing)
    }

    /// The ids of the runs `q` selects (every run: `None`), in order.
    pub fn select(&self, q: Option<&Query>) -> Result<Vec<i64>, Error> {
        let (cond, values) = match q {
            Some(q) => q.to_sql(),
            None => ("1".to_owned(), Vec::new()),
        };
        let text = format!("SELECT id FROM runs WHERE {cond} ORDER BY id");
        let mut st = self.conn.prepare_cached(&text).map_err(sql(&self.path))?;
        let rows =
            st.query_map(rusqlite::params_from_iter(values.iter()), |r| r.get(0)).map_err(sql(&self.path))?;
        rows.collect::<Result<Vec<i64>, _>>().map_err(sql(&self.path))
    }

    /// A stored run whose trace had this content hash.
    pub fn run_with_hash(&self, hash: &str) -> Result<Option<i64>, Error> {
        self.conn
            .query_row("SELECT id FROM runs WHERE hash = ?1 ORDER BY id LIMIT 1", [hash], |r| r.get(0))
            .optional()
            .map_err(sql(&self.path))
    }

    /// One run, `None` when no run has that id.
    pub fn run(&self, id: i64) -> Result<Option<Run>, Error> {
        let p = &self.path;
        let run = self
            .conn
            .prepare_cached(
                "SELECT id, trace, hash, size, mtime_ns, added, events, elapsed_ns FROM runs WHERE id = ?1",
            )
            .map_err(sql(p))?
            .query_row([id], |r| {
                Ok(Run {
                    id: r.get(0)?,
                    trace: r.get(1)?,
                    hash: r.get(2)?,
                    size: r.get(3)?,
                    mtime_ns: r.get(4)?,
                    added: r.get(5)?,
                    events: r.get(6)?,
                    elapsed_ns: r.get(7)?,
                    attrs: Vec::new(),
                })
            })
            .optional()
            .map_err(sql(p))?;
        let Some(mut run) = run else { return Ok(None) };
        run.attrs = self.rows_of(id, "SELECT key, value FROM attrs WHERE run = ?1 ORDER BY key", |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(Some(run))
    }

    /// The rows `query` (whose one parameter is a run) gives for run `id`, each made by
    /// `row`.
    fn rows_of<T>(
        &self,
        id: i64,
        query: &str,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, Error> {
        let p = &self.path;
        let mut st = self.conn.prepare_cached(query).map_err(sql(p))?;
        let rows = st.query_map([id], row).map_err(sql(p))?;
        rows.collect::<Result<_, _>>().map_err(sql(p))
    }

    /// A run that must exist.
    pub fn expect_run(&self, id: i64) -> Result<Run, Error> {
        self.run(id)?.ok_or_else(|| Error::Usage(format!("{}: no run {id}", self.path)))
    }

    /// A run's resource names, sorted.
    pub fn resources(&self, id: i64) -> Result<Vec<String>, Error> {
        self.rows_of(id, "SELECT name FROM resources WHERE run = ?1 ORDER BY name", |r| r.get(0))
    }

    /// A run's metrics as (focus, metric, value), sorted.
    pub fn metrics(&self, id: i64) -> Result<Vec<(String, String, f64)>, Error> {
        let query = "SELECT focus, metric, value FROM metrics WHERE run = ?1 ORDER BY focus, metric";
        self.rows_of(id, query, |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
    }

    /// One metric of a run's focus.
    pub fn metric(&self, id: i64, focus: &str, metric: &str) -> Result<Option<f64>, Error> {
        let p = &self.path;
        self.conn
            .prepare_cached("SELECT value FROM metrics WHERE run = ?1 AND focus = ?2 AND metric = ?3")
            .map_err(sql(p))?
            .query_row(params![id, focus, metric], |r| r.get(0))
            .optional()
            .map_err(sql(p))
    }

    /// A run's Search History Graph.
    pub fn shg(&self, id: i64) -> Result<Vec<ShgRow>, Error> {
        let query =
            "SELECT hypothesis, focus, window, state, value, threshold FROM shg WHERE run = ?1 ORDER BY node";
        self.rows_of(id, query, |r| {
            Ok(ShgRow {
                hypothesis: r.get(0)?,
                focus: r.get(1)?,
                window: r.get(2)?,
                state: r.get(3)?,
                value: r.get(4)?,
                threshold: r.get(5)?,
            })
        })
    }

    /// A run's bottlenecks, most time first.
    pub fn findings(&self, id: i64) -> Result<Vec<Finding>, Error> {
        let query = "SELECT hypothesis, focus, value, amount_ns, threshold FROM findings WHERE run = ?1 ORDER BY rank";
        self.rows_of(id, query, |r| {
            Ok(Finding {
                hypothesis: r.get(0)?,
                focus: r.get(1)?,
                value: r.get(2)?,
                amount_ns: r.get(3)?,
                threshold: r.get(4)?,
            })
        })
    }
}

/// A value's number when it reads as one (for `procs >= 8`).
pub fn number(value: &str) -> Option<f64> {
    value.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

fn insert(
    tx: &Transaction,
    d: &Derived,
    user_attrs: &[(String, String)],
    added: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO runs (trace, hash, size, mtime_ns, added, events, elapsed_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![d.trace, d.hash, d.size as i64, d.mtime_ns, added, d.events as i64, d.elapsed_ns],
    )?;
    let id = tx.last_insert_rowid();
    {
        let mut st = tx.prepare_cached(
            "INSERT OR REPLACE INTO attrs (run, key, value, num, source) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        // The user's attributes win over the trace's of the same name.
        for (k, v) in &d.attrs {
            st.execute(params![id, k, v, number(v), "trace"])?;
        }
        for (k, v) in user_attrs {
            st.execute(params![id, k, v, number(v), "user"])?;
        }
        let mut st = tx.prepare_cached("INSERT OR IGNORE INTO resources (run, name) VALUES (?1, ?2)")?;
        for r in &d.resources {
            st.execute(params![id, r])?;
        }
        let mut st = tx.prepare_cached(
            "INSERT OR REPLACE INTO metrics (run, focus, metric, value) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (f, m, v) in &d.metrics {
            st.execute(params![id, f, m, v])?;
        }
        let mut st = tx.prepare_cached(
            "INSERT INTO shg (run, node, hypothesis, focus, window, state, value, threshold) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for (k, n) in d.shg.iter().enumerate() {
            st.execute(params![
                id,
                k as i64,
                n.hypothesis,
                n.focus,
                n.window,
                n.state,
                n.value,
                n.threshold
            ])?;
        }
        let mut st = tx.prepare_cached(
            "INSERT INTO findings (run, rank, hypothesis, focus, value, amount_ns, threshold) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (k, f) in d.findings.iter().enumerate() {
            st.execute(params![id, k as i64 + 1, f.hypothesis, f.focus, f.value, f.amount_ns, f.threshold])?;
        }
    }
    Ok(id)
}
