//! Capturing every session the machine's agents write: [`Annal::sync`] reads each agent's
//! default locations (and the project folders given) and stores what is new since the last
//! sync, by the cursors it keeps in the store.

pub use annal_sources::{may_hold_sessions, Agent, Environment, SourceReport, SyncOptions, SyncReport};

use crate::{Annal, Error};

impl Annal {
    /// Reads what the chosen agents wrote since the last sync into the store.
    ///
    /// A missing agent is reported as not found, a file or database that cannot be read is
    /// reported and read again next time, and nothing a source does is fatal; see
    /// [`SyncReport`]. Records already stored are never stored twice.
    ///
    /// # Errors
    /// [`Error::Sync`] when the store itself fails (it stopped writes, say).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let home = tempfile::tempdir()?;
    /// use annal::sync::{Agent, Environment, SyncOptions};
    /// let chats = home.path().join(".codex/sessions/2026/01/02");
    /// std::fs::create_dir_all(&chats)?;
    /// std::fs::write(
    ///     chats.join("rollout-2026-01-02T10-00-00-abc.jsonl"),
    ///     "{\"timestamp\":\"2026-01-02T10:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"abc\"}}\n",
    /// )?;
    /// let annal = annal::Annal::open(home.path().join("annal.redb"))?;
    /// let options = SyncOptions {
    ///     agents: vec![Agent::Codex],
    ///     environment: Environment::with_home(home.path()),
    ///     ..SyncOptions::default()
    /// };
    /// let report = annal.sync(&options)?;
    /// assert_eq!((report.sources[0].units, report.sources[0].records_new), (1, 1));
    /// # Ok(()) }
    /// ```
    pub fn sync(&self, options: &SyncOptions) -> Result<SyncReport, Error> {
        Ok(annal_sources::sync(&self.store, options)?)
    }

    /// What [`Annal::sync`] would read, without reading it: each agent's locations and how many
    /// files and databases they hold.
    ///
    /// # Errors
    /// [`Error::Sync`] when the store cannot be read.
    pub fn survey(&self, options: &SyncOptions) -> Result<Vec<SourceReport>, Error> {
        Ok(annal_sources::survey(&self.store, options)?)
    }
}
