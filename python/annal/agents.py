"""A session store for the OpenAI Agents SDK that never overflows the model's window.

:class:`AnnalSession` implements the SDK's ``Session`` protocol (``session_id``,
``session_settings``, ``get_items``, ``add_items``, ``pop_item``, ``clear_session``, and
``close``) over an annal store, behaving as the SDK's own ``SQLiteSession`` does wherever a
caller could tell: limits, settings, ordering, what a closed session raises, what a cancelled
call leaves behind, which items it takes. Each item is one record, keeping the item's own JSON
text, so it reads back exactly as it came; its text, calls and outputs are also stored as
blocks, so projections and search see them.

Given a window (``AnnalSession(store, "chat", window=200_000, max_output=32_000)``),
``get_items()`` returns annal's projection of the session: every user message, the assistant's
answers, the recent tail verbatim and an index of tool evidence, under the window less the
output ceiling and a reserve for the run, compacting when due. What it leaves out is named in
its markers and stays in the store: :func:`history_tools` gives the agent ``history_search``
and ``history_get`` to fetch it back.

Nothing is ever deleted. The session's records live in an annal session named like the
``session_id``. ``pop_item`` and ``clear_session`` end that generation with a seal record, then
fork it (sharing what stays, without copying) into the next, ``<session_id>~pop<N>``, which
the session shows from then on. The seal makes the change atomic against other writers: an
append that raced it fails its expected position and goes to the new generation. Every earlier
item stays in the earlier generations, searchable and verifiable.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
import os
import re
import threading
import unicodedata
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, TypeVar, Union

from ._annal import GENERATION_MARK, SEAL_KEY, Fleet, Store, generation_name
from .errors import AnnalError, BadInputError, ClosedError, ConflictError

if TYPE_CHECKING:  # pragma: no cover
    from agents.tool import FunctionTool

__all__ = [
    "AnnalSession",
    "ITEM_JSON_KEY",
    "ItemTypeError",
    "SessionClosedError",
    "history_tools",
    "render_hits",
    "render_original",
]

T = TypeVar("T")

Item = Any
"""A Responses-API input item: a dict, as the Agents SDK keeps them (any value json.dumps takes is
taken, as the SDK's own sessions take it)."""

SESSION_ID_BYTES_MAX = 256
"""The longest session id: entry ids embed it, and they have a limit of their own."""

ITEM_JSON_KEY = "annal.itemJson"
"""The one key of the object that holds an item the store cannot keep as a JSON object of its
own, as the JSON text the SDK's ``SQLiteSession`` would store for it: a value that is not an
object (a string, a number, a list, None); an object holding NaN, an infinity or a lone
surrogate, nested deeper than the store's JSON reader goes, or of more parts than a record holds
blocks. An item that is itself an object of just this key is held the same way, so reading back
is never ambiguous."""


class SessionClosedError(ClosedError, RuntimeError):
    """The session was closed (or its store was): also a :class:`RuntimeError`, as the SDK's
    own sessions raise once closed."""


class ItemTypeError(BadInputError, TypeError):
    """An item that is not JSON-serializable (a set, bytes, an object of a class json does
    not know): also a :class:`TypeError`, as the SDK's own sessions raise for one."""


def _whole(value: Any, what: str, least: int) -> int:
    """``value`` when it is a whole number of at least ``least``; BadInputError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise BadInputError(f"{what} {value!r}: expected a whole number, {least} or more")
    return value


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
    for ``window - max_output - reserve`` and annal's own margin. Tokens are counted as annal's
    store counts them (a token per four characters).

    With ``fleet`` (an :class:`annal.Fleet` or its servers' URLs), the session is shared by
    every host on that fleet: each reads the fleet's version of it first, appends go through
    the servers, which check each append's position (two workers never both extend the same
    one; the loser reads again and retries), and new generations are published.

    ``session_settings`` (a ``SessionSettings`` or a dict of its fields) defaults to
    ``SessionSettings()``, as the SDK's sessions do; its ``limit``, read at each call, is the
    limit of ``get_items()`` called without one. After :meth:`close`, every method raises
    :class:`SessionClosedError` (a ``RuntimeError``), as the SDK's sessions do.
    """

    # Declared on the class as the SDK's Session protocol and sessions declare them.
    session_id: str
    session_settings: Any = None

    def __init__(
        self,
        store: Union[Store, str, "os.PathLike[str]"],
        session_id: str,
        *,
        window: Optional[int] = None,
        max_output: Optional[int] = None,
        reserve: Optional[int] = None,
        session_settings: Any = None,
        fleet: Union[Fleet, str, None] = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise BadInputError("a session id must be a non-empty string")
        if GENERATION_MARK in session_id:
            raise BadInputError(f"session id {session_id!r}: {GENERATION_MARK!r} names a session's generations")
        if len(session_id.encode()) > SESSION_ID_BYTES_MAX:
            raise BadInputError(f"session id of {len(session_id.encode())} bytes: at most {SESSION_ID_BYTES_MAX}")
        # The store refuses such a name at the first write; refusing it here fails before the
        # session is used, not in the middle of a run.
        if any(unicodedata.category(ch) == "Cc" for ch in session_id):
            raise BadInputError(f"session id {session_id!r}: a session id cannot contain control characters")
        if window is None and (max_output is not None or reserve is not None):
            raise BadInputError("max_output and reserve need window: they are parts of its budget")
        if window is not None:
            window = _whole(window, "window", 1)
            max_output = min(32_000, window // 4) if max_output is None else _whole(max_output, "max_output", 0)
            reserve = window // 8 if reserve is None else _whole(reserve, "reserve", 0)
            if max_output + reserve >= window:
                raise BadInputError(f"max_output {max_output} and reserve {reserve} leave nothing of window {window}")
        self.session_id = session_id
        self.session_settings = _settings(session_settings)
        self.window = window
        self.max_output = max_output
        self.reserve = reserve
        self._generation = 0
        self._lock = threading.Lock()
        # The item texts of the head's records read so far: (head, records, texts, chars).
        self._read: Tuple[str, int, List[str], int] = ("", 0, [], 0)
        # Where this session's last add left its head (head, records): the next add names it
        # as its expected position without reading the head first. Another writer's add, a
        # pop or a clear moves the head's length, so a stale one is a conflict, after which
        # the head is read. Not kept on a fleet, whose reads follow the servers first.
        self._tail: Optional[Tuple[str, int]] = None
        self._closed = False
        # On a fleet, the session is shared: every host's store follows it before reading,
        # appends go through the servers (which check positions), and forks are published.
        self._fleet = Fleet(fleet) if isinstance(fleet, str) else fleet
        if isinstance(store, Store):
            self.store, self._owns_store = store, False
        else:
            self.store, self._owns_store = Store(os.fspath(store)), True

    # The SDK's Session protocol.

    async def get_items(self, limit: Optional[int] = None) -> List[Item]:
        """The session's items, oldest first: the latest ``limit`` verbatim (0: none; negative:
        all); with ``limit`` None, ``session_settings.limit`` is the limit; without either, the
        projection under the window (compacting when due), or every item when no window was
        given."""
        self._check_open()
        return await asyncio.to_thread(self.get_items_sync, limit)

    async def add_items(self, items: List[Item]) -> None:
        """Appends ``items`` as one atomic batch, each kept verbatim. Once started, the append
        finishes even if the caller is cancelled; the cancellation is raised after it."""
        # Checked before the empty batch returns, as the SDK's sessions do: a closed session
        # refuses even nothing.
        self._check_open()
        if not items:
            return
        await _finish(self.add_items_sync, items)

    async def pop_item(self) -> Optional[Item]:
        """Takes the newest item off what the session shows and returns it (None when empty).
        The item stays in the store, in the generation it was added to. Once started, the pop
        finishes even if the caller is cancelled."""
        self._check_open()
        return await _finish(self.pop_item_sync)

    async def clear_session(self) -> None:
        """Makes the session show no items; every item stays in the store. Once started, the
        clear finishes even if the caller is cancelled."""
        self._check_open()
        await _finish(self.clear_session_sync)

    # The same, for code without an event loop.

    def get_items_sync(self, limit: Optional[int] = None) -> List[Item]:
        """:meth:`get_items`, blocking."""
        with self._open():
            if limit is None:
                limit = _coerce_settings(self.session_settings).limit if self.session_settings is not None else None
            head, length, _ = self.head()
            if length == 0:
                return []
            if limit is not None:
                return self._latest(head, length, limit)
            if self.window is None:
                return [_decode(text) for text in self._item_texts(head, length)]
            return self.projected_items(head)

    def add_items_sync(self, items: List[Item]) -> None:
        """:meth:`add_items`, blocking."""
        with self._open():
            if not items:
                return
            self._add(items)

    def _add(self, items: List[Item]) -> None:
        """Appends ``items``, each encoded as :func:`_encode` does, as one batch."""
        items = list(items)
        texts = [_encode(item, index) for index, item in enumerate(items)]
        if not texts:
            return  # an iterable that was empty, though not falsy
        held: set = set()
        # Ids name the generation and position, and a token of this call: two writers racing
        # for one position must meet the expected-position check, not a shared id.
        token = uuid.uuid4().hex[:12]
        while True:
            with self._lock:
                tail, self._tail = self._tail, None
            head, length = tail if tail is not None else self.head()[:2]
            ids = [f"agents:{head}:{length + n}:{token}" for n in range(len(texts))]
            try:
                if self._fleet is not None:
                    self._fleet.append_items(self.store, head, texts, ids, expected_next=length)
                else:
                    receipt = self.store.append_items(head, texts, ids, expected_next=length)
                    with self._lock:
                        self._tail = (head, receipt["next"])
                return
            except ConflictError:
                continue  # another writer appended, or sealed this generation, first
            except BadInputError as err:
                # An object the store will not take as an item of its own (nested deeper than
                # its JSON reader goes, or of more parts than a record's blocks): the SDK's
                # sessions take it, so it is held as its text instead, as a value that is not an
                # object is. Nothing was stored; an item refused even so fails the batch.
                index = _refused_item(str(err), ids)
                if index is None or index in held:
                    raise
                held.add(index)
                texts[index] = _held_as_text(items[index], index)

    def pop_item_sync(self) -> Optional[Item]:
        """:meth:`pop_item`, blocking."""
        with self._open():
            while True:
                head, length, generation = self.head()
                last = self._last_record_items(head, length)
                if not last:
                    return None
                order = last[-1][0]
                if self._seal(head, length, order, generation):
                    return _decode(last[-1][1])

    def clear_session_sync(self) -> None:
        """:meth:`clear_session`, blocking."""
        with self._open():
            while True:
                head, length, generation = self.head()
                if length == 0 or self._seal(head, length, 0, generation):
                    return

    # Closing.

    def _check_open(self) -> None:
        """Raises :class:`SessionClosedError` once :meth:`close` was called, or once the store
        was closed (by whoever owns it)."""
        if self._closed:
            raise SessionClosedError(f"AnnalSession {self.session_id!r} is closed")
        if self.store.closed:
            raise SessionClosedError(f"AnnalSession {self.session_id!r} is closed: its store was closed")

    def _open(self) -> "_OpenSession":
        """A context that checks the session is open and turns the store's own
        :class:`ClosedError` (a shared store its owner closed) into :class:`SessionClosedError`."""
        self._check_open()
        return _OpenSession(self)

    # Generations.

    def generation_name(self, generation: int) -> str:
        """The annal session holding ``generation`` of this session: the session id itself,
        then ``<session_id>~pop<N>``."""
        return generation_name(self.session_id, generation)

    def head(self) -> Tuple[str, int, int]:
        """The annal session this session shows now, how many records it has, and its
        generation. A sealed generation is finished (its fork made, if the sealer did not get
        to it); a later one counts only when it is a fork of the one before it, so an
        unrelated session of a look-alike name is never taken for one."""
        with self._lock:
            generation = self._generation
        if self._fleet is not None:
            self._fleet.follow(self.store, sessions=f"{self.session_id}*")
        while True:
            name, length, generation, sealed_at, next_taken = self.store.generation_head(self.session_id, generation)
            if sealed_at is None:
                break
            successor = self.generation_name(generation + 1)
            if next_taken:
                raise self._taken(successor, name)
            self._fork(name, sealed_at, successor)
        with self._lock:
            self._generation = max(self._generation, generation)
        return name, length, generation

    def _seal(self, head: str, length: int, keep: int, generation: int) -> bool:
        """Ends ``head`` (at ``length`` records) so its successor keeps its first ``keep``; False
        when another writer moved it first (the caller reads the head again)."""
        successor = self.generation_name(generation + 1)
        taken = self.store.session(successor)
        if taken is not None and taken["parent"] != head:
            raise self._taken(successor, head)
        seal = {
            "entryId": f"agents:{head}:seal:{length}:{uuid.uuid4().hex[:12]}",
            "role": "system",
            "meta": {SEAL_KEY: {"keep": keep, "next": successor}},
        }
        try:
            if self._fleet is not None:
                self._fleet.append(self.store, head, [seal], expected_next=length)
            else:
                self.store.append(head, [seal], expected_next=length)
        except ConflictError:
            return False
        with self._lock:
            self._tail = None
        self._fork(head, keep, successor)
        return True

    def _fork(self, head: str, keep: int, successor: str) -> None:
        """Makes ``successor``, unless a racing caller already did (at the same point: a seal
        names one)."""
        try:
            self.store.fork(head, keep, successor)
        except BadInputError:
            made = self.store.session(successor)
            if made is None:
                raise
            if made["parent"] != head or made["forkAt"] != keep:
                raise self._taken(successor, head) from None
        if self._fleet is not None:
            # The other hosts see the next generation once the fleet holds its fork.
            self._fleet.publish(self.store, sessions=successor)

    def _taken(self, successor: str, head: str) -> BadInputError:
        """The error for a next generation's name held by a session that is not its fork."""
        return BadInputError(
            f"session {successor!r} exists and is not a fork of {head!r}: "
            f"session {self.session_id!r} cannot take its next generation"
        )

    # Reading.

    def _last_record_items(self, head: str, length: int) -> List[Tuple[int, str]]:
        """The items of the newest record below ``length`` that holds any (receipts and seals
        hold none)."""
        start = length
        while start > 0:
            start = max(0, start - 16)
            found = self.store.items(head, start, length)
            if found:
                order = found[-1][0]
                return [(o, text) for o, text in found if o == order]
        return []

    def _item_texts(self, head: str, length: int) -> List[str]:
        """The item texts of the first ``length`` records of ``head``. A record is never
        rewritten, and a pop or a clear starts a session of another name, so the texts read
        by an earlier call are kept and only the records added since are read: a run's
        history is read from the store once, not at every turn. Each call decodes the texts
        anew, so no caller shares an item with another."""
        with self._lock:
            read_head, read_records, texts, chars = self._read
        if read_head != head or length < read_records:
            read_records, texts, chars = 0, [], 0
        if length > read_records:
            added = [text for _, text in self.store.items(head, read_records, length)]
            # A new list: another thread may be decoding the one it was given.
            texts = texts + added
            chars += sum(len(text) for text in added)
        with self._lock:
            # A history too large to keep is read whole each time, as before.
            self._read = (head, length, texts, chars) if chars <= _READ_CHARS_MAX else ("", 0, [], 0)
        return texts

    def _latest(self, head: str, length: int, limit: int) -> List[Item]:
        if limit == 0:
            return []
        if limit < 0:
            return [_decode(text) for _, text in self.store.items(head, 0, length)]
        start = max(0, length - limit)
        while True:
            found = self.store.items(head, start, length)
            # A record another agent wrote may make several items, or none: read back further
            # until there are enough.
            if len(found) >= limit or start == 0:
                return [_decode(text) for _, text in found[-limit:]]
            start = max(0, start - limit)

    def projected_items(self, head: str) -> List[Item]:
        """The projection of ``head`` under the window as items, compacting first when due.
        A view that keeps every record verbatim is the items themselves."""
        assert self.window is not None and self.max_output is not None and self.reserve is not None
        # The reserve is planned for as more output: what the budget holds back from history.
        held_back = self.max_output + self.reserve
        view = self.store.project(head, self.window, held_back, responses_items=True)
        if view["stats"]["compactionDue"]:
            try:
                self.store.compact(head, self.window, held_back)
                view = self.store.project(head, self.window, held_back, responses_items=True)
            except BadInputError:
                raise
            except AnnalError:
                # Compacting is what keeps later views' prefix stable; the view derived above
                # already fits, so a compaction that could not be made (another process holds
                # its claim, a read-only store) does not fail the run.
                pass
        if view["stats"]["source"]["kind"] == "live":
            return [_decode(text) for _, text in self.store.items(head)]
        return [_unwrap(item) for item in view["items"]]

    def lineage(self) -> List[Tuple[str, int]]:
        """The annal sessions whose records this session shows: its head, then each ancestor
        with the number of its records the descendant shares."""
        name, length, _ = self.head()
        chain = [(name, length)]
        info = self.store.session(name)
        while info is not None and info["parent"] is not None:
            # A record of an ancestor is shown only below every fork point on the way down.
            chain.append((info["parent"], min(info["forkAt"], chain[-1][1])))
            info = self.store.session(info["parent"])
        return chain

    def close(self) -> None:
        """Closes the session: every later call raises :class:`SessionClosedError`, as the
        SDK's sessions do. Closes the store too when this session opened it (one shared with
        other sessions stays open for them). Closing again does nothing."""
        self._closed = True
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> "AnnalSession":
        """The session itself; leaving the block closes it."""
        return self

    def __exit__(self, *_exc: Any) -> None:
        """Closes the session."""
        self.close()

    def __repr__(self) -> str:
        """The session id and the generation it shows."""
        return f"AnnalSession({self.session_id!r}, head={self.generation_name(self._generation)!r})"


class _OpenSession:
    """What :meth:`AnnalSession._open` returns: the store's ``ClosedError`` as the session's."""

    def __init__(self, session: AnnalSession) -> None:
        self.session = session

    def __enter__(self) -> None:
        """Nothing to do on the way in: :meth:`AnnalSession._open` checked the session."""
        return None

    def __exit__(self, kind: Any, error: Any, _trace: Any) -> bool:
        """Raises the store's ``ClosedError`` as :class:`SessionClosedError`; lets any other
        exception through."""
        if isinstance(error, ClosedError) and not isinstance(error, SessionClosedError):
            raise SessionClosedError(f"AnnalSession {self.session.session_id!r} is closed: {error}") from error
        return False


_CHANGE_THREADS: Optional[ThreadPoolExecutor] = None
"""The threads changes run in, made at the first change: a change is a blocking call (its sync),
so it leaves the event loop, as the SDK's sessions leave it for theirs. The module's own rather
than the loop's default executor, and it outlives a loop: one per process."""
_CHANGE_THREADS_LOCK = threading.Lock()


def _change_threads() -> ThreadPoolExecutor:
    global _CHANGE_THREADS
    with _CHANGE_THREADS_LOCK:
        if _CHANGE_THREADS is None:
            _CHANGE_THREADS = ThreadPoolExecutor(thread_name_prefix="annal-session")
        return _CHANGE_THREADS


def _forget_change_threads() -> None:
    """In a forked child: the parent's pool has no threads here, though it counts them as idle,
    so a change handed to it would never run. The child makes its own at its first change."""
    global _CHANGE_THREADS, _CHANGE_THREADS_LOCK
    _CHANGE_THREADS = None
    _CHANGE_THREADS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_change_threads)


class _Change:
    """One change running in a thread, and how the coroutine awaiting it hears of its end: the
    thread keeps the outcome and wakes whichever future the coroutine awaits at that moment
    (a cancelled wait is replaced by a new one)."""

    __slots__ = ("_loop", "_lock", "_waiter", "_outcome")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._waiter: Optional[asyncio.Future] = None
        self._outcome: Optional[Tuple[bool, Any]] = None

    def run(self, context: contextvars.Context, call: Callable[..., Any], args: Tuple[Any, ...]) -> None:
        try:
            outcome: Tuple[bool, Any] = (True, context.run(call, *args))
        except BaseException as err:  # handed to the awaiting coroutine, which raises it
            outcome = (False, err)
        with self._lock:
            self._outcome = outcome
            waiter = self._waiter
        if waiter is not None:
            try:
                self._loop.call_soon_threadsafe(_wake, waiter)
            except RuntimeError:
                pass  # the loop closed: nobody is waiting any more

    def wait_step(self) -> Union[asyncio.Future, Tuple[bool, Any]]:
        """The outcome, once the change has ended: (True, what it returned) or (False, what it
        raised); until then a new future to await, woken when it ends."""
        with self._lock:
            if self._outcome is not None:
                return self._outcome
            self._waiter = self._loop.create_future()
            return self._waiter


def _wake(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def _finish(call: Callable[..., T], *args: Any) -> T:
    """Runs ``call(*args)`` in a thread and awaits it to its end even when the caller is
    cancelled, then raises the cancellation: as the SDK's sessions do, so a cancelled caller
    knows the change was made (or failed) before it goes on, never that it is still running in a
    thread. The change starts whatever happens next, as a task would: the thread is asked for
    before the first wait. Cheaper than a task awaited with ``asyncio.wait``, which costs an
    add more than the thread it waits for."""
    change = _Change(asyncio.get_running_loop())
    _change_threads().submit(change.run, contextvars.copy_context(), call, args)
    cancelled: Optional[BaseException] = None
    while True:
        step = change.wait_step()
        if isinstance(step, tuple):
            ok, value = step
            break
        try:
            await step
        except asyncio.CancelledError as err:
            if cancelled is None:
                cancelled = err
    if not ok and isinstance(value, (KeyboardInterrupt, SystemExit)):
        raise value  # the process is stopping: that goes before a cancellation
    if cancelled is not None:
        raise cancelled from None
    if not ok:
        raise value
    return value


def _encode(item: Item, index: int) -> str:
    """The JSON text ``item`` is stored as: its own, when it is an object the store can keep
    (keys in their order, text unescaped); otherwise an object of :data:`ITEM_JSON_KEY` holding
    the text the SDK's ``SQLiteSession`` stores for it, so it reads back as it does there."""
    # The SDK's sessions take any value json.dumps takes, and refuse the rest with its error.
    try:
        text = json.dumps(item, ensure_ascii=False, allow_nan=False)
    except TypeError as err:
        raise ItemTypeError(f"item {index} of the batch is not JSON: {err}") from None
    except ValueError:
        text = None  # NaN or an infinity, which strict JSON has no words for; or a cycle
    if text is not None and isinstance(item, dict) and not _wraps(item):
        # An ASCII text holds no lone surrogate: only another needs encoding to find out.
        if text.isascii():
            return text
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            pass  # a lone surrogate: only an escaped text can hold it
    return _held_as_text(item, index)


def _held_as_text(item: Item, index: int) -> str:
    """The object of :data:`ITEM_JSON_KEY` holding the text the SDK's ``SQLiteSession`` stores
    for ``item`` (``json.dumps`` with its defaults)."""
    try:
        sdk_text = json.dumps(item)
    except TypeError as err:
        raise ItemTypeError(f"item {index} of the batch is not JSON: {err}") from None
    except ValueError as err:
        raise BadInputError(f"item {index} of the batch is not JSON: {err}") from None
    return json.dumps({ITEM_JSON_KEY: sdk_text}, ensure_ascii=False)


_REFUSED_ITEM = re.compile(r"\bitem (\d+): not a Responses item")


def _refused_item(message: str, ids: List[str]) -> Optional[int]:
    """Which item of a batch the store's refusal names, by its index or its entry id; None
    when it names none (the batch as a whole was refused)."""
    found = _REFUSED_ITEM.search(message)
    if found is not None and int(found.group(1)) < len(ids):
        return int(found.group(1))
    for index, entry_id in enumerate(ids):
        if f'"{entry_id}"' in message:
            return index
    return None


#: The most text :meth:`AnnalSession._item_texts` keeps between calls (64 Mi characters).
_READ_CHARS_MAX = 64 << 20


def _wraps(value: Any) -> bool:
    """Whether ``value`` has the shape of an item held as text: an object of just
    :data:`ITEM_JSON_KEY`."""
    return isinstance(value, dict) and len(value) == 1 and ITEM_JSON_KEY in value


def _unwrap(value: Any) -> Any:
    """The item ``value`` holds when it is one held as text (see :func:`_encode`); else itself."""
    if _wraps(value) and isinstance(value[ITEM_JSON_KEY], str):
        return json.loads(value[ITEM_JSON_KEY])
    return value


def _decode(text: str) -> Item:
    """The item stored as ``text``."""
    return _unwrap(json.loads(text))


@dataclasses.dataclass
class _FallbackSettings:
    """Stands for the SDK's ``SessionSettings`` where the SDK is not installed."""

    limit: Optional[int] = None


def _settings_class() -> Tuple[type, Callable[[Any], Any]]:
    """The SDK's ``SessionSettings`` and the function that makes one from a dict (or
    stand-ins, when the SDK is not installed)."""
    try:
        from agents.memory.session_settings import SessionSettings, coerce_session_settings
    except ImportError:
        return _FallbackSettings, _coerce_fallback
    return SessionSettings, coerce_session_settings


def _coerce_fallback(value: Any) -> _FallbackSettings:
    """The SDK's ``coerce_session_settings``, for :class:`_FallbackSettings`."""
    if isinstance(value, _FallbackSettings):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"session must be a SessionSettings instance or a dict, got {type(value).__name__}")
    unknown = sorted(str(name) for name in value if name != "limit")
    if unknown:
        raise TypeError(f"Unknown session settings: {', '.join(unknown)}")
    return _FallbackSettings(**value)


def _settings(value: Any) -> Any:
    """``session_settings`` as the SDK's sessions keep it: ``SessionSettings()`` for None, one
    made from a dict, a ``SessionSettings`` itself; TypeError for anything else."""
    settings_class, coerce = _settings_class()
    return settings_class() if value is None else coerce(value)


def _coerce_settings(value: Any) -> Any:
    """Settings given (or assigned later) as a ``SessionSettings`` or a dict, as one."""
    return _settings_class()[1](value)


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


def history_tools(source: Union[AnnalSession, Store]) -> List["FunctionTool"]:
    """``history_search`` and ``history_get``, as Agents SDK function tools: an agent finds what
    a projection left out by its words, then reads the original verbatim by the id a marker or
    hit names.

    Given an :class:`AnnalSession`, they see what that session shows (its head and what it
    inherits, resolved at each call), and nothing of other sessions; given a :class:`Store`,
    they see every session in it (for an agent looking up what earlier sessions did)."""
    from agents import function_tool

    session = source if isinstance(source, AnnalSession) else None
    store = source.store if session is not None else source

    def scope() -> Optional[List[Tuple[str, int]]]:
        return session.lineage() if session is not None else None

    async def history_search(query: str, limit: int = 10) -> str:
        """Search every stored original (user and assistant text, tool calls and outputs, also
        what the conversation view left out) by its words; returns ids for history_get.

        Args:
            query: Words, identifiers or "exact phrases"; AND, OR, NOT and -word work.
            limit: The most hits to return.
        """

        def search() -> List[dict]:
            lineage = scope()
            head = lineage[0][0] if lineage else None
            return store.search(query, session=head, limit=max(1, min(limit, 50)))

        return render_hits(query, await asyncio.to_thread(search))

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

        def get() -> dict:
            original = store.get(id, lines)
            lineage = scope()
            if lineage is not None and not any(
                original["session"] == name and original["sourceOrder"] < upto for name, upto in lineage
            ):
                raise BadInputError(f"no entry {id!r} in this conversation")
            return original

        return render_original(await asyncio.to_thread(get))

    def failure(_ctx: Any, error: Exception) -> str:
        return str(error)

    return [
        function_tool(history_search, failure_error_function=failure),
        function_tool(history_get, failure_error_function=failure),
    ]
