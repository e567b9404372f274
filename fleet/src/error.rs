//! `FleetError`: what can go wrong between a store and a fleet's stream, each with its kind.

use annal_engine::{AppendError, ErrorKind, ForkError, ReadError};

/// Why a fleet operation failed. Server addresses in messages never carry credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// An option or URL that cannot be used.
    #[error("fleet: {0}")]
    BadOptions(String),
    /// No server of the list answered, or it refused the connection.
    #[error("fleet: cannot reach {servers}: {reason}")]
    Unreachable {
        /// The servers tried, credentials left out.
        servers: String,
        /// What the client said.
        reason: String,
    },
    /// The servers refused the credentials given (a wrong password, token, NKey or creds
    /// file, or a user without permission): no retry helps until they change.
    #[error("fleet: {servers} refused the credentials: {reason}")]
    Refused {
        /// The servers, credentials left out.
        servers: String,
        /// What the server said.
        reason: String,
    },
    /// A shared session's append could not reach the fleet: its records are stored, in the
    /// local fork `fork` of the session, which is published as a fork of it when the servers
    /// answer. Never merged into the session: the writer decides what to do.
    #[error(
        "fleet: session {session:?}: the servers could not be reached; {records} records went to fork {fork:?} (published as a fork when they answer)"
    )]
    Forked {
        /// The shared session.
        session: String,
        /// The local fork the records went to.
        fork: String,
        /// How many records went there.
        records: usize,
    },
    /// The stream or its object store could not be created, found or asked.
    #[error("fleet: stream {stream:?} on {servers}: {reason}")]
    Stream {
        /// The stream.
        stream: String,
        /// The servers, credentials left out.
        servers: String,
        /// What the server said.
        reason: String,
    },
    /// A publish was not acknowledged in time (no majority of replicas, or no leader).
    #[error("fleet: {servers} did not acknowledge {what} in time: {reason}")]
    NotAcknowledged {
        /// The servers, credentials left out.
        servers: String,
        /// What was being published.
        what: String,
        /// What the client said.
        reason: String,
    },
    /// An append without an expected position lost the race for the session's next position
    /// to other writers on every try until its timeout: nothing of it was written. Busy, not
    /// a conflict: the caller asked for no position, so there is nothing to read again;
    /// retrying later (or with a longer timeout) places it.
    #[error(
        "fleet: session {session:?}: other writers took the next position on each of {tries} tries in {timeout_ms} ms; nothing was written (try again)"
    )]
    Contended {
        /// The shared session.
        session: String,
        /// How many times it tried.
        tries: u32,
        /// The timeout it tried for.
        timeout_ms: u64,
    },
    /// A session's messages on the stream do not chain; nothing after the first bad one was
    /// applied to it.
    #[error("fleet: session {session:?} stopped at stream message {sequence}: {reason}")]
    Stopped {
        /// The session.
        session: String,
        /// The stream sequence of the message.
        sequence: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The store's host key cannot be read or made.
    #[error("fleet: host key {}: {reason}", path.display())]
    HostKey {
        /// The key's file.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A trusted key that cannot be added: the name or the key is not valid.
    #[error("fleet: trust: {0}")]
    BadTrust(String),
    /// No trusted key has this name.
    #[error("fleet: trust: no trusted key named {0:?}")]
    UnknownTrust(String),
    /// A session stopped by an earlier pass: the line that said why.
    #[error("{0}")]
    StoppedEarlier(String),
    /// Appending to the local store failed (a shared session's conflict is
    /// [`AppendError::Conflict`], as a local store gives it).
    #[error(transparent)]
    Append(#[from] AppendError),
    /// Forking in the local store failed.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// Reading the local store failed.
    #[error(transparent)]
    Read(#[from] ReadError),
}

impl FleetError {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FleetError::BadOptions(_) | FleetError::Refused { .. } | FleetError::BadTrust(_) => {
                ErrorKind::BadInput
            }
            FleetError::UnknownTrust(_) => ErrorKind::NotFound,
            FleetError::HostKey { .. } => ErrorKind::Io,
            FleetError::Forked { .. } => ErrorKind::Forked,
            FleetError::Unreachable { .. } | FleetError::Stream { .. } => ErrorKind::Io,
            FleetError::NotAcknowledged { .. } | FleetError::Contended { .. } => ErrorKind::Busy,
            FleetError::Stopped { .. } | FleetError::StoppedEarlier(_) => ErrorKind::Corrupted,
            FleetError::Append(err) => err.kind(),
            FleetError::Fork(err) => err.kind(),
            FleetError::Read(err) => err.kind(),
        }
    }
}
