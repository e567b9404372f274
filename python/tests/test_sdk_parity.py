"""AnnalSession against the Agents SDK's own SQLiteSession, side by side: the same calls on both,
the same answers (values, their types and order, exceptions of the class the SDK raises,
``session_settings``), over many sequences of calls and real-world text."""

from __future__ import annotations

import asyncio
import inspect
import json
import random
from typing import Any, Callable, List, Optional, Tuple

import pytest
from agents import SQLiteSession
from agents.memory import Session, SessionSettings

import annal
from annal.agents import ITEM_JSON_KEY, AnnalSession
from conftest import WORLD_TEXT

# A step is (handle, operation, argument): handle 0 or 1 names one of two session objects with
# the same id on the same backing file (the SDK's sessions share a file; annal's share a store).
Step = Tuple[int, str, Any]


def canon(value: Any) -> str:
    """A value as comparable text: json.dumps keeps key order and tells 1 from 1.0 and True,
    and writes NaN, which never equals itself, as a word."""
    return json.dumps(value)


class Pair:
    """One side's two session objects, built the same way on both sides."""

    def __init__(self, make: Callable[[], Any], on_close: Callable[[], None]):
        self.handles = [make(), make()]
        self.on_close = on_close

    def close(self) -> None:
        """Closes both handles and what they share."""
        for handle in self.handles:
            handle.close()
        self.on_close()


def sdk_pair(tmp_path, **kwargs: Any) -> Pair:
    """Two SQLiteSessions of id "chat" on one file."""
    path = str(tmp_path / "sdk.sqlite")
    return Pair(lambda: SQLiteSession("chat", path, **kwargs), lambda: None)


def annal_pair(tmp_path, **kwargs: Any) -> Pair:
    """Two AnnalSessions of id "chat" on one store."""
    store = annal.Store(tmp_path / "annal.redb")
    return Pair(lambda: AnnalSession(store, "chat", **kwargs), store.close)


# A window far larger than any sequence here: its projection keeps every record, so even
# get_items() without a limit answers as the SDK's sessions do.
WINDOWS = [None, 1_000_000]


async def apply(session: Any, operation: str, argument: Any) -> Tuple[str, Any]:
    """Runs one operation; ("ok", its answer as text) or ("raise", the exception)."""
    try:
        if operation == "add":
            # A function makes the batch afresh for each side (a generator is used up by one).
            result = await session.add_items(argument() if inspect.isfunction(argument) else argument)
        elif operation == "get":
            result = await session.get_items() if argument == "none" else await session.get_items(limit=argument)
        elif operation == "pop":
            result = await session.pop_item()
        elif operation == "clear":
            result = await session.clear_session()
        elif operation == "close":
            result = session.close()
        elif operation == "set":
            session.session_settings = argument
            result = None
        elif operation == "settings":
            result = repr(session.session_settings)
        else:  # pragma: no cover
            raise AssertionError(operation)
    except Exception as err:  # the answer under test
        return "raise", err
    return "ok", canon(result)


def run_side_by_side(tmp_path, steps: List[Step], window: Optional[int] = None, **kwargs: Any) -> List[Any]:
    """Runs ``steps`` on both sides (annal's with ``window``) and asserts each answer equal;
    returns the SDK's."""

    async def go() -> List[Tuple[str, Any]]:
        theirs, ours = sdk_pair(tmp_path, **kwargs), annal_pair(tmp_path, window=window, **kwargs)
        answers = []
        try:
            for number, (handle, operation, argument) in enumerate(steps):
                expected = await apply(theirs.handles[handle], operation, argument)
                got = await apply(ours.handles[handle], operation, argument)
                where = f"step {number}: {operation} on handle {handle}"
                if expected[0] == "raise":
                    assert got[0] == "raise", f"{where}: the SDK raised {expected[1]!r}, annal gave {got[1]!r}"
                    assert isinstance(got[1], type(expected[1])), f"{where}: {got[1]!r} is not a {type(expected[1])}"
                else:
                    assert got == expected, where
                answers.append(expected)
            # Both sides end with the same history, read whole.
            for handle in (0, 1):
                final = [await apply(side.handles[handle], "get", "none") for side in (theirs, ours)]
                assert final[1] == final[0] if final[0][0] == "ok" else final[1][0] == "raise"
        finally:
            theirs.close()
            ours.close()
        return answers

    return asyncio.run(go())


