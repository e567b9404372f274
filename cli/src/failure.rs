//! How a failed command ends: the kind of its error (read off `annal::Error::kind`, never
//! re-matched here) sets the exit status and begins the MCP server's tool errors.
//!
//! Commands re-word the library's errors to name the store and the input line; [`said`] keeps
//! the kind with the new words, so re-wording never changes what a script sees in `$?`.

use annal::error::ErrorKind;

/// A line a command wrote for an error of the library, with that error's kind.
#[derive(Debug)]
pub(crate) struct Said {
    kind: ErrorKind,
    line: String,
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line)
    }
}

impl std::error::Error for Said {}

/// An error saying `line`, of kind `kind`.
pub(crate) fn said(kind: ErrorKind, line: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Said { kind, line: line.into() })
}

/// The kind of a command's error: the first kind found along its chain, from the library's
/// error or a re-wording of it; an I/O error the command met itself is [`ErrorKind::Io`] (or
/// [`ErrorKind::NotFound`], for a file that is not there). What
/// has none is a command refusing its own arguments (an empty range, a flag without its
/// value): bad input.
pub(crate) fn kind_of(err: &anyhow::Error) -> ErrorKind {
    err.chain()
        .find_map(|cause| {
            if let Some(err) = cause.downcast_ref::<annal::Error>() {
                Some(err.kind())
            } else if let Some(said) = cause.downcast_ref::<Said>() {
                Some(said.kind)
            } else {
                let io = cause.downcast_ref::<std::io::Error>()?;
                Some(if io.kind() == std::io::ErrorKind::NotFound {
                    ErrorKind::NotFound
                } else {
                    ErrorKind::Io
                })
            }
        })
        .unwrap_or(ErrorKind::BadInput)
}

/// The exit status of a command that failed with an error of `kind` (docs/errors.md lists
/// them). 2 is taken by the argument parser for a command line it cannot parse.
pub(crate) fn exit_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::BadInput => 1,
        ErrorKind::NotFound => 3,
        ErrorKind::Conflict => 4,
        ErrorKind::Busy => 5,
        ErrorKind::ReadOnly => 6,
        ErrorKind::Closed => 7,
        ErrorKind::Poisoned => 8,
        ErrorKind::Corrupted => 9,
        ErrorKind::Unsupported => 10,
        ErrorKind::Io => 11,
        ErrorKind::Internal => 12,
        ErrorKind::Forked => 13,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_status_and_none_is_the_parsers() {
        let codes: std::collections::BTreeSet<u8> = ErrorKind::ALL.iter().map(|&k| exit_code(k)).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        assert!(!codes.contains(&0) && !codes.contains(&2));
    }

    #[test]
    fn a_reworded_error_keeps_its_kind_and_a_bare_refusal_is_bad_input() {
        let reworded = said(ErrorKind::Conflict, "conflict: …").context("while appending");
        assert_eq!(kind_of(&reworded), ErrorKind::Conflict);
        let io = anyhow::Error::new(std::io::Error::other("disk")).context("cannot write x");
        assert_eq!(kind_of(&io), ErrorKind::Io);
        assert_eq!(kind_of(&anyhow::anyhow!("--limit must be at least 1")), ErrorKind::BadInput);
        let library =
            anyhow::Error::new(annal::Error::Read(annal::error::ReadError::UnknownSession("s".into())));
        assert_eq!(kind_of(&library), ErrorKind::NotFound);
    }
}
