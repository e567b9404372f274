"""Types of the extension module: the store, and the dicts its calls take and return (the
shapes ``annal ... --json`` prints; docs/format.md describes records in full)."""

import os
import pathlib
from types import TracebackType
from typing import Any, Dict, List, Literal, Optional, Tuple, Type, TypedDict, Union

__version__: str
GENERATION_MARK: str
SEAL_KEY: str

def generation_name(id: str, generation: int) -> str:
    """The annal session holding ``generation`` of the Agents SDK session ``id``: ``id``
    itself, then ``<id>~pop<N>``."""

Role = Literal["user", "assistant", "tool", "system"]

class Block(TypedDict, total=False):
    """One content part: ``type`` is text, thinking, toolCall, toolResult or blob."""

    type: str
    text: str
    callId: str
    tool: str
    input: Any
    inputText: str
    target: str
    isError: bool
    output: str
    mediaType: str
    data: str
    hash: str
    bytes: int

class Record(TypedDict, total=False):
    """A record in the portable format. To append, ``role`` is needed; ``entryId``,
    ``timestamp`` (RFC 3339), ``blocks`` and ``meta`` are optional, and ``sourceOrder``,
    ``hash`` and ``prevHash``, when given, are checked."""

    entryId: str
    role: Role
    timestamp: str
    blocks: List[Block]
    meta: Dict[str, Any]
    sourceOrder: int
    hash: str
    prevHash: str

class Receipt(TypedDict):
    sourceOrders: List[int]
    appended: int
    next: int

class SessionInfo(TypedDict):
    name: str
    records: int
    parent: Optional[str]
    forkAt: Optional[int]
    head: str

class Message(TypedDict):
    role: Role
    blocks: List[Block]

class Projection(TypedDict, total=False):
    """``messages`` for the next model request; ``stats`` (kept and omitted counts, tokens per
    part, ``source``, ``compactionDue``, ``budget``); ``omitted`` names every original left
    out; ``items`` (with ``responses_items=True``) holds the messages as Responses items."""

    algorithmVersion: str
    hash: str
    messages: List[Message]
    stats: Dict[str, Any]
    omitted: List[Dict[str, Any]]
    items: List[Dict[str, Any]]

class CompactOutcome(TypedDict):
    status: Literal["committed", "reused", "reinstated", "notNeeded"]
    key: Optional[str]
    upto: int
    requestedAlgorithm: str
    algorithmVersion: str
    fallbackReason: Optional[str]
    receipt: Optional[int]
    fencingToken: int
    projectionHash: str
    viewTokens: int
    stats: Dict[str, Any]

class Hit(TypedDict):
    session: str
    entryId: str
    blockIndex: int
    sourceOrder: int
    role: Role
    tool: Optional[str]
    score: float
    snippet: str
    highlights: List[Tuple[int, int]]
    type: str
    isError: bool
    timestamp: Optional[str]

class OriginalBlock(TypedDict, total=False):
    blockIndex: int
    type: str
    bytes: int
    tool: str
    callId: str
    target: str
    isError: bool
    text: str
    lines: Dict[str, int]
    mediaType: str
    blobHash: str

class Original(TypedDict):
    session: str
    entryId: str
    sourceOrder: int
    role: Role
    timestamp: Optional[str]
    blockCount: int
    blocks: List[OriginalBlock]

class Problem(TypedDict):
    session: str
    sourceOrder: Optional[int]
    detail: str

class VerifyReport(TypedDict):
    sessions: int
    records: int
    blobs: int
    ok: bool
    problems: List[Problem]

class ImportSummary(TypedDict):
    files: int
    formats: List[str]
    agents: List[str]
    sessions: List[str]
    recordsNew: int
    recordsPresent: int
    recordsElsewhere: int
    recordsRevised: int
    skipped: List[Dict[str, Any]]
    failed: List[Dict[str, str]]
    unrecognised: List[str]

class ExportSummary(TypedDict):
    records: int
    path: str

ERROR_KINDS: List[Tuple[str, str]]

