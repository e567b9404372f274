//! One sync pass: for each agent chosen, discover its units, read those whose cursor says they
//! changed, store their records (idempotently, by entryId), then keep the new cursors.
//!
//! Nothing a source does stops the pass: a missing agent is reported as not found, a unit that
//! cannot be read is reported and read again next time (its cursor is not advanced), and a
//! deleted source file leaves what was captured from it in the store. Only the store itself
//! failing (a poisoned or closed store) ends the pass with an error.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use annal_engine::{AppendError, ForkError, ReadError, Store};
use annal_formats::TranscriptFormat;
use annal_formats::{load_session, LoadError};

use crate::cursor::{cursor_name, Cursor, CURSOR_PREFIX, PROJECT_PREFIX};
use crate::discover::{discover, Unit, UnitKind};
use crate::read::{read, NotRead, Reading};
use annal_formats::Agent;
use annal_formats::Environment;

/// What a sync pass reads.
#[derive(Clone, Debug, Default)]
pub struct SyncOptions {
    /// The agents to read; empty reads every one.
    pub agents: Vec<Agent>,
    /// Where agents keep their files.
    pub environment: Environment,
    /// Project folders to search for per-project sessions (aider, Crush), added to those
    /// earlier syncs were given; the store remembers them.
    pub projects: Vec<PathBuf>,
}

/// What a sync pass did, per agent.
#[derive(Clone, Debug, Default)]
pub struct SyncReport {
    /// One report per agent read, in [`Agent::ALL`] order.
    pub sources: Vec<SourceReport>,
    /// How long the pass took.
    pub elapsed_ms: u64,
}

/// What a sync pass did for one agent.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SourceReport {
    /// The agent.
    pub agent: Agent,
    /// Where it was looked for.
    pub looked_in: Vec<PathBuf>,
    /// Those of them that exist: empty when the agent is not installed.
    pub locations: Vec<PathBuf>,
    /// When no location exists: the agent's own folder ([`Agent::homes`]) if that exists, so
    /// an agent that is installed but whose sessions were not found is told apart from one
    /// that is not installed.
    pub installed: Option<PathBuf>,
    /// Files, folders and databases found.
    pub units: u64,
    /// Sessions found that annal cannot read, of an agent whose format is closed to it
    /// ([`Agent::not_readable`] says why).
    pub not_readable: u64,
    /// Those read this time (the others had not changed).
    pub units_read: u64,
    /// Databases read while still being written: read again at the next pass, which a watch
    /// runs within a few seconds.
    pub units_unsettled: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Sessions with new records.
    pub sessions_changed: u64,
    /// Records stored now.
    pub records_new: u64,
    /// Records read again that were already stored.
    pub records_present: u64,
    /// Records the agent changed after they were stored, kept as revisions.
    pub records_revised: u64,
    /// Parts that could not be read (a line, a row), one line each.
    pub skipped: Vec<String>,
    /// Units that could not be read or stored, one line each; they are read again next time.
    pub problems: Vec<String>,
}

