"""What ends or copies threads: ``delete_thread``, ``delete_for_runs``, ``prune`` and
``copy_thread``, as receipts and forks in the journal (nothing stored is rewritten or erased:
removed checkpoints stay in the store's history, searchable and verifiable, and the checkpointer
no longer returns them); and every method's ``async`` twin, which runs it in a thread."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence, Tuple

from langgraph.checkpoint.base import ChannelVersions, CheckpointMetadata, CheckpointTuple

from ._messages import MESSAGES_CHANNEL
from ._thread import META_KEY, ThreadLog, pack, pack_value


class ThreadLifecycle:
    """The deleting, pruning and copying half of :class:`~annal.langgraph.AnnalSaver`."""

    def delete_thread(self, thread_id: str) -> None:
        """Ends the thread: a delete receipt (how many checkpoints and writes it removes), then
        a new generation forked at 0, where the thread starts again empty."""
        with self._lock:
            log = self._fresh(thread_id)
            if not log.checkpoints and not log.writes:
                return
            receipt = {
                "kind": "delete",
                "checkpoints": len(log.checkpoints),
                "writes": sum(len(w) for w in log.writes.values()),
            }
            self._append_to_head(thread_id, receipt)

    def _append_to_head(self, thread_id: str, part: Dict[str, Any]) -> None:
        """Appends one receipt record to the thread's newest generation."""
        self._append(thread_id, "", None, lambda *_: [({"role": "system", "meta": {META_KEY: part}}, None, None)])

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Removes, in every thread, the checkpoints whose metadata names one of ``run_ids``,
        and their writes: one drop receipt per thread that had any."""
        wanted = set(run_ids)
        if not wanted:
            return
        for thread_id in self._threads():
            with self._lock:
                log = self._fresh(thread_id)
                drops = [
                    [entry.ns, entry.id]
                    for entry in log.checkpoints.values()
                    if self.serde.loads_typed(entry.metadata).get("run_id") in wanted
                ]
                if drops:
                    self._append_to_head(thread_id, {"kind": "drop", "reason": "runs", "checkpoints": drops})

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: each thread keeps only its latest checkpoint of each namespace (with
        its writes); ``delete``: each thread is deleted."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f'prune strategy {strategy!r}: expected "keep_latest" or "delete"')
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
                continue
            with self._lock:
                log = self._fresh(thread_id)
                keep = {log.latest(ns).id for ns in log.namespaces()}
                drops = [[e.ns, e.id] for e in log.checkpoints.values() if e.id not in keep]
                if drops:
                    self._append_to_head(thread_id, {"kind": "drop", "reason": "prune", "checkpoints": drops})

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every live checkpoint of the source thread, with its values and writes, into
        the target thread, oldest first, so the copy has the same parents, branches and
        messages."""
        with self._lock:
            log = self._fresh(source_thread_id)
            entries = sorted(log.checkpoints.values(), key=lambda e: (e.id, e.ns))
            copies = [(entry, self._copied_part(log, entry), self._copied_writes(log, entry)) for entry in entries]
        for entry, (part, messages, blocks), writes in copies:
            self._put_part(target_thread_id, part, messages, blocks, None)
            for (task, path), items in writes.items():
                self._put_writes(target_thread_id, entry.ns, entry.id, task, path, items, packed=True)

    @staticmethod
    def _copied_writes(log: ThreadLog, entry: Any) -> Dict[Tuple[str, str], List[Any]]:
        """A checkpoint's writes as stored, by task (and its path)."""
        by_task: Dict[Tuple[str, str], List[Any]] = {}
        for (task, index), (_, channel, value, path) in log.writes.get((entry.ns, entry.id), {}).items():
            by_task.setdefault((task, path), []).append([index, channel, pack(value)])
        return by_task

    def _copied_part(self, log: ThreadLog, entry: Any) -> Tuple[Dict[str, Any], Any, List[Dict[str, Any]]]:
        values = []
        blocks: List[Dict[str, Any]] = []
        messages = None
        for channel, version in entry.values:
            blob = log.blobs.get((entry.ns, channel, version))
            if blob is None:
                continue
            values.append([channel, version, pack_value(blob[1], blocks)])
            if channel == MESSAGES_CHANNEL and blob[1][0] != "empty":
                messages = self.serde.loads_typed(blob[1])
        part = {
            "kind": "checkpoint",
            "ns": entry.ns,
            "id": entry.id,
            "parent": entry.parent,
            "checkpoint": pack(entry.checkpoint),
            "metadata": pack(entry.metadata),
            "values": values,
        }
        return part, messages, blocks

    # The async twins: each runs its method in a thread, off the event loop.

    async def aget_tuple(self, config: Dict[str, Any]) -> Optional[CheckpointTuple]:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: Optional[Dict[str, Any]],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[Dict[str, Any]] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        tuples = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in tuples:
            yield item

    async def aput(
        self,
        config: Dict[str, Any],
        checkpoint: Dict[str, Any],
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Dict[str, Any]:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Dict[str, Any], writes: Sequence[Tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)
