"""One LangGraph thread as annal keeps it: the names of its annal sessions (its generations), the
records a checkpointer appends to them, and :class:`ThreadLog`, the index of a thread's live
checkpoints, channel values and pending writes built by reading those records in order.

A thread lives in the annal sessions ``langgraph:<thread_id>`` (generation 0) and
``langgraph:<thread_id>~g<N>``. A generation is made by forking one before it: at a checkpoint
when a second child of it is put (time travel: ``update_state`` on an earlier checkpoint, a
replay from it), so each branch of the thread is one annal session that shares the records
before the branch point by reference; or at 0 when the thread is deleted. Every record carries
its part in ``meta["langgraph"]``: a checkpoint (with the values of the channel versions new at
it), a task's writes, a drop receipt (checkpoints ``delete_for_runs`` or ``prune`` removed) or
a delete receipt (everything before it in the thread removed). Nothing is rewritten."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

META_KEY = "langgraph"
"""The metadata key of every record a checkpointer appends."""

SESSION_PREFIX = "langgraph:"
"""What every thread's session name starts with."""

GENERATION_MARK = "~g"
"""What separates a thread's session name from the number of a later generation."""

MESSAGE_KEYS_KEPT = 8
"""How many checkpoints' messages a thread's log remembers (:meth:`ThreadLog.remember_messages`)."""

Typed = Tuple[str, bytes]
"""A value as a serializer's ``dumps_typed`` gives it: (type, bytes)."""


Made = Tuple[Dict[str, Any], Optional[Dict[str, Any]], Optional[List[Typed]]]
"""A record to append as the saver makes it: (record, part, typed), the record without its
metadata when the part is given, the part's values as serialized when known."""


def typed_bytes(value: Typed) -> Typed:
    """A serializer's (type, bytes) with its bytes as ``bytes``, as reading them back gives."""
    return value if type(value[1]) is bytes else (value[0], bytes(value[1]))


def thread_session(thread_id: str, generation: int = 0) -> str:
    """The annal session holding ``generation`` of the thread ``thread_id``. ``%`` and ``~`` in
    the id are escaped, so no thread's name is another's generation."""
    escaped = str(thread_id).replace("%", "%25").replace("~", "%7E")
    name = SESSION_PREFIX + escaped
    return name if generation == 0 else f"{name}{GENERATION_MARK}{generation}"


def thread_of_session(name: str) -> Optional[str]:
    """The thread id whose generation 0 is the session ``name``; None for any other name."""
    if not name.startswith(SESSION_PREFIX) or GENERATION_MARK in name:
        return None
    return name[len(SESSION_PREFIX) :].replace("%7E", "~").replace("%25", "%")


_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")).encode
_quote = json.encoder.encode_basestring
"""A string as a JSON string literal, escaped as the store writes it (other characters as they
are)."""


def _scalar(value: Any) -> str:
    return _quote(value) if type(value) is str else _encode(value)


def _packed(packed: List[Any]) -> str:
    # Base64 text needs no escape: written in as it is, not read character by character.
    if len(packed) == 3:
        return f"[{_quote(packed[0])},null,{packed[2]:d}]"
    return f'[{_quote(packed[0])},"{packed[1]}"]'


def part_json(part: Dict[str, Any]) -> str:
    """A record's part as JSON text in the form the store keeps metadata in (compact, keys in
    order, strings as they are), which the store takes without parsing it. A checkpoint's and a
    writes part are written field by field, their packed values (base64 text, up to 16 KiB
    each) put in as they are. (A number with a fraction is written by Python as the store would
    not; the store then parses the text and keeps its own.)"""
    kind = part.get("kind")
    if kind == "checkpoint" and len(part) == 7:
        values = ",".join(f"[{_scalar(c)},{_scalar(v)},{_packed(p)}]" for c, v, p in part["values"])
        return (
            f'{{"checkpoint":{_packed(part["checkpoint"])},"id":{_scalar(part["id"])},"kind":"checkpoint",'
            f'"metadata":{_packed(part["metadata"])},"ns":{_scalar(part["ns"])},'
            f'"parent":{_scalar(part["parent"])},"values":[{values}]}}'
        )
    if kind == "writes" and len(part) == 6:
        writes = ",".join(f"[{_scalar(i)},{_scalar(c)},{_packed(p)}]" for i, c, p in part["writes"])
        return (
            f'{{"checkpoint":{_scalar(part["checkpoint"])},"kind":"writes","ns":{_scalar(part["ns"])},'
            f'"path":{_scalar(part["path"])},"task":{_scalar(part["task"])},"writes":[{writes}]}}'
        )
    return _encode(part)


def pack(typed: Typed) -> List[str]:
    """A typed value as JSON: [type, base64 of the bytes]."""
    return [typed[0], base64.b64encode(typed[1]).decode("ascii")]


BLOB_BYTES = 16 * 1024
"""Values longer than this go to the store's blob table (stored once by their hash, however many
checkpoints hold them); shorter ones stay in their record's metadata."""


