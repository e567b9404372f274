"""What annal raises: one class per kind of failure, each with the one-line message the
``annal`` command prints for the same failure (without its ``annal:`` prefix).

Every exception derives from :class:`AnnalError`. Bad input is also a :class:`ValueError`, a
missing session or entry also a :class:`LookupError`, so code that catches the built-in kinds
keeps working. A failed call stores nothing of what it was given, and loses nothing stored.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "AnnalError",
    "BadInputError",
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptedError",
    "NotFoundError",
    "PoisonedError",
    "ReadOnlyError",
    "StorageIoError",
    "UnsupportedError",
    "InternalError",
    "ForkedError",
]


class AnnalError(Exception):
    """A call on a store failed; the base of every annal exception. Each subclass is one kind
    of failure, the same kind that sets the ``annal`` command's exit status."""


class ConflictError(AnnalError):
    """An append named the position it expected the session to be at (``expected_next``), and
    another writer got there first: nothing was appended. ``expected`` and ``actual`` are the
    two positions; read the session again and retry."""

    def __init__(self, message: str, expected: Optional[int] = None, actual: Optional[int] = None):
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class CorruptedError(AnnalError):
    """Stored bytes failed their hash, checksum or validation. Nothing damaged is ever returned
    as if it were the original; ``Store.verify()`` lists what is damaged."""


class PoisonedError(AnnalError):
    """An earlier I/O error on the write path stopped writes: close the store, open it again,
    and retry. Nothing acknowledged was lost."""


class NotFoundError(AnnalError, LookupError):
    """No session, entry or block by that name or id."""


class BadInputError(AnnalError, ValueError):
    """What was given cannot be stored or asked: a malformed record, a name in use, a budget
    too small, a query that does not parse, bytes in no known transcript format."""


class BusyError(AnnalError):
    """Another process held the store's write lock (or a compaction claim) for too long."""


class ClosedError(AnnalError):
    """The store was closed."""


class ReadOnlyError(AnnalError):
    """The store cannot be written by this handle: it was opened read-only, or its file or file
    system is read-only."""


class UnsupportedError(AnnalError):
    """The file is of a format or version this build does not read (a store written by a newer
    annal, say): upgrade annal."""


class StorageIoError(AnnalError, OSError):
    """The operating system refused: a file could not be read, written or synced. Also an
    :class:`OSError`."""


class ForkedError(AnnalError):
    """An append to a session shared through a fleet could not reach the servers: its records
    are stored in a named fork of the session (the message names it), not in the session, and
    are published as that fork when the servers answer."""


class InternalError(AnnalError):
    """A failure inside annal or a library it uses that fits no other class: a bug to report."""