def user(text: str) -> dict:
    """A user message as the SDK keeps a string input."""
    return {"content": text, "role": "user"}


def world_items() -> List[dict]:
    """Responses-API items carrying real-world text: message parts, a reasoning summary, a call
    whose arguments are JSON text, its 20,000-character output, an assistant answer."""
    return [
        user(WORLD_TEXT[0]),
        {"role": "user", "content": [{"type": "input_text", "text": WORLD_TEXT[1]}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": WORLD_TEXT[2]}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "grep",
         "arguments": json.dumps({"pattern": WORLD_TEXT[3]}, ensure_ascii=False), "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": WORLD_TEXT[5]},
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": WORLD_TEXT[4], "annotations": [], "logprobs": []}]},
    ]


def nested(depth: int, empty: Any) -> Any:
    """An item nested ``depth`` deep: objects of "a" (``empty`` a dict), or lists."""
    item: Any = {} if isinstance(empty, dict) else []
    inner = item
    for _ in range(depth):
        deeper: Any = {} if isinstance(empty, dict) else []
        if isinstance(inner, dict):
            inner["a"] = deeper
        else:
            inner.append(deeper)
        inner = deeper
    return {"deep": item}


def every_read(handle: int = 0) -> List[Step]:
    """Reads of every kind: all, by limits of each sign, past the end."""
    return [(handle, "get", limit) for limit in ("none", 0, 1, 2, 3, 100, -1, -7, True, False)]


NON_OBJECTS = ["just a string", 5, 2.5, None, True, [1, "two", {"3": 4}], "", [], {}]

SEQUENCES = {
    "empty session": every_read() + [(0, "pop", None), (0, "clear", None), (0, "pop", None)],
    "add, read, pop to empty": [(0, "add", [user(f"m{i}") for i in range(5)])] + every_read()
    + [(0, "pop", None)] * 6 + every_read(),
    "world text": [(0, "add", world_items())] + every_read() + [(0, "pop", None), (0, "pop", None)]
    + every_read() + [(0, "add", [user(text) for text in WORLD_TEXT])] + every_read(),
    "world text one item at a time": [(0, "add", [item]) for item in world_items()] + every_read(),
    "the same item twice": [(0, "add", [user("same"), user("same")]), (0, "add", [user("same")])]
    + every_read() + [(0, "pop", None)] + every_read(),
    "items that are not objects": [(0, "add", NON_OBJECTS)] + every_read()
    + [(0, "pop", None)] * 4 + every_read(),
    "numbers json keeps": [(0, "add", [{"int": 10**30, "neg0": -0.0, "exp": 1e16, "tiny": 5e-324,
                                        "big": 1.7976931348623157e308, "bool": False, "none": None}])]
    + every_read(),
    "NaN and infinities": [(0, "add", [{"a": float("nan")}, {"b": float("inf"), "c": [float("-inf")]}])]
    + every_read() + [(0, "pop", None)] + every_read(),
    "a lone surrogate": [(0, "add", [user("half \ud83d of a pair"), {"k\udc00": "v"}])] + every_read()
    + [(0, "pop", None)] + every_read(),
    "keys that are not strings": [(0, "add", [{1: "one", 2.5: "x", None: "n", True: "t"}])] + every_read(),
    "tuples and nested order": [(0, "add", [{"z": (1, (2, 3)), "a": {"y": 1, "b": 2}}])] + every_read(),
    "objects of annal's own held-as-text key": [(0, "add", [
        {ITEM_JSON_KEY: "x"}, {ITEM_JSON_KEY: 5}, {ITEM_JSON_KEY: '{"a": 1}'}, {ITEM_JSON_KEY: "1", "b": 2},
        {ITEM_JSON_KEY: {ITEM_JSON_KEY: "[]"}}])] + every_read() + [(0, "pop", None)] * 2 + every_read(),
    "items that are not JSON": [
        (0, "add", [user("kept?"), {"x": {1, 2}}]), (0, "add", [b"bytes"]), (0, "add", [object()]),
        (0, "add", [{(1, 2): "tuple key"}]), (0, "add", [{"nan": float("nan"), "set": {1}}]),
    ] + every_read() + [(0, "add", [user("after")])] + every_read(),
    "a batch that is not a list": [
        (0, "add", (user("tuple"),)), (0, "add", lambda: (user(f"gen{i}") for i in range(3))), (0, "add", "ab"),
        (0, "add", {"role": "user"}), (0, "add", None), (0, "add", 5), (0, "add", [user("x"), 5, [6]]),
        (0, "add", []), (0, "add", ()),
    ] + every_read(),
    "clear, then go on": [(0, "add", [user("a"), user("b")]), (0, "clear", None)] + every_read()
    + [(0, "add", [user("c")]), (0, "pop", None), (0, "add", [user("d")]), (0, "clear", None),
       (0, "clear", None), (0, "add", [user("e"), user("f")])] + every_read(),
    "two handles on one session": [
        (0, "add", [user("from 0")]), (1, "get", "none"), (1, "add", [user("from 1")]), (0, "get", "none"),
        (1, "pop", None), (0, "get", "none"), (0, "pop", None), (1, "get", "none"), (0, "add", [user("x")]),
        (1, "clear", None), (0, "get", "none"), (0, "add", [user("y")]), (1, "get", 1),
    ],
    "closed": [
        (0, "add", [user("before")]), (0, "close", None), (0, "get", "none"), (0, "get", 1), (0, "add", []),
        (0, "add", [user("after")]), (0, "pop", None), (0, "clear", None), (0, "close", None),
        (0, "settings", None),
        # The other handle on the same session is open still, and sees what the closed one added.
        (1, "get", "none"), (1, "add", [user("other")]), (1, "pop", None), (1, "get", "none"),
    ],
    "settings assigned later": [(0, "add", [user(f"m{i}") for i in range(6)]), (0, "settings", None)]
    + [step for value in (SessionSettings(limit=2), {"limit": 4}, {}, SessionSettings(), {"limit": 0},
                          {"limit": -1}, None, {"limit": 1})
       for step in [(0, "set", value), (0, "get", "none"), (0, "get", 3), (0, "pop", None)]]
    + [(0, "set", 5), (0, "get", "none"), (0, "get", 2), (0, "set", {"nope": 1}), (0, "get", "none")],
    "nested deeper than JSON readers go": [(0, "add", [nested(200, {}), user("between"), nested(300, [])])]
    + every_read() + [(0, "pop", None)] + every_read(),
    "more parts than a record holds blocks": [(0, "add", [user("before"), {"role": "user", "content": [
        {"type": "input_text", "text": f"part {i} {WORLD_TEXT[i % 5]}"} for i in range(10_001)]}])]
    + every_read() + [(0, "pop", None), (0, "pop", None)] + every_read(),
    "limits of other types": [(0, "add", [user(f"t{i}") for i in range(4)])]
    + [(0, "get", limit) for limit in (-1.0, 0.0, 2.0, 4.0, "2", [1], 2**62, -(2**62))],
    "many items, many pops": [(0, "add", [user(f"n{i} {WORLD_TEXT[i % 5]}") for i in range(150)])]
    + [(i % 2, "pop", None) for i in range(40)] + every_read() + [(1, "get", 55), (0, "get", 110)],
}


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequences(tmp_path, name, window):
    """Each named sequence, step by step, on both sides."""
    run_side_by_side(tmp_path, SEQUENCES[name], window)


@pytest.mark.parametrize("settings", [None, {"limit": 3}, SessionSettings(limit=2), {"limit": None}, {}, {"limit": 0},
                                      {"limit": -2}, {"limit": "4"}])
@pytest.mark.parametrize("window", WINDOWS)
def test_session_settings(tmp_path, settings, window):
    """Settings given at construction: the same settings kept, the same limit applied."""
    steps = [(0, "settings", None), (1, "settings", None), (0, "add", [user(f"s{i}") for i in range(6)])]
    steps += every_read() + every_read(1) + [(0, "pop", None), (0, "get", "none")]
    run_side_by_side(tmp_path, steps, window, session_settings=settings)


@pytest.mark.parametrize("settings", [5, "limit=3", {"nope": 1}, {"limit": "many"}, [("limit", 2)]])
def test_bad_session_settings_raise_as_the_sdks(tmp_path, settings):
    """Settings the SDK refuses are refused with the same class of exception."""
    with pytest.raises(Exception) as theirs:
        SQLiteSession("chat", str(tmp_path / "sdk.sqlite"), session_settings=settings)
    with annal.Store(tmp_path / "annal.redb") as store:
        with pytest.raises(type(theirs.value)):
            AnnalSession(store, "chat", session_settings=settings)


def test_a_settings_object_given_is_kept(tmp_path):
    """The settings object given is the one kept; each default is a new SessionSettings()."""
    settings = SessionSettings(limit=2)
    sqlite = SQLiteSession("chat", str(tmp_path / "sdk.sqlite"), session_settings=settings)
    with annal.Store(tmp_path / "annal.redb") as store:
        assert AnnalSession(store, "chat", session_settings=settings).session_settings is settings
        assert sqlite.session_settings is settings
        # Without settings, each session has a default of its own, as the SDK's do.
        first, second = AnnalSession(store, "a"), AnnalSession(store, "b")
        assert first.session_settings == SessionSettings() and first.session_settings is not second.session_settings
    sqlite.close()


def test_the_protocol_surface(tmp_path):
    """What code that takes any Session can look at: the protocol check, coroutine methods,
    the attributes, the types of answers."""
    sqlite = SQLiteSession("chat", str(tmp_path / "sdk.sqlite"))
    with annal.Store(tmp_path / "annal.redb") as store:
        ours = AnnalSession(store, "chat")
        for session in (sqlite, ours):
            assert isinstance(session, Session)
            assert type(session).session_settings is None, "declared on the class, as the protocol does"
            assert session.session_id == "chat"
            assert session.session_settings == SessionSettings() and session.session_settings.limit is None
            for method in ("get_items", "add_items", "pop_item", "clear_session"):
                assert inspect.iscoroutinefunction(getattr(session, method)), method
            assert callable(session.close) and not inspect.iscoroutinefunction(session.close)

        async def answers(session: Any) -> List[Any]:
            item = user("types")
            added = await session.add_items([item])
            got = await session.get_items()
            got_again = await session.get_items()
            # Each read is a new list of new objects: changing one changes nothing stored.
            got[0]["content"] = "changed"
            got.append("extra")
            popped = await session.pop_item()
            return [added, type(got), got_again, got_again[0] is not item, popped, type(popped)]

        assert asyncio.run(answers(ours)) == asyncio.run(answers(sqlite))
    sqlite.close()


def test_an_item_changed_after_it_was_added(tmp_path):
    """An item is stored as it was when added: later changes to the caller's object, or to what
    was read back, change nothing stored."""

    async def story(session: Any) -> List[str]:
        item = user("first")
        await session.add_items([item, item])
        item["content"] = "second"
        await session.add_items([item])
        read = await session.get_items()
        read[0]["content"] = "mutated"
        return [canon(await session.get_items()), canon(await session.pop_item())]

    sqlite = SQLiteSession("chat", str(tmp_path / "sdk.sqlite"))
    with annal.Store(tmp_path / "annal.redb") as store:
        assert asyncio.run(story(AnnalSession(store, "chat"))) == asyncio.run(story(sqlite))
    sqlite.close()


@pytest.mark.parametrize("operation", ["add", "pop", "clear"])
def test_a_cancelled_change_is_finished_before_the_cancellation(tmp_path, operation):
    """A caller cancelled while a change runs gets the cancellation only once the change is made,
    as with the SDK's sessions: what it reads next already shows it."""

    async def story(session: Any) -> List[str]:
        await session.add_items([user(f"c{i}") for i in range(3)])
        call = {"add": lambda: session.add_items([user("cancelled add")]), "pop": session.pop_item,
                "clear": session.clear_session}[operation]
        task = asyncio.ensure_future(call())
        await asyncio.sleep(0)  # the change has started
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return [canon(await session.get_items())]

    sqlite = SQLiteSession("chat", str(tmp_path / "sdk.sqlite"))
    with annal.Store(tmp_path / "annal.redb") as store:
        theirs = asyncio.run(story(sqlite))
        assert asyncio.run(story(AnnalSession(store, "chat"))) == theirs
        assert theirs != [canon([user(f"c{i}") for i in range(3)])], "the change was made"
    sqlite.close()


def test_a_closed_session_raises_as_the_sdks(tmp_path):
    """Every call on a closed session raises a RuntimeError, as the SDK's do; so does a session
    whose store was closed under it; closing twice is fine."""
    sqlite = SQLiteSession("chat", str(tmp_path / "sdk.sqlite"))
    sqlite.close()
    owned = AnnalSession(tmp_path / "owned.redb", "chat")
    owned.close()
    store = annal.Store(tmp_path / "shared.redb")
    shared = AnnalSession(store, "chat")
    store.close()  # by whoever owns it: the session cannot go on either

    async def calls(session: Any) -> List[Optional[type]]:
        raised = []
        for call in (lambda: session.get_items(), lambda: session.get_items(limit=1), lambda: session.add_items([]),
                     lambda: session.add_items([user("x")]), session.pop_item, session.clear_session):
            try:
                await call()
                raised.append(None)
            except RuntimeError:
                raised.append(RuntimeError)
        session.close()
        return raised

    expected = asyncio.run(calls(sqlite))
    assert expected == [RuntimeError] * 6
    assert asyncio.run(calls(owned)) == expected
    assert asyncio.run(calls(shared)) == expected
    with pytest.raises(annal.ClosedError):
        owned.get_items_sync()


def random_steps(seed: int, count: int) -> List[Step]:
    """A reproducible random sequence over both handles: adds of real-world items of every kind,
    reads with every kind of limit, pops, clears, settings changed."""
    rng = random.Random(seed)
    pool = world_items() + [user(text) for text in WORLD_TEXT] + NON_OBJECTS + [
        {"a": float("nan")}, {"s": "lone \udfff"}, {ITEM_JSON_KEY: "held"}, user("same"), user("same"),
    ]
    steps: List[Step] = []
    for _ in range(count):
        handle = rng.randrange(2)
        roll = rng.random()
        if roll < 0.35:
            steps.append((handle, "add", rng.sample(pool, rng.randint(0, 4))))
        elif roll < 0.65:
            steps.append((handle, "get", rng.choice(["none", 0, 1, 2, 5, 50, -1])))
        elif roll < 0.85:
            steps.append((handle, "pop", None))
        elif roll < 0.92:
            steps.append((handle, "clear", None))
        else:
            steps.append((handle, "set", rng.choice([None, {"limit": 2}, SessionSettings(limit=3), {}])))
    return steps


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("seed", range(24))
def test_random_sequences(tmp_path, seed, window):
    """Random sequences over both handles, step by step, on both sides."""
    run_side_by_side(tmp_path, random_steps(seed, 40), window)