def pack_value(typed: Typed, blocks: List[Dict[str, Any]]) -> List[Any]:
    """A channel value as its checkpoint record keeps it: inline as :func:`pack` makes it, or,
    when longer than :data:`BLOB_BYTES`, as a blob block added to ``blocks`` and named by its
    index: [type, None, index]."""
    if len(typed[1]) <= BLOB_BYTES:
        return pack(typed)
    # The bytes as they are: the store takes a blob's data as bytes (and hands it back as base64).
    blocks.append({"type": "blob", "mediaType": "application/octet-stream", "data": bytes(typed[1])})
    return [typed[0], None, len(blocks) - 1]


def unpack(packed: List[Any], blocks: Sequence[Dict[str, Any]] = ()) -> Typed:
    """The typed value :func:`pack` or :func:`pack_value` made."""
    if len(packed) == 3:
        data = blocks[packed[2]]["data"]
        return packed[0], data if isinstance(data, bytes) else base64.b64decode(data)
    return packed[0], base64.b64decode(packed[1])


@dataclass
class Checkpoint:
    """One checkpoint as stored: where its record is, and what it holds (still serialized)."""

    ns: str
    id: str
    parent: Optional[str]
    checkpoint: Typed
    metadata: Typed
    generation: int
    position: int
    values: List[Tuple[str, Any]] = field(default_factory=list)
    """The (channel, version) pairs whose values this checkpoint's record holds."""


@dataclass
class Generation:
    """One annal session of the thread: its name, what it forks, and how far it was read."""

    name: str
    parent: Optional[int]
    fork_at: int
    read: int


