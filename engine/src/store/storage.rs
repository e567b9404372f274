//! Pluggable storage under the redb file: the seam where tests simulate crashes, full disks
//! and failing writes without naming redb types in the engine's public API.

use std::fmt::Debug;
use std::io;

/// Byte storage for a store, in place of a file. Implementations must make data written
/// before a successful `sync_data` survive a crash; anything after it may be lost.
pub trait StorageFile: Send + Sync + Debug + 'static {
    /// The current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether the storage is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Fills `out` from `offset`; reading past the end is an error.
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()>;
    /// Sets the length; new bytes read as zero.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes everything written so far durable.
    fn sync_data(&self) -> io::Result<()>;
    /// Writes `data` at `offset`.
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()>;
}

/// Adapts a [`StorageFile`] to redb. Lock methods keep redb's "unsupported" default, so a store
/// on custom storage is opened by one process only.
#[derive(Debug)]
pub(crate) struct Backend(pub(crate) Box<dyn StorageFile>);

impl redb::StorageBackend for Backend {
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.0.read(offset, out)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.0.write(offset, data)
    }
}
