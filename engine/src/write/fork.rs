//! A fork applied inside the group's transaction: a new session row pointing at its parent and
//! fork point, O(1) in the parent's size; no record is copied.

use crate::apply::Decide;
use crate::error::{Failure, ForkError};
use crate::hash::ZERO_HASH;
use crate::read::SessionInfo;
use crate::tables::SessionRow;

/// Forks, for any tables appends are decided against.
pub(crate) trait Fork: Decide {
    /// Applies one fork: a new session row pointing at the parent, O(1) in the parent's size.
    fn fork(&mut self, parent: &str, at: u64, name: &str) -> Result<Result<SessionInfo, ForkError>, Failure> {
        let Some(parent_row) = self.row_by_name(parent)? else {
            return Ok(Err(ForkError::UnknownSession(parent.to_owned())));
        };
        if at > parent_row.next {
            return Ok(Err(ForkError::OutOfRange { session: parent.to_owned(), at, len: parent_row.next }));
        }
        if self.row_by_name(name)?.is_some() {
            return Ok(Err(ForkError::NameTaken(name.to_owned())));
        }
        let head = if at == 0 {
            ZERO_HASH
        } else if at == parent_row.next {
            parent_row.head
        } else {
            let lineage = self.lineage(&parent_row)?;
            self.hashes_at(&lineage, at - 1)?.0
        };
        let key = self.allocate_session_key()?;
        let row = SessionRow { key, parent: parent_row.key, fork_at: at, next: at, head };
        self.name_session(key, name)?;
        self.put_row(name, &row)?;
        Ok(Ok(SessionInfo {
            name: name.to_owned(),
            parent: Some(parent.to_owned()),
            fork_at: Some(at),
            len: at,
            head,
        }))
    }
}

impl<T: Decide + ?Sized> Fork for T {}