impl SourceReport {
    fn new(agent: Agent, looked_in: Vec<PathBuf>) -> SourceReport {
        SourceReport {
            agent,
            looked_in,
            locations: Vec::new(),
            installed: None,
            units: 0,
            not_readable: 0,
            units_read: 0,
            units_unsettled: 0,
            bytes_read: 0,
            sessions_changed: 0,
            records_new: 0,
            records_present: 0,
            records_revised: 0,
            skipped: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Whether the agent's sessions were found here.
    pub fn found(&self) -> bool {
        !self.locations.is_empty()
    }
}

/// The store failed during a sync: nothing more could be stored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The store stopped taking writes.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// Reading the store failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Making a Codex fork an annal fork of its parent failed.
    #[error(transparent)]
    Fork(#[from] ForkError),
}

impl SyncError {
    /// What kind of failure this is.
    pub fn kind(&self) -> annal_engine::ErrorKind {
        match self {
            SyncError::Append(err) => err.kind(),
            SyncError::Read(err) => err.kind(),
            SyncError::Fork(err) => err.kind(),
        }
    }
}

/// The project folders the store remembers.
fn remembered_projects(store: &Store) -> Result<Vec<PathBuf>, SyncError> {
    let names = store.cursors(PROJECT_PREFIX)?.into_iter().map(|(name, _)| name);
    Ok(names.map(|name| PathBuf::from(&name[PROJECT_PREFIX.len()..])).collect())
}

/// The project folders the store remembers, with `adding` remembered from now on.
pub fn projects(store: &Store, adding: &[PathBuf]) -> Result<Vec<PathBuf>, SyncError> {
    let mut known: BTreeSet<PathBuf> = remembered_projects(store)?.into_iter().collect();
    let new: Vec<_> = adding
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .filter(|p| !known.contains(p))
        .collect();
    if !new.is_empty() && !store.is_read_only() {
        let rows =
            new.iter().map(|p| (format!("{PROJECT_PREFIX}{}", p.display()), Some(Vec::new()))).collect();
        store.put_cursors(rows)?;
    }
    known.extend(new);
    Ok(known.into_iter().collect())
}

/// Runs one sync pass into `store`.
///
/// # Errors
/// [`SyncError`] when the store fails; everything a source does is in the report.
pub fn sync(store: &Store, options: &SyncOptions) -> Result<SyncReport, SyncError> {
    let started = Instant::now();
    let projects = projects(store, &options.projects)?;
    let cursors: BTreeMap<String, Cursor> = store
        .cursors(CURSOR_PREFIX)?
        .into_iter()
        .filter_map(|(name, bytes)| Cursor::decode(&bytes).map(|c| (name, c)))
        .collect();
    let agents = if options.agents.is_empty() { Agent::ALL.to_vec() } else { options.agents.clone() };
    let mut report = SyncReport::default();
    for agent in Agent::ALL.into_iter().filter(|a| agents.contains(a)) {
        let looked_in = agent.locations(&options.environment, &projects);
        let mut source = SourceReport::new(agent, looked_in);
        sync_agent(store, &cursors, &mut source)?;
        source.installed = installed(&source, &options.environment);
        report.sources.push(source);
    }
    report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

/// What a sync would read, without reading it: each chosen agent's locations and units.
///
/// # Errors
/// [`SyncError`] when the store's remembered project folders cannot be read.
pub fn survey(store: &Store, options: &SyncOptions) -> Result<Vec<SourceReport>, SyncError> {
    // Looking writes nothing: the folders given are searched, not remembered.
    let mut projects = remembered_projects(store)?;
    projects.extend(options.projects.iter().cloned());
    let chosen = |agent: &Agent| options.agents.is_empty() || options.agents.contains(agent);
    let mut out = Vec::new();
    for agent in Agent::ALL.into_iter().filter(chosen) {
        let mut source = SourceReport::new(agent, agent.locations(&options.environment, &projects));
        let found = discover(agent, &source.looked_in);
        source.locations = found.locations;
        source.units = found.units.len() as u64;
        source.not_readable = found.not_readable;
        source.not_readable = found.not_readable;
        source.problems.extend(found.problems.iter().map(ToString::to_string));
        source.installed = installed(&source, &options.environment);
        out.push(source);
    }
    Ok(out)
}

/// The agent's own folder, when none of its session locations exists but that folder does.
fn installed(source: &SourceReport, env: &annal_formats::Environment) -> Option<PathBuf> {
    if source.found() {
        return None;
    }
    source.agent.homes(env).into_iter().find(|home| std::fs::symlink_metadata(home).is_ok())
}

fn sync_agent(
    store: &Store,
    cursors: &BTreeMap<String, Cursor>,
    source: &mut SourceReport,
) -> Result<(), SyncError> {
    let found = discover(source.agent, &source.looked_in);
    source.locations = found.locations;
    source.units = found.units.len() as u64;
    source.not_readable = found.not_readable;
    source.problems.extend(found.problems.iter().map(ToString::to_string));
    let mut updates = Vec::new();
    let mut names = BTreeSet::new();
    // A session may span many units (an OpenHands conversation's event files): counted once.
    let mut changed = BTreeSet::new();
    for unit in &found.units {
        let name = cursor_name(unit);
        names.insert(name.clone());
        match read(unit, cursors.get(&name).copied()) {
            Err(NotRead::Unchanged | NotRead::Gone) => {}
            Err(NotRead::Refused(refused)) => {
                let (err, cursor) = *refused;
                // Reported once: read again only when it changes.
                source.problems.push(err.to_string());
                updates.push((name, Some(cursor.encode())));
            }
            Err(NotRead::Failed(err)) => source.problems.push(err.to_string()),
            Ok(reading) => {
                source.units_read += 1;
                source.units_unsettled += u64::from(reading.unsettled);
                source.bytes_read += reading.bytes;
                let cursor = reading.cursor;
                if store_reading(store, unit, reading, source, &mut changed)? {
                    updates.push((name, Some(cursor.encode())));
                }
            }
        }
    }
    // A unit that is gone keeps what was captured from it; only its cursor goes.
    let prefix = format!("{CURSOR_PREFIX}{}:", source.agent.name());
    for name in cursors.keys().filter(|name| name.starts_with(&prefix) && !names.contains(*name)) {
        let path = PathBuf::from(&name[prefix.len()..]);
        if matches!(std::fs::symlink_metadata(&path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            updates.push((name.clone(), None));
        }
    }
    match store.put_cursors(updates) {
        // Another process holds the store: the cursors wait for the next pass (what was read
        // is stored, and reading it again stores nothing).
        Err(AppendError::Busy { waited }) => {
            source
                .problems
                .push(format!("the store was busy for {waited:?}; cursors are kept at the next sync"));
            Ok(())
        }
        other => Ok(other?),
    }
}

/// Stores a reading's sessions; whether all of them were stored (only then does the cursor
/// advance). A session the store refuses is reported; a store that stops writes ends the pass.
fn store_reading(
    store: &Store,
    unit: &Unit,
    reading: Reading,
    source: &mut SourceReport,
    changed: &mut BTreeSet<String>,
) -> Result<bool, SyncError> {
    source.skipped.extend(reading.skipped);
    let mut complete = true;
    for mut session in reading.sessions {
        if unit.kind == UnitKind::Transcript(TranscriptFormat::Codex) {
            match crate::codex_fork::attach(store, &mut session) {
                Err(SyncError::Fork(ForkError::Busy { waited })) => {
                    source
                        .problems
                        .push(format!("{}: the store was busy for {waited:?}", unit.path.display()));
                    complete = false;
                    continue;
                }
                other => other?,
            }
        }
        let name = session.name.clone();
        match load_session(store, session) {
            Ok(load) => {
                source.records_new += load.appended;
                source.records_present += load.present + load.elsewhere;
                source.records_revised += load.revised;
                if load.appended > 0 && changed.insert(name) {
                    source.sessions_changed += 1;
                }
            }
            Err(LoadError::Append { error, .. }) if stops_writes(&error) => return Err(error.into()),
            // The load's errors name the session.
            Err(err) => {
                complete = false;
                source.problems.push(format!("{}: {err}", unit.path.display()));
            }
        }
    }
    Ok(complete)
}

fn stops_writes(err: &AppendError) -> bool {
    matches!(
        err,
        AppendError::Poisoned | AppendError::Closed | AppendError::ReadOnly | AppendError::Io { .. }
    )
}
