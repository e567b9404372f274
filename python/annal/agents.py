"""A session store for the OpenAI Agents SDK that never overflows the model's window.

:class:`AnnalSession` implements the SDK's ``Session`` protocol (``session_id``,
``get_items``, ``add_items``, ``pop_item``, ``clear_session``) over an annal store. Each item
is one record, keeping the item's own JSON text, so it reads back exactly as it came; its text,
calls and outputs are also stored as blocks, so projections and search see them.

Given a window (``AnnalSession(store, "chat", window=200_000, max_output=32_000)``),
``get_items()`` returns annal's projection of the session: every user message, the assistant's
answers, the recent tail verbatim and an index of tool evidence, under the window less the
output ceiling, compacting when due. What it leaves out is named in its markers and stays in
the store: :func:`history_tools` gives the agent ``history_search`` and ``history_get`` to
fetch it back.

Nothing is ever deleted. The session's records live in an annal session named like the
``session_id``; ``pop_item`` and ``clear_session`` fork it (sharing what stays, without
copying) into a new generation, ``<session_id>~pop<N>``, which becomes the session's head.
Every earlier item stays in the earlier generations, searchable and verifiable.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

from ._annal import Store
from .errors import BadInputError, ConflictError

if TYPE_CHECKING:  # pragma: no cover
    from agents.tool import FunctionTool

__all__ = ["AnnalSession", "history_tools", "render_hits", "render_original"]

Item = Any
"""A Responses-API input item: a dict, as the Agents SDK keeps them."""

GENERATION_MARK = "~pop"
"""What separates a session's name from its generation number in later generations' names."""


class AnnalSession:
    """An OpenAI Agents SDK session kept in an annal store.

    ``store`` is an open :class:`annal.Store` (shared by any number of sessions and threads)
    or the path of one, opened and owned by this session. With ``window`` (the model's context
    window in tokens) and ``max_output`` (the most it may write), ``get_items()`` without a
    limit returns the session's projection under that budget; without them it returns every
    item. ``get_items(limit=N)`` always returns the latest N items verbatim, as the SDK's own
    sessions do.

    A run sends the model more than the history: its new input, the tool calls and outputs of
    the run so far, the instructions and the tool definitions. ``reserve`` (default an eighth of
    the window) keeps that many tokens of the window free of history: the projection is planned
    for ``window - max_output - reserve`` and annal's own margin.
    """

    def __init__(
        self,
        store: Union[Store, str, "os.PathLike[str]"],
        session_id: str,
        *,
        window: Optional[int] = None,
        max_output: Optional[int] = None,
        reserve: Optional[int] = None,
        session_settings: Any = None,
    ) -> None:
        if isinstance(store, Store):
            self.store, self._owns_store = store, False
        else:
            self.store, self._owns_store = Store(os.fspath(store)), True
        if not session_id:
            raise BadInputError("a session id cannot be empty")
        if max_output is not None and window is None:
            raise BadInputError("max_output needs window: the output ceiling is part of a budget")
        if window is not None and max_output is None:
            max_output = min(32_000, window // 4)
        if reserve is not None and window is None:
            raise BadInputError("reserve needs window: it is kept free of the window")
        if window is not None and reserve is None:
            reserve = window // 8
        self.session_id = session_id
        self.session_settings = session_settings
        self.window = window
        self.max_output = max_output
        self.reserve = reserve
        self._generation = 0

    # The SDK's Session protocol.

    async def get_items(self, limit: Optional[int] = None) -> List[Item]:
        """The session's items, oldest first: the latest ``limit`` verbatim; without a limit,
        the projection under the window (compacting when due), or every item when no window
        was given."""
        return await asyncio.to_thread(self.get_items_sync, limit)

    async def add_items(self, items: List[Item]) -> None:
        """Appends ``items`` as one atomic batch, each kept verbatim."""
        await asyncio.to_thread(self.add_items_sync, items)

    async def pop_item(self) -> Optional[Item]:
        """Takes the newest item off what the session shows and returns it (None when empty).
        The item stays in the store, in the generation it was added to."""
        return await asyncio.to_thread(self.pop_item_sync)

    async def clear_session(self) -> None:
        """Makes the session show no items; every item stays in the store."""
        await asyncio.to_thread(self.clear_session_sync)

    # The same, for code without an event loop.

    def get_items_sync(self, limit: Optional[int] = None) -> List[Item]:
        """:meth:`get_items`, blocking."""
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        head, length = self.head()
        if length == 0:
            return []
        if limit is not None:
            return self._latest(head, length, limit)
        if self.window is None:
            return [json.loads(text) for _, text in self.store.items(head)]
        return self.projected_items(head)

    def add_items_sync(self, items: List[Item]) -> None:
        """:meth:`add_items`, blocking."""
        if not items:
            return
        texts = []
        for index, item in enumerate(items):
            try:
                texts.append(json.dumps(item))
            except (TypeError, ValueError) as err:
                raise BadInputError(f"item {index} of the batch is not JSON: {err}") from None
        while True:
            head, length = self.head()
            ids = [f"agents:{head}:{length + n}" for n in range(len(texts))]
            try:
                self.store.append_items(head, texts, ids, expected_next=length)
                return
            except ConflictError:
                continue  # another writer appended first: append after it

    def pop_item_sync(self) -> Optional[Item]:
        """:meth:`pop_item`, blocking."""
        while True:
            head, length = self.head()
            if length == 0:
                return None
            last = self.store.items(head, length - 1)
            if self._next_generation(head, length - 1):
                return json.loads(last[-1][1]) if last else None

    def clear_session_sync(self) -> None:
        """:meth:`clear_session`, blocking."""
        while True:
            head, length = self.head()
            if length == 0 or self._next_generation(head, 0):
                return

    # Generations.

    def generation_name(self, generation: int) -> str:
        """The annal session holding ``generation`` of this session: the session id itself,
        then ``<session_id>~pop<N>``."""
        return self.session_id if generation == 0 else f"{self.session_id}{GENERATION_MARK}{generation}"

    def head(self) -> Tuple[str, int]:
        """The annal session this session shows now, and how many records it has. A later
        generation counts only when it is a fork of the one before, so an unrelated session of
        a look-alike name is never taken for one."""
        name = self.generation_name(self._generation)
        info = self.store.session(name)
        if info is None:
            return name, 0
        while True:
            later = self.store.session(self.generation_name(self._generation + 1))
            if later is None or later["parent"] != name:
                return name, info["records"]
            self._generation += 1
            name, info = later["name"], later

    def _next_generation(self, head: str, keep: int) -> bool:
        """Forks ``head`` at ``keep`` into the next generation; False when another writer moved
        the head first (the caller reads it again)."""
        new_name = self.generation_name(self._generation + 1)
        try:
            self.store.fork(head, keep, new_name)
        except BadInputError:
            if self.head()[0] == head:
                raise BadInputError(
                    f"session {new_name!r} exists and is not a fork of {head!r}: "
                    f"session {self.session_id!r} cannot take a new generation"
                ) from None
            return False
        self._generation += 1
        return True

    # Reading.

    def _latest(self, head: str, length: int, limit: int) -> List[Item]:
        if limit == 0:
            return []
        if limit < 0:
            return [json.loads(text) for _, text in self.store.items(head)]
        start = max(0, length - limit)
        while True:
            found = self.store.items(head, start)
            # A record another agent wrote may make several items, or none: read back further
            # until there are enough.
            if len(found) >= limit or start == 0:
                return [json.loads(text) for _, text in found[-limit:]]
            start = max(0, start - limit)

    def projected_items(self, head: str) -> List[Item]:
        """The projection of ``head`` under the window as items, compacting first when due.
        A view that keeps every record verbatim is the items themselves."""
        assert self.window is not None and self.max_output is not None and self.reserve is not None
        # The reserve is planned for as more output: what the budget holds back from history.
        held_back = self.max_output + self.reserve
        view = self.store.project(head, self.window, held_back, responses_items=True)
        if view["stats"]["compactionDue"]:
            self.store.compact(head, self.window, held_back)
            view = self.store.project(head, self.window, held_back, responses_items=True)
        if view["stats"]["source"]["kind"] == "live":
            return [json.loads(text) for _, text in self.store.items(head)]
        return view["items"]

    def close(self) -> None:
        """Closes the store when this session opened it."""
        if self._owns_store:
            self.store.close()

    def __repr__(self) -> str:
        return f"AnnalSession({self.session_id!r}, head={self.generation_name(self._generation)!r})"


def render_hits(query: str, hits: List[dict]) -> str:
    """Search hits as the lines a model reads: ``id [session #order role tool] snippet``."""
    if not hits:
        return f"no matches for {query!r}"
    lines = [f"{len(hits)} hits for {query!r}, best first (history_get takes the id before the brackets):"]
    for hit in hits:
        what = [hit["session"], f"#{hit['sourceOrder']}", hit["role"]]
        if hit.get("tool"):
            what.append(hit["tool"])
        if hit["type"] != "text":
            what.append(hit["type"])
        if hit["isError"]:
            what.append("error")
        snippet = " ".join(hit["snippet"].split())
        lines.append(f"{hit['entryId']}#{hit['blockIndex']} [{' '.join(what)}] {snippet}")
    return "\n".join(lines)


def render_original(original: dict) -> str:
    """An original as a model reads it: where it is, then each block's text verbatim."""
    head = (
        f"entry {original['entryId']} · session {original['session']} · "
        f"sourceOrder {original['sourceOrder']} · {original['role']}"
    )
    parts = [head]
    for block in original["blocks"]:
        label = f"block {block['blockIndex']} {block['type']}"
        if block.get("tool"):
            label += f" {block['tool']}"
        text = block.get("text")
        if text is None:
            text = f"(binary {block.get('mediaType', 'data')}, {block['bytes']} bytes)"
        parts.append(f"--- {label}\n{text}")
    return "\n".join(parts)


def history_tools(store: Store, *, session: Optional[str] = None) -> List["FunctionTool"]:
    """``history_search`` and ``history_get``, as Agents SDK function tools over ``store``
    (scoped to ``session`` and what it inherits, when given): an agent finds what a projection
    left out by its words, then reads the original verbatim by the id a marker or hit names."""
    from agents import function_tool

    async def history_search(query: str, limit: int = 10) -> str:
        """Search every stored original (user and assistant text, tool calls and outputs, also
        what the conversation view left out) by its words; returns ids for history_get.

        Args:
            query: Words, identifiers or "exact phrases"; AND, OR, NOT and -word work.
            limit: The most hits to return.
        """
        hits = await asyncio.to_thread(store.search, query, session=session, limit=max(1, min(limit, 50)))
        return render_hits(query, hits)

    async def history_get(id: str, first_line: int = 0, last_line: int = 0) -> str:
        """Read one stored original verbatim by the id a search hit or an omission marker names
        (ENTRY or ENTRY#BLOCK).

        Args:
            id: The entry id, optionally with #block.
            first_line: Only from this line (from 1); 0 reads the whole text.
            last_line: Only to this line (inclusive); 0 reads to the end.
        """
        lines = None
        if first_line > 0 or last_line > 0:
            lines = (max(first_line, 1), last_line if last_line > 0 else 2**62)
        original = await asyncio.to_thread(store.get, id, lines)
        return render_original(original)

    def failure(_ctx: Any, error: Exception) -> str:
        return str(error)

    return [
        function_tool(history_search, failure_error_function=failure),
        function_tool(history_get, failure_error_function=failure),
    ]


