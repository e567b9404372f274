"""``AnnalSaver``: LangGraph's checkpointer interface over an annal store. Every checkpoint, its
metadata, the values of its new channel versions and every task's writes are records appended to
the thread's annal session; time travel forks the session by reference; deletes are receipts.
Reads come from :class:`~annal.langgraph._thread.ThreadLog`, kept per thread and brought up to
date from the store at each call, so several processes can share one store."""

from __future__ import annotations

import os
import random
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
)

from .._annal import Store
from ..errors import BadInputError, ConflictError
from ._lifecycle import ThreadLifecycle
from ._messages import MESSAGES_CHANNEL, NOTHING_SEEN, Seen, message_record, new_messages
from ._thread import META_KEY, Checkpoint, Generation, Made, ThreadLog, Typed, pack, pack_value, part_json
from ._thread import thread_of_session, thread_session, typed_bytes

_RETRIES = 1000
"""How often a change reads the thread again after another writer got in first."""


class AnnalSaver(ThreadLifecycle, BaseCheckpointSaver[str]):
    """A LangGraph checkpointer keeping every thread in an annal store (``path``, or an open
    :class:`annal.Store`). ``serde`` defaults to LangGraph's ``JsonPlusSerializer``. A store it
    opens indexes for search when first searched, unless ``index_eagerly``."""

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]", Store],
        *,
        sharing: str = "processes",
        serde: Optional[SerializerProtocol] = None,
        index_eagerly: bool = False,
    ) -> None:
        super().__init__(serde=serde)
        self._owns_store = not isinstance(path, Store)
        # A checkpointer writes far more than it searches: by default the search index catches
        # up at the first search (in this process or another), in one batch, rather than after
        # every put (its commits cost a put more CPU than the put's own append).
        opened = Store(path, sharing=sharing, index_eagerly=index_eagerly) if self._owns_store else None
        self.store: Store = opened if opened is not None else path
        self._logs: Dict[str, ThreadLog] = {}
        self._lock = threading.RLock()
        self._stored = threading.Condition(self._lock)
        """Notified after each append this saver makes (what :meth:`wait_for_branch_head`
        waits on)."""
        self._waiting = 0
        """How many threads wait on ``_stored`` (with none, an append notifies nobody)."""

    def close(self) -> None:
        """Closes the store when this saver opened it (one given stays open for its owner)."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> "AnnalSaver":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "AnnalSaver":
        return self

    async def __aexit__(self, *_exc: Any) -> None:
        self.close()

    # The thread logs.

    def _fresh(self, thread_id: str) -> ThreadLog:
        """The thread's log, brought up to date (the caller holds the lock)."""
        log = self._logs.get(thread_id)
        if log is None:
            log = self._logs[thread_id] = ThreadLog(thread_id)
        log.refresh(self.store)
        return log

    def _threads(self) -> List[str]:
        """Every thread in the store."""
        names = (thread_of_session(info["name"]) for info in self.store.sessions())
        return [name for name in names if name is not None]

    def _append(self, thread_id: str, ns: str, parent: Optional[str], make: Any) -> Optional[ThreadLog]:
        """Appends the records ``make(log, session, start)`` returns (none: nothing to append)
        to the session a record whose checkpoint parent is ``parent`` belongs in, and applies the
        last record's part; returns the log. Each comes as (record, part, typed): the record
        without its metadata and the part its metadata holds (or None: the record has its
        metadata), with the part's values as they were before packing (or None). The first try
        trusts the thread as last read, in one call into the store that appends only if no
        generation of the thread changed since; when one did (another writer got in first), or a
        fork is to be made, it reads the thread again and decides again."""
        for attempt in range(_RETRIES):
            with self._lock:
                fresh = attempt > 0 or thread_id not in self._logs
                log = self._fresh(thread_id) if fresh else self._logs[thread_id]
                target = self._target(log, ns, parent, fresh)
                if target is None:
                    continue  # a fork to make from a thread read just now, or made first by another
                generation = log.generations[target] if target < len(log.generations) else None
                name = generation.name if generation else thread_session(thread_id, target)
                start = generation.read if generation else 0
                made = make(log, name, start)
                if not made:
                    return log
                records = [record for record, _, _ in made]
                # Each part as the store keeps it (canonical JSON), so the store takes the text as
                # it is rather than parse it and write it again.
                metas = [None if part is None else {META_KEY: part_json(part)} for _, part, _ in made]
                receipt = self.store.append_if_unchanged(
                    name, records, expected_next=start, expected=log.expected(), meta_json=metas
                )
                if receipt is None:
                    continue
                if generation is None:
                    generation = Generation(name, None, 0, 0)
                    log.generations.append(generation)
                record, part, typed = made[-1]
                part = record["meta"][META_KEY] if part is None else part
                log.apply(target, receipt["next"] - 1, part, record.get("blocks", ()), typed)
                generation.read = receipt["next"]
                if self._waiting:
                    self._stored.notify_all()
                return log
        raise ConflictError(f"thread {thread_id!r}: other writers kept getting in first")

    def _target(self, log: ThreadLog, ns: str, parent: Optional[str], fresh: bool) -> Optional[int]:
        """The generation a record belongs in; a fork made for it when it starts a branch and
        the log was read just now (``fresh``). None when a fork is due but the log was not
        fresh, or another writer made that fork's name first."""
        head = log.head()
        if head < 0:
            return 0
        if head <= log.floor:
            return self._fork(log, head, 0) if fresh else None
        entry = log.checkpoints.get((ns, parent)) if parent is not None else None
        if entry is None:
            return head
        if not log.has_child(ns, entry.id, entry.generation):
            return entry.generation
        return self._fork(log, entry.generation, entry.position + 1) if fresh else None

    def _fork(self, log: ThreadLog, source: int, at: int) -> Optional[int]:
        name = thread_session(log.thread_id, len(log.generations))
        try:
            self.store.fork(log.generations[source].name, at, name)
        except BadInputError:
            if self.store.session(name) is None:
                raise  # refused for another reason than a writer making it first
            return None
        log.generations.append(Generation(name, source, at, at))
        return len(log.generations) - 1

    # Reading.

    def _tuple(self, log: ThreadLog, entry: Checkpoint, config: Optional[Dict[str, Any]] = None) -> CheckpointTuple:
        loads = self.serde.loads_typed
        checkpoint = loads(entry.checkpoint)
        values = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = log.blobs.get((entry.ns, channel, version))
            if blob is not None and blob[1][0] != "empty":
                values[channel] = loads(blob[1])
        own = {"thread_id": log.thread_id, "checkpoint_ns": entry.ns, "checkpoint_id": entry.id}
        parent = None
        if entry.parent:
            parent = {"configurable": {**own, "checkpoint_id": entry.parent}}
        return CheckpointTuple(
            config=config or {"configurable": own},
            checkpoint={**checkpoint, "channel_values": values},
            metadata=loads(entry.metadata),
            parent_config=parent,
            pending_writes=[(task, ch, loads(v)) for task, ch, v, _ in log.ordered_writes(entry.ns, entry.id)],
        )

    def get_tuple(self, config: Dict[str, Any]) -> Optional[CheckpointTuple]:
        """The checkpoint ``config`` names, or the thread's latest in its namespace."""
        configurable = config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        with self._lock:
            log = self._fresh(configurable["thread_id"])
            entry = log.checkpoints.get((ns, checkpoint_id)) if checkpoint_id else log.latest(ns)
            if entry is None:
                return None
            return self._tuple(log, entry, config if checkpoint_id else None)

    def list(
        self,
        config: Optional[Dict[str, Any]],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[Dict[str, Any]] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        """The checkpoints of ``config``'s thread (every thread's for None), newest first in
        each namespace, whose metadata has every ``filter`` item, before ``before``'s."""
        configurable = config["configurable"] if config else {}
        threads = [configurable["thread_id"]] if config else self._threads()
        only_ns = configurable.get("checkpoint_ns")
        only_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        for thread_id in threads:
            with self._lock:
                log = self._fresh(thread_id)
                namespaces = log.namespaces() if only_ns is None else [only_ns]
                chosen = [
                    entry
                    for ns in namespaces
                    for entry in sorted(
                        (e for (e_ns, _), e in log.checkpoints.items() if e_ns == ns),
                        key=lambda e: e.id,
                        reverse=True,
                    )
                    if (not only_id or entry.id == only_id) and (not before_id or entry.id < before_id)
                ]
            for entry in chosen:
                if filter:
                    metadata = self.serde.loads_typed(entry.metadata)
                    if not all(metadata.get(key) == value for key, value in filter.items()):
                        continue
                if limit is not None and limit <= 0:
                    return
                if limit is not None:
                    limit -= 1
                with self._lock:
                    found = self._tuple(log, entry)
                yield found  # outside the lock: the caller may use the saver between items

    def branch_session(self, config: Dict[str, Any]) -> Optional[str]:
        """The annal session of the branch holding the checkpoint ``config`` names (the
        thread's latest root checkpoint without one): where its conversation reads in order."""
        configurable = config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        with self._lock:
            log = self._fresh(configurable["thread_id"])
            entry = log.checkpoints.get((ns, checkpoint_id)) if checkpoint_id else log.latest(ns)
            return None if entry is None else log.generations[entry.generation].name

    def wait_for_branch_head(self, thread_id: str, ns: str, checkpoint_id: str, timeout_seconds: float) -> bool:
        """Waits up to ``timeout_seconds`` for the checkpoint to be stored (a put of this
        process, which LangGraph may make in the background while the step runs): whether it
        is, with no child in its branch (so its branch's session ends with its state)."""
        with self._stored:

            def stored() -> bool:
                return (ns, checkpoint_id) in self._fresh(thread_id).checkpoints

            self._waiting += 1
            try:
                if not self._stored.wait_for(stored, timeout=timeout_seconds):
                    return False
            finally:
                self._waiting -= 1
            log = self._logs[thread_id]
            entry = log.checkpoints[(ns, checkpoint_id)]
            return not log.has_child(ns, checkpoint_id, entry.generation)

    # Writing.

    def put(
        self,
        config: Dict[str, Any],
        checkpoint: Dict[str, Any],
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Dict[str, Any]:
        """Appends a checkpoint, the values of its new channel versions and a record of each
        new message, as one batch; returns the checkpoint's config."""
        dumps = self.serde.dumps_typed
        c = dict(checkpoint)
        values = c.pop("channel_values")
        configurable = config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        parent = configurable.get("checkpoint_id")
        # The values as serialized, kept for the thread's log beside their packed form.
        typed = [typed_bytes(dumps(c)), typed_bytes(dumps(get_checkpoint_metadata(config, metadata)))]
        part = {
            "kind": "checkpoint",
            "ns": ns,
            "id": checkpoint["id"],
            "parent": parent,
            "checkpoint": pack(typed[0]),
            "metadata": pack(typed[1]),
            "values": [],
        }
        blocks: List[Dict[str, Any]] = []
        for k, v in new_versions.items():
            typed.append(typed_bytes(dumps(values[k])) if k in values else ("empty", b""))
            part["values"].append([k, v, pack_value(typed[-1], blocks)])
        messages = values.get(MESSAGES_CHANNEL) if MESSAGES_CHANNEL in new_versions else None
        self._put_part(thread_id, part, messages, blocks, typed)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _put_part(
        self, thread_id: str, part: Dict[str, Any], messages: Any, blocks: List[Any], typed: Optional[List[Typed]]
    ) -> None:
        ns, checkpoint_id = part["ns"], part["id"]
        after = NOTHING_SEEN

        def make(log: ThreadLog, session: str, start: int) -> List[Made]:
            nonlocal after
            records = []
            if messages is not None:
                fresh, after = new_messages(messages, self._known_messages(log, ns, part["parent"]))
                for message in fresh:
                    made = message_record(message, f"{session}@{start + len(records)}", ns, checkpoint_id)
                    if made is not None:
                        records.append((*made, None))
            entry_id = f"{session}@{start + len(records)}"
            records.append(({"entryId": entry_id, "role": "system", "blocks": blocks}, part, typed))
            return records

        log = self._append(thread_id, ns, part["parent"], make)
        if log is None:
            return
        if messages is not None:
            log.remember_messages(ns, checkpoint_id, after)
        elif (ns, part["parent"]) in log.message_keys:
            # The channel kept its version, so its messages are the parent's: known without
            # reading the parent's value back (which costs deserializing every message).
            log.remember_messages(ns, checkpoint_id, log.message_keys[(ns, part["parent"])])

    def _known_messages(self, log: ThreadLog, ns: str, parent: Optional[str]) -> Seen:
        """The messages of the parent checkpoint's state, as seen."""
        if parent is None:
            return NOTHING_SEEN
        known = log.message_keys.get((ns, parent))
        if known is not None:
            return known
        entry = log.checkpoints.get((ns, parent))
        if entry is None:
            return NOTHING_SEEN
        version = self.serde.loads_typed(entry.checkpoint)["channel_versions"].get(MESSAGES_CHANNEL)
        blob = log.blobs.get((ns, MESSAGES_CHANNEL, version))
        if blob is None or blob[1][0] == "empty":
            return NOTHING_SEEN
        known = new_messages(self.serde.loads_typed(blob[1]), NOTHING_SEEN)[1]
        log.remember_messages(ns, parent, known)
        return known

    def put_writes(
        self,
        config: Dict[str, Any],
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Appends a task's writes for a checkpoint (one record); writes already stored under
        the same task and index are kept as they are, as LangGraph's savers do."""
        configurable = config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        items = [[WRITES_IDX_MAP.get(c, i), c, v] for i, (c, v) in enumerate(writes)]
        self._put_writes(thread_id, ns, checkpoint_id, task_id, task_path, items, packed=False)

    def _put_writes(
        self, thread_id: str, ns: str, checkpoint_id: str, task: str, path: str, items: List[Any], packed: bool
    ) -> None:
        typed: Optional[List[Typed]] = None
        if not packed:
            typed = [typed_bytes(self.serde.dumps_typed(value)) for _, _, value in items]
            items = [[index, channel, pack(value)] for (index, channel, _), value in zip(items, typed)]

        def make(log: ThreadLog, session: str, start: int) -> List[Made]:
            stored = log.writes.get((ns, checkpoint_id), {})
            kept = [at for at, item in enumerate(items) if item[0] < 0 or (task, item[0]) not in stored]
            if not kept:
                return []
            writes = [items[at] for at in kept]
            part = {"kind": "writes", "ns": ns, "checkpoint": checkpoint_id, "task": task, "path": path}
            part["writes"] = writes
            kept_typed = [typed[at] for at in kept] if typed is not None else None
            return [({"entryId": f"{session}@{start}", "role": "system"}, part, kept_typed)]

        self._append(thread_id, ns, None, make)

    def get_next_version(self, current: Optional[str], channel: None = None) -> str:
        """The next version of a channel: its number, then a random fraction, so versions of two
        branches of one thread never meet (as ``InMemorySaver`` and ``SqliteSaver`` do)."""
        number = 0 if current is None else current if isinstance(current, int) else int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"
