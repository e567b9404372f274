//! The systems under exam behind one interface: annal's own projections (deterministic-v1 and
//! summarized-v1 with the shared stand-in summarizer) driven through the real engine, as a host
//! would drive them. The baselines implement the same trait in `baselines.rs`.

use std::io;
use std::sync::{Arc, Mutex};

use annal_engine::{
    Algorithm, Budget, CompactOptions, CompactStatus, ProjectOptions, Record, StorageFile, Store,
    StoreOptions,
};
use anyhow::Context as _;

use super::request::{from_messages, Request};
use super::summarizer::StandIn;

/// A context strategy: it is told every record and asked for every request.
pub trait Strategy {
    /// Appends one step's records (of turn `turn`).
    ///
    /// # Errors
    /// A store failure.
    fn append(&mut self, records: &[Record], turn: usize) -> anyhow::Result<()>;

    /// The next request, compacting first when the strategy's trigger fires; also whether it
    /// compacted.
    ///
    /// # Errors
    /// A store failure.
    fn request(&mut self) -> anyhow::Result<(Request, bool)>;

    /// The store holding the session, its name, and a folder for a search index, when the
    /// strategy has a store (for open-book search).
    fn store(&self) -> Option<(Arc<Store>, String, std::path::PathBuf)> {
        None
    }
}

/// The session name inside an exam store.
const SESSION: &str = "exam";

/// A store's bytes in memory: the exam measures what projections keep, not fsyncs, and a
/// session of thousands of appends would otherwise spend most of its time waiting on the disk.
#[derive(Debug, Default)]
struct MemoryFile(Mutex<Vec<u8>>);

impl MemoryFile {
    fn bytes(&self) -> io::Result<std::sync::MutexGuard<'_, Vec<u8>>> {
        self.0.lock().map_err(|_| io::Error::other("a writer panicked"))
    }
}

impl StorageFile for MemoryFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.bytes()?.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let bytes = self.bytes()?;
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        let source = bytes
            .get(start..start + out.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.bytes()?.resize(usize::try_from(len).map_err(io::Error::other)?, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = self.bytes()?;
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        if bytes.len() < start + data.len() {
            bytes.resize(start + data.len(), 0);
        }
        bytes[start..start + data.len()].copy_from_slice(data);
        Ok(())
    }
}

/// annal's projection of a session in a store of its own (in memory), compacted when
/// `compaction_due` says.
#[derive(Debug)]
pub struct Annal {
    store: Arc<Store>,
    // The search index's folder; kept so it outlives the index.
    dir: tempfile::TempDir,
    project: ProjectOptions,
    compact: CompactOptions,
}

impl Annal {
    /// A fresh store for `algorithm` under `budget` (summarized-v1 gets the stand-in summarizer).
    ///
    /// # Errors
    /// If the store cannot be created.
    pub fn open(algorithm: Algorithm, budget: Budget) -> anyhow::Result<Annal> {
        let dir =
            tempfile::Builder::new().prefix("annal-retention-").tempdir().context("a scratch folder")?;
        let store = Arc::new(Store::open_with_storage(MemoryFile::default(), StoreOptions::default())?);
        let project = ProjectOptions { budget, algorithm };
        let mut compact = CompactOptions::new(project);
        if algorithm == Algorithm::SummarizedV1 {
            compact.summarizer = Some(Arc::new(StandIn));
        }
        Ok(Annal { store, dir, project, compact })
    }

    fn render(&self) -> anyhow::Result<(Request, bool)> {
        let snapshot = self.store.projection_snapshot()?;
        let prepared = snapshot.prepare(SESSION, &self.project)?;
        let projection = prepared.render()?;
        Ok((from_messages(&projection.messages), projection.compaction_due))
    }
}

impl Strategy for Annal {
    fn append(&mut self, records: &[Record], _turn: usize) -> anyhow::Result<()> {
        self.store.append(SESSION, None, records.to_vec())?;
        Ok(())
    }

    fn request(&mut self) -> anyhow::Result<(Request, bool)> {
        let (request, due) = self.render()?;
        if !due {
            return Ok((request, false));
        }
        let outcome = self.store.compact(SESSION, &self.compact)?;
        let compacted = matches!(outcome.status, CompactStatus::Committed | CompactStatus::Reinstated);
        let (request, _) = self.render()?;
        Ok((request, compacted))
    }

    fn store(&self) -> Option<(Arc<Store>, String, std::path::PathBuf)> {
        Some((Arc::clone(&self.store), SESSION.to_owned(), self.dir.path().join("index")))
    }
}