class Store:
    """An annal store: an append-only journal of agent sessions, with projections under a
    token budget, compaction, full-text search over every original, forks, export and
    verification. Share one between threads; close it (or use ``with``) when done."""

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        sharing: Literal["processes", "exclusive"] = "processes",
        read_only: bool = False,
        index_eagerly: bool = True,
        search_wait_seconds: float = 30.0,
    ) -> None: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def closed(self) -> bool: ...
    def append(self, session: str, records: List[Record], *, expected_next: Optional[int] = None) -> Receipt:
        """Appends records to ``session`` (created if new) as one atomic batch, durable when it
        returns; with ``expected_next``, only if the session is at that position
        (:class:`annal.ConflictError` otherwise). Re-appending an entryId with the same content
        is a no-op. A blob block's ``data`` may be bytes rather than base64 text (the record then
        names its ``entryId``)."""
    def append_if_unchanged(
        self,
        session: str,
        records: List[Record],
        *,
        expected_next: int,
        expected: List[Tuple[str, Optional[int]]],
        meta_json: Optional[List[Optional[Dict[str, str]]]] = None,
    ) -> Optional[Receipt]:
        """:meth:`append` at ``expected_next`` when each session of ``expected`` still has the
        number of records given for it (None: still does not exist), checked inside the
        append's transaction; None, with nothing appended, when one changed: one call for a
        writer that keeps its own index of a group of sessions. ``meta_json``, one per record
        (or None), adds metadata values given as JSON text (the record then names its
        ``entryId``): text already in the store's canonical form (compact, keys sorted,
        ``ensure_ascii=False``) is taken without being parsed."""
    def lengths(self, names: List[str]) -> List[Optional[int]]:
        """The number of records of each session of ``names`` (None where there is none), read
        together."""
    def append_items(
        self, session: str, items: List[str], ids: List[str], *, expected_next: Optional[int] = None
    ) -> Receipt:
        """Appends OpenAI Responses-API items (each as JSON text), one record each under ``ids``,
        keeping each item's text so it reads back verbatim."""
    def items(self, session: str, start: int = 0, end: Optional[int] = None) -> List[Tuple[int, str]]:
        """The Responses items of records ``[start, end)``, as (sourceOrder, JSON text)."""
    def meta(self, session: str, source_order: int) -> Optional[Dict[str, Any]]:
        """The metadata of one record, or None when there is no record there."""
    def generation_head(self, id: str, generation: int) -> Tuple[str, int, int, Optional[int], bool]:
        """Where the Agents SDK session ``id`` stands from ``generation`` on (what
        ``AnnalSession.head`` reads, in one snapshot)."""
    def records(self, session: str, start: int = 0, end: Optional[int] = None) -> List[Record]:
        """The records of ``session`` in ``[start, end)``, in the portable format."""
    def session(self, name: str) -> Optional[SessionInfo]:
        """One session's facts, or None."""
    def sessions(self) -> List[SessionInfo]:
        """Every session, in name order."""
    def project(
        self,
        session: str,
        window: int = 200_000,
        max_output: int = 32_000,
        *,
        tail: Optional[int] = None,
        evidence: Optional[int] = None,
        history: Optional[int] = None,
        responses_items: bool = False,
    ) -> Projection:
        """The view of ``session`` for the next model request under the budget."""
    def compact(
        self,
        session: str,
        window: int = 200_000,
        max_output: int = 32_000,
        *,
        tail: Optional[int] = None,
        evidence: Optional[int] = None,
        history: Optional[int] = None,
        force: bool = False,
    ) -> CompactOutcome:
        """Commits a checkpoint so later views keep a stable prefix (``notNeeded`` when the
        view fits)."""
    def search(
        self,
        query: str,
        *,
        session: Optional[str] = None,
        role: Optional[Role] = None,
        tool: Optional[str] = None,
        errors_only: bool = False,
        literal: bool = False,
        limit: int = 10,
        start: Optional[int] = None,
        end: Optional[int] = None,
    ) -> List[Hit]:
        """Searches every original, best first, once all appended before the call is indexed
        (``limit`` at most 10,000)."""
    def get(self, id: str, lines: Optional[Tuple[int, int]] = None) -> Original:
        """The original named ``id`` (``entryId`` or ``entryId#block``), verbatim."""
    def fork(self, session: str, at: int, new_name: str) -> SessionInfo:
        """Forks ``session`` at ``at`` into ``new_name``, sharing records ``[0, at)``."""
    def export(
        self,
        session: str,
        path: Optional[Union[str, "os.PathLike[str]"]] = None,
        *,
        format: Literal["jsonl", "markdown"] = "jsonl",
        redact: bool = False,
    ) -> Union[str, ExportSummary]:
        """``session`` as annal JSONL or Markdown: the text, or written to ``path``."""
    def import_(self, data: Union[bytes, bytearray, str], name: str, *, format: Optional[str] = None) -> ImportSummary:
        """Imports a transcript given as bytes or text, in ``format`` or the one detected."""
    def import_paths(
        self, paths: List[Union[str, "os.PathLike[str]"]], *, format: Optional[str] = None
    ) -> ImportSummary:
        """Imports transcript files, and every transcript file under each folder given."""
    def verify(self, session: Optional[str] = None) -> VerifyReport:
        """Recomputes every content hash and chain."""
    def close(self) -> bool:
        """Commits what the index has pending and closes the store."""
    def __enter__(self) -> "Store": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

class Fleet:
    """A connection to a NATS JetStream fleet (docs/replication.md)."""

    def __init__(
        self,
        urls: str,
        *,
        stream: Optional[str] = None,
        prefix: Optional[str] = None,
        replicas: int = 3,
        timeout_seconds: float = 10.0,
    ) -> None: ...
    def publish(self, store: Store, *, sessions: Optional[str] = None) -> Dict[str, Any]: ...
    def follow(self, store: Store, *, sessions: Optional[str] = None) -> Dict[str, Any]: ...
    def refresh(self, store: Store, session: str) -> int: ...
    def append(
        self, store: Store, session: str, records: List[Record], *, expected_next: Optional[int] = None
    ) -> Receipt: ...
    def append_items(
        self, store: Store, session: str, items: List[str], ids: List[str], *, expected_next: Optional[int] = None
    ) -> Receipt: ...
    def status(self, store: Store, *, sessions: Optional[str] = None) -> List[Dict[str, Any]]: ...