class ThreadLog:
    """The live state of one thread, read from its generations' records in order."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.generations: List[Generation] = []
        self.checkpoints: Dict[Tuple[str, str], Checkpoint] = {}
        self.children: Dict[Tuple[str, str], List[Tuple[int, int]]] = {}
        self.blobs: Dict[Tuple[str, str, Any], Tuple[int, Typed]] = {}
        self.writes: Dict[Tuple[str, str], Dict[Tuple[str, int], Tuple[str, str, Typed, str]]] = {}
        self.dropped: set = set()
        self.floor = -1
        """The newest generation ending in a delete receipt: it and those before it are dead."""
        self.message_keys: Dict[Tuple[str, str], Any] = {}
        """Per checkpoint, the messages its state holds (a ``Seen``; a cache of the
        newest :data:`MESSAGE_KEYS_KEPT`, see :meth:`remember_messages`)."""
        self._latest: Optional[Dict[str, Checkpoint]] = {}
        """Per namespace, the live checkpoint of the greatest id; None when a removal made it
        stale."""

    def remember_messages(self, ns: str, checkpoint_id: str, known: Any) -> None:
        """Keeps what a checkpoint's messages are, for its children's puts. Only the newest
        few are kept: a graph puts the child of a checkpoint it just put, and each entry holds
        a tuple per message, so keeping every checkpoint's would hold the square of the
        conversation's length and make the interpreter's cycle collector walk it all again
        and again. An older parent's (time travel) is read back from its stored value."""
        self.message_keys[(ns, checkpoint_id)] = known
        if len(self.message_keys) > MESSAGE_KEYS_KEPT:
            del self.message_keys[next(iter(self.message_keys))]

    # Reading.

    def refresh(self, store: Any) -> None:
        """Reads what was appended since the last refresh, in this process or another: the
        length of every generation and whether a next one exists, in one call, then the records
        of those that grew."""
        lengths = store.lengths([name for name, _ in self.expected()])
        for index, (generation, length) in enumerate(zip(self.generations, lengths)):
            self._read(store, index, generation, length or 0)
        if lengths[-1] is None:
            return
        while True:
            name = thread_session(self.thread_id, len(self.generations))
            info = store.session(name)
            if info is None:
                return
            parent = self._index_of(info["parent"])
            generation = Generation(name, parent, info["forkAt"] or 0, info["forkAt"] or 0)
            self.generations.append(generation)
            self._read(store, len(self.generations) - 1, generation, info["records"])

    def expected(self) -> List[Tuple[str, Optional[int]]]:
        """Each generation's session with the length read of it, and the next generation's
        name with None (not made yet): what an append checks is still so."""
        names = [(generation.name, generation.read) for generation in self.generations]
        return names + [(thread_session(self.thread_id, len(self.generations)), None)]

    def _index_of(self, name: Optional[str]) -> Optional[int]:
        for index, generation in enumerate(self.generations):
            if generation.name == name:
                return index
        return None

    def _read(self, store: Any, index: int, generation: Generation, length: int) -> None:
        if length <= generation.read:
            return
        for record in store.records(generation.name, generation.read, length):
            part = record.get("meta", {}).get(META_KEY)
            self.apply(index, record["sourceOrder"], part, record.get("blocks", ()))
        generation.read = length

    def apply(
        self,
        generation: int,
        position: int,
        part: Optional[Dict[str, Any]],
        blocks: Sequence[Dict[str, Any]] = (),
        typed: Optional[Sequence[Typed]] = None,
    ) -> None:
        """Takes one record's part (and its blocks, which hold its large values) into the index;
        records of other kinds are passed over. ``typed``, from the writer of the part, holds its
        values as they were before packing (a checkpoint's own, its metadata, then its channel
        values; a task's writes), so they are not decoded again."""
        if not isinstance(part, dict) or generation <= self.floor:
            return
        kind = part.get("kind")
        if kind == "checkpoint":
            self._apply_checkpoint(generation, position, part, blocks, typed)
        elif kind == "writes":
            self._apply_writes(part, typed)
        elif kind == "drop":
            for ns, checkpoint_id in part["checkpoints"]:
                self._drop(ns, checkpoint_id)
        elif kind == "delete":
            self._delete(generation)

    def _apply_checkpoint(
        self,
        generation: int,
        position: int,
        part: Dict[str, Any],
        blocks: Sequence[Dict[str, Any]],
        typed: Optional[Sequence[Typed]],
    ) -> None:
        ns, checkpoint_id = part["ns"], part["id"]
        values = []
        for index, (channel, version, packed) in enumerate(part["values"]):
            value = typed[2 + index] if typed else unpack(packed, blocks)
            self.blobs[(ns, channel, version)] = (generation, value)
            values.append((channel, version))
        if (ns, checkpoint_id) in self.dropped:
            return
        entry = Checkpoint(
            ns,
            checkpoint_id,
            part.get("parent"),
            typed[0] if typed else unpack(part["checkpoint"]),
            typed[1] if typed else unpack(part["metadata"]),
            generation,
            position,
            values,
        )
        self.checkpoints[(ns, checkpoint_id)] = entry
        if self._latest is not None:
            best = self._latest.get(ns)
            if best is None or checkpoint_id > best.id:
                self._latest[ns] = entry
        if entry.parent is not None:
            self.children.setdefault((ns, entry.parent), []).append((generation, position))

    def _apply_writes(self, part: Dict[str, Any], typed: Optional[Sequence[Typed]]) -> None:
        key = (part["ns"], part["checkpoint"])
        if key in self.dropped:
            return
        stored = self.writes.setdefault(key, {})
        for position, (index, channel, packed) in enumerate(part["writes"]):
            inner = (part["task"], index)
            if index >= 0 and inner in stored:
                continue
            value = typed[position] if typed else unpack(packed)
            stored[inner] = (part["task"], channel, value, part.get("path", ""))

    def _drop(self, ns: str, checkpoint_id: str) -> None:
        self.dropped.add((ns, checkpoint_id))
        self._latest = None
        self.checkpoints.pop((ns, checkpoint_id), None)
        self.writes.pop((ns, checkpoint_id), None)

    def _delete(self, generation: int) -> None:
        self.floor = max(self.floor, generation)
        self._latest = None
        self.checkpoints = {k: v for k, v in self.checkpoints.items() if v.generation > generation}
        self.blobs = {k: v for k, v in self.blobs.items() if v[0] > generation}
        live = set(self.checkpoints)
        self.writes = {k: v for k, v in self.writes.items() if k in live}
        self.children = {}
        for entry in self.checkpoints.values():
            if entry.parent is not None:
                key = (entry.ns, entry.parent)
                self.children.setdefault(key, []).append((entry.generation, entry.position))

    # Questions the saver asks.

    def visible(self, generation: int, position: int, viewer: int) -> bool:
        """Whether the record at ``position`` of ``generation`` is in the view of the session of
        generation ``viewer`` (its own records, and those it inherits by its forks)."""
        limit: Optional[int] = None
        current: Optional[int] = viewer
        while current is not None:
            if current == generation:
                return limit is None or position < limit
            own = self.generations[current]
            limit = own.fork_at if limit is None else min(limit, own.fork_at)
            current = own.parent
        return False

    def has_child(self, ns: str, checkpoint_id: str, viewer: int) -> bool:
        """Whether a checkpoint whose parent is ``checkpoint_id`` is in ``viewer``'s view."""
        return any(self.visible(g, p, viewer) for g, p in self.children.get((ns, checkpoint_id), ()))

    def head(self) -> int:
        """The newest generation (-1 when the thread has none)."""
        return len(self.generations) - 1

    def latest(self, ns: str) -> Optional[Checkpoint]:
        """The live checkpoint of ``ns`` with the greatest id, as LangGraph's savers choose."""
        if self._latest is None:
            self._latest = {}
            for (entry_ns, checkpoint_id), entry in self.checkpoints.items():
                best = self._latest.get(entry_ns)
                if best is None or checkpoint_id > best.id:
                    self._latest[entry_ns] = entry
        return self._latest.get(ns)

    def namespaces(self) -> List[str]:
        """Every namespace with a live checkpoint, in order of first appearance."""
        return list(dict.fromkeys(ns for ns, _ in self.checkpoints))

    def ordered_writes(self, ns: str, checkpoint_id: str) -> List[Tuple[str, str, Typed, str]]:
        """A checkpoint's pending writes, in the order LangGraph's savers return them."""
        from langgraph.checkpoint.base import writes_sort_key

        stored = self.writes.get((ns, checkpoint_id), {})
        return [stored[k] for k in sorted(stored, key=lambda k: writes_sort_key(stored[k][3], *k))]
