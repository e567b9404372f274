"""annal.agents.AnnalSession with the real openai-agents package, and no network: a Model
that answers from a script, run by Runner.run, against the SDK's own SQLiteSession."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import signal
import threading
import time
from typing import Any, AsyncIterator, Callable, List, Union

import pytest
from agents import Agent, ModelSettings, Runner, SQLiteSession, function_tool
from agents.items import ModelResponse, TResponseInputItem
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import annal
from annal.agents import AnnalSession, history_tools
from conftest import WORLD_TEXT, noise

Step = Union[list, Callable[[list], list]]


def say(text: str, n: int) -> ResponseOutputMessage:
    """An assistant message as a model returns it."""
    return ResponseOutputMessage(
        id=f"msg_{n}",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
    )


def call(name: str, arguments: dict, n: int) -> ResponseFunctionToolCall:
    """A function call as a model returns it."""
    return ResponseFunctionToolCall(
        id=f"fc_{n}", call_id=f"call_{n}", type="function_call", name=name, arguments=json.dumps(arguments)
    )


class ScriptModel(Model):
    """Answers each call with the next step of its script (a list of output items, or a function
    of the input that makes them), and keeps what each call was given."""

    def __init__(self, steps: List[Step]):
        self.steps = list(steps)
        self.calls: List[dict] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None, **_: Any):
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.calls.append({"instructions": system_instructions or "", "input": items, "tools": tools})
        step = self.steps.pop(0)
        output = step(items) if callable(step) else step
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")


@function_tool
def read_file(path: str) -> str:
    """Read a file of the project.

    Args:
        path: The file's path.
    """
    n = int(re.sub(r"\D", "", path) or 0)
    return f"// {path}\n" + noise(n, 900) + f"\nfn checksum_{n:04}() -> u32 {{ {n * 7919} }}\n"


def weather_script() -> List[Step]:
    """Two runs: a tool call, its answer, then a second turn's answer."""
    return [
        [call("read_file", {"path": "src/ledger1.rs"}, 1)],
        [say("The ledger sums balances 東京 🚀; nothing to fix.", 2)],
        [say("Second turn: done, ready for review.", 3)],
    ]


async def run_two_turns(session) -> List[list]:
    """Runs the script against ``session`` and returns its items after each run."""
    model = ScriptModel(weather_script())
    agent = Agent(name="coder", instructions="You fix code.", model=model, tools=[read_file])
    seen = []
    await Runner.run(agent, f"Fix the ledger, please{WORLD_TEXT[0][-8:]}", session=session)
    seen.append(await session.get_items())
    await Runner.run(agent, "And now review it " + WORLD_TEXT[2], session=session)
    seen.append(await session.get_items())
    return seen


def test_items_equal_the_sdks_own_session(tmp_path):
    async def both():
        sqlite = SQLiteSession("chat", str(tmp_path / "sdk.sqlite"))
        with annal.Store(tmp_path / "s.redb") as store:
            ours = AnnalSession(store, "chat")
            theirs_seen = await run_two_turns(sqlite)
            ours_seen = await run_two_turns(ours)
            assert ours_seen == theirs_seen
            kinds = [item.get("type", "message") for item in ours_seen[1]]
            assert kinds == ["message", "function_call", "function_call_output", "message", "message", "message"]
            # Limits, pop and clear as the SDK documents them, side by side.
            assert await ours.get_items(limit=2) == await sqlite.get_items(limit=2)
            assert await ours.get_items(limit=0) == await sqlite.get_items(limit=0) == []
            assert await ours.pop_item() == await sqlite.pop_item()
            assert await ours.get_items() == await sqlite.get_items()
            await ours.clear_session()
            await sqlite.clear_session()
            assert await ours.get_items() == await sqlite.get_items() == []
            assert await ours.pop_item() is None and await sqlite.pop_item() is None
            # The session goes on after a clear, in its own generation.
            await ours.add_items([{"role": "user", "content": "again"}])
            await sqlite.add_items([{"role": "user", "content": "again"}])
            assert await ours.get_items() == await sqlite.get_items()
            # Nothing was deleted: every original is still stored, searchable and verifiable.
            assert store.search("ledger sums balances")[0]["session"] == "chat"
            names = [s["name"] for s in store.sessions()]
            assert names == ["chat", "chat~pop1", "chat~pop2"]
            assert store.session("chat")["records"] == 7, "six items and the seal of the pop"
            assert store.search("review", session="chat")[0]["session"] == "chat"
            assert store.verify()["ok"]
        sqlite.close()

    asyncio.run(both())


def test_items_round_trip_exactly(store):
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": WORLD_TEXT[3]}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think 🤔"}],
         "encrypted_content": "gAAAA=="},
        {"type": "function_call", "id": "fc_9", "call_id": "c9", "name": "run", "arguments": '{"b": 1, "a": [1.5, 2e-7]}'},
        {"type": "function_call_output", "call_id": "c9", "output": WORLD_TEXT[5]},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"id": "msg_2", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": WORLD_TEXT[4], "annotations": []}]},
    ]

    async def go():
        session = AnnalSession(store, "exact")
        await session.add_items(items[:3])
        await session.add_items(items[3:])
        back = await session.get_items()
        assert back == items
        assert [list(b) for b in back] == [list(i) for i in items], "keys keep their order"
        # Blocks were derived for search: the call's output and the text are found.
        assert store.search("end-of-long-line")[0]["type"] == "toolResult"
        assert store.search("ASCII")[0]["role"] == "assistant"

    asyncio.run(go())


def test_bad_items_and_names(store):
    async def go():
        with pytest.raises(annal.BadInputError, match="item 1 of the batch is not JSON"):
            await AnnalSession(store, "s").add_items([{"role": "user", "content": "ok"}, {"x": {1, 2}}])
        assert store.session("s") is None, "nothing of a refused batch is stored"
        with pytest.raises(annal.BadInputError):
            AnnalSession(store, "")
        with pytest.raises(annal.BadInputError, match="max_output and reserve need window"):
            AnnalSession(store, "s", max_output=100)
        # A session that merely looks like a later generation is not taken for one.
        store.append("t~pop1", [{"entryId": "x1", "role": "user", "blocks": [{"type": "text", "text": "other"}]}])
        session = AnnalSession(store, "t")
        await session.add_items([{"role": "user", "content": "mine"}])
        assert await session.get_items() == [{"role": "user", "content": "mine"}]
        with pytest.raises(annal.BadInputError, match="is not a fork of"):
            await session.pop_item()
        assert await session.get_items() == [{"role": "user", "content": "mine"}]

    asyncio.run(go())


def test_sessions_from_other_agents_read_as_items(store):
    # A session imported from another agent reads as items its blocks make.
    store.append("imported", [
        {"entryId": "i1", "role": "user", "blocks": [{"type": "text", "text": "list files"}]},
        {"entryId": "i2", "role": "assistant", "blocks": [
            {"type": "thinking", "text": "use ls"},
            {"type": "text", "text": "Listing."},
            {"type": "toolCall", "callId": "k1", "tool": "Bash", "input": {"command": "ls"}}]},
        {"entryId": "i3", "role": "tool", "blocks": [
            {"type": "toolResult", "callId": "k1", "tool": "Bash", "isError": False, "output": "a.rs\nb.rs"}]},
    ])
    items = AnnalSession(store, "imported").get_items_sync()
    assert items == [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "Listing."},
        {"type": "function_call", "call_id": "k1", "name": "Bash", "arguments": '{"command":"ls"}'},
        {"type": "function_call_output", "call_id": "k1", "output": "a.rs\nb.rs"},
    ]
    assert AnnalSession(store, "imported").get_items_sync(limit=1) == items[-1:]


def tokens(text: str) -> int:
    """annal's default count: a token per four characters."""
    return math.ceil(len(text) / 4)


def request_tokens(model_call: dict) -> int:
    """What one model request carries: instructions, tool definitions and every text of its
    input items (message text, call arguments, outputs)."""
    total = tokens(model_call["instructions"])
    for tool in model_call["tools"]:
        total += tokens(tool.name + tool.description + json.dumps(tool.params_json_schema))
    for item in model_call["input"]:
        content = item.get("content")
        if isinstance(content, str):
            total += tokens(content)
        elif isinstance(content, list):
            total += sum(tokens(part.get("text", "")) for part in content)
        total += tokens(item.get("arguments", "")) + tokens(str(item.get("output", "")))
    return total


WINDOW, MAX_OUTPUT = 16_384, 2_048


def test_a_long_conversation_stays_under_its_window(tmp_path):
    turns = 40

    def look_up(items: list) -> list:
        # Finds the omitted original by its words, then reads it by the id the hit names.
        output = next(i["output"] for i in reversed(items) if i.get("type") == "function_call_output")
        # As a model would: the hit that is a tool's output, not the question itself.
        found = re.search(r"^(\S+) \[[^\]]* toolResult\]", output, re.M)
        assert found, output
        return [call("history_get", {"id": found.group(1)}, 9_001)]

    script: List[Step] = []
    for n in range(1, turns + 1):
        script += [[call("read_file", {"path": f"src/mod{n}.rs"}, n)], [say(f"Read mod{n}: {noise(n, 60)}", n)]]
    script += [
        [call("history_search", {"query": "checksum_0007", "limit": 5}, 9_000)],
        look_up,
        [say("Found it.", 9_002)],
    ]

    async def go():
        with annal.Store(tmp_path / "s.redb") as store:
            model = ScriptModel(script)
            session = AnnalSession(store, "long", window=WINDOW, max_output=MAX_OUTPUT)
            agent = Agent(name="coder", instructions="You fix code.", model=model,
                          tools=[read_file, *history_tools(store)],
                          model_settings=ModelSettings(max_tokens=MAX_OUTPUT))
            for n in range(1, turns + 1):
                await Runner.run(agent, f"Read module {n} and tell me what it does {WORLD_TEXT[n % 5]}", session=session)
            result = await Runner.run(agent, "What did checksum_0007 return?", session=session)
            sizes = [request_tokens(c) for c in model.calls]
            # What the closing note reports (`pytest -s -k long` prints it).
            print(f"\n{len(sizes)} model calls, largest request {max(sizes)} tokens, all {sum(sizes)} tokens")
            assert max(sizes) + MAX_OUTPUT <= WINDOW, f"largest request {max(sizes)} tokens"
            assert sum(sizes) > 4 * WINDOW, "the conversation is long enough to need projecting"
            # The early file was left out of what the model saw at the end...
            last_turn = model.calls[-3]["input"]
            assert f"checksum_0007() -> u32 {{ {7 * 7919} }}" not in json.dumps(last_turn, ensure_ascii=False)
            # ...and the tools found it: the original, verbatim.
            got = model.calls[-1]["input"][-1]["output"]
            assert f"fn checksum_0007() -> u32 {{ {7 * 7919} }}" in got
            assert result.final_output == "Found it."
            # Compaction committed checkpoints; every item is still stored verbatim.
            # Limits and pops after compactions behave as the SDK's own session with the same items
            # (the checkpoints' receipts are not items).
            everything = await session.get_items(limit=100_000)
            assert not any("compaction receipt" in json.dumps(item) for item in everything)
            sqlite = SQLiteSession("long", str(tmp_path / "sdk.sqlite"))
            await sqlite.add_items(everything)
            assert await session.get_items(limit=7) == await sqlite.get_items(limit=7)
            for _ in range(3):
                assert await session.pop_item() == await sqlite.pop_item()
            assert await session.get_items(limit=100_000) == await sqlite.get_items()
            sqlite.close()
            await session.get_items()  # compacts when due, as before each run
            view = store.project(session.head()[0], WINDOW, MAX_OUTPUT + session.reserve)
            assert view["stats"]["source"]["kind"] == "checkpoint"
            assert store.verify()["ok"]

    asyncio.run(go())


def test_settings_and_names(store):
    """session_settings as the SDK gives them (a dict too); ids that would name a generation."""
    session = AnnalSession(store, "limited", session_settings={"limit": 2})
    session.add_items_sync([{"role": "user", "content": f"m{i}"} for i in range(5)])
    assert session.get_items_sync() == [{"role": "user", "content": "m3"}, {"role": "user", "content": "m4"}]
    with pytest.raises(annal.BadInputError, match="generations"):
        AnnalSession(store, "chat~pop1")
    with pytest.raises(annal.BadInputError, match="bytes"):
        AnnalSession(store, "x" * 300)
    with pytest.raises(annal.BadInputError, match="leave nothing"):
        AnnalSession(store, "s", window=16_384, max_output=16_000)
    with pytest.raises(annal.BadInputError, match="window"):
        AnnalSession(store, "s", window=-5)


def test_threads_share_one_session(store):
    """Threads adding and popping on one AnnalSession: every item is either shown or popped,
    once."""
    session = AnnalSession(store, "busy")
    popped, errors = [], []

    def add(t: int) -> None:
        try:
            for i in range(25):
                session.add_items_sync([{"role": "user", "content": f"t{t}-{i} 日本"}])
        except Exception as err:
            errors.append(err)

    def pop() -> None:
        try:
            for _ in range(10):
                item = session.pop_item_sync()
                if item is not None:
                    popped.append(item["content"])
        except Exception as err:
            errors.append(err)

    import threading

    threads = [threading.Thread(target=add, args=(t,)) for t in range(4)] + [threading.Thread(target=pop) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    shown = [item["content"] for item in session.get_items_sync()]
    added = {f"t{t}-{i} 日本" for t in range(4) for i in range(25)}
    assert len(shown) == len(set(shown)) and len(popped) == len(set(popped))
    assert set(shown) | set(popped) == added and not set(shown) & set(popped)
    assert store.verify()["ok"]


SECOND_PROCESS = """
import sys
from annal.agents import AnnalSession
with AnnalSession(sys.argv[1], "shared") as session:
    for i in range(30):
        session.add_items_sync([{"role": "assistant", "content": f"p2-{i}"}])
print("done")
"""


def test_a_second_process_adds_while_this_one_pops(store):
    """Another process adds to the session while this one pops: nothing is lost or shown twice."""
    import subprocess
    import sys

    session = AnnalSession(store, "shared")
    child = subprocess.Popen([sys.executable, "-c", SECOND_PROCESS, str(store.path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    popped = []
    for i in range(30):
        session.add_items_sync([{"role": "user", "content": f"p1-{i}"}])
        if i % 3 == 0:
            item = session.pop_item_sync()
            if item is not None:
                popped.append(item["content"])
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0 and out.strip() == "done", err
    shown = [item["content"] for item in session.get_items_sync()]
    added = {f"p1-{i}" for i in range(30)} | {f"p2-{i}" for i in range(30)}
    assert len(shown) == len(set(shown))
    assert set(shown) | set(popped) == added and not set(shown) & set(popped)


ADD_ONE = """
import sys
from annal.agents import AnnalSession
with AnnalSession(sys.argv[1], sys.argv[2]) as session:
    session.add_items_sync([{"role": "assistant", "content": sys.argv[3]}])
"""


def test_reading_again_sees_every_change_and_shares_no_item(store):
    """A session keeps the texts it read (records are never rewritten): every read still
    equals a fresh session's, after its own adds, another process's, a pop and a clear; and
    an item changed by a caller is not what the next read returns."""
    import subprocess
    import sys

    session = AnnalSession(store, "kept")

    def fresh() -> list:
        return AnnalSession(store, "kept").get_items_sync()

    assert session.get_items_sync() == [] == fresh()
    session.add_items_sync([{"role": "user", "content": text} for text in WORLD_TEXT[:3]])
    assert session.get_items_sync() == fresh() and len(fresh()) == 3
    shown = session.get_items_sync()
    shown[0]["content"] = "changed by the caller"
    shown.append({"role": "user", "content": "appended by the caller"})
    assert session.get_items_sync() == fresh() and session.get_items_sync()[0]["content"] == WORLD_TEXT[0]
    for n, text in enumerate(["from another process 🚀", "e\u0301 again"]):
        done = subprocess.run([sys.executable, "-c", ADD_ONE, str(store.path), "kept", text],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        read = session.get_items_sync()
        assert read == fresh() and read[-1]["content"] == text and len(read) == 4 + n
    # A pop, then more adds than it took away, before the next read: the session shown now
    # is another (a generation) that is longer than the one read before.
    assert session.pop_item_sync()["content"] == "e\u0301 again"
    session.add_items_sync([{"role": "user", "content": noise(7, 40)}])
    session.add_items_sync([{"role": "user", "content": "and one more"}])
    read = session.get_items_sync()
    assert read == fresh() and len(read) == 6 and "e\u0301 again" not in [item["content"] for item in read]
    asyncio.run(session.clear_session())
    session.add_items_sync([{"role": "user", "content": f"after the clear {n}"} for n in range(7)])
    assert [item["content"] for item in session.get_items_sync()] == [f"after the clear {n}" for n in range(7)]
    assert session.get_items_sync() == fresh()
    assert session.get_items_sync(limit=1) == fresh()[-1:]


def test_history_tools_see_what_their_session_shows(store):
    """A session's tools search and read its own history only; a store's tools see everything."""

    async def go():
        mine = AnnalSession(store, "mine")
        await mine.add_items([{"role": "user", "content": "the vault code is 4711"}])
        other = AnnalSession(store, "other")
        await other.add_items([{"role": "user", "content": "the vault code is 9999"}])
        await mine.clear_session()
        await mine.add_items([{"role": "user", "content": "vault again"}])
        from agents.tool_context import ToolContext

        async def invoke(tool, arguments: dict) -> str:
            text = json.dumps(arguments)
            context = ToolContext(context=None, tool_name=tool.name, tool_call_id="t1", tool_arguments=text)
            return await tool.on_invoke_tool(context, text)

        search, get = history_tools(mine)
        found = await invoke(search, {"query": "vault", "limit": 10})
        assert "vault again" in found and "9999" not in found and "4711" not in found
        other_id = store.records("other")[0]["entryId"]
        refused = await invoke(get, {"id": other_id, "first_line": 0, "last_line": 0})
        assert "no entry" in refused and "9999" not in refused
        search_all, get_all = history_tools(store)
        everywhere = await invoke(search_all, {"query": "vault code", "limit": 10})
        assert "4711" in everywhere and "9999" in everywhere
        mine_id = store.records("mine")[0]["entryId"]
        original = await invoke(get_all, {"id": mine_id, "first_line": 0, "last_line": 0})
        assert "the vault code is 4711" in original

    asyncio.run(go())


def test_a_seal_hidden_by_a_later_receipt_is_still_found(store):
    """A pop that sealed its generation and stopped before forking, then a compaction that
    appended its receipt after the seal: the next reader finds the seal and finishes the pop."""
    session = AnnalSession(store, "sealed")
    session.add_items_sync([{"role": "user", "content": f"m{i} 日本"} for i in range(4)])
    seal = {"entryId": "manual-seal", "role": "system", "meta": {"responsesSeal": {"keep": 3, "next": "sealed~pop1"}}}
    store.append("sealed", [seal], expected_next=4)
    assert store.compact("sealed", 16_384, 2_048, force=True)["status"] == "committed"
    assert "annal.receipt" in store.meta("sealed", 5), "the receipt came after the seal"
    reader = AnnalSession(store, "sealed")
    assert reader.get_items_sync() == [{"role": "user", "content": f"m{i} 日本"} for i in range(3)]
    assert reader.head()[0] == "sealed~pop1"
    # An add racing it goes to the new generation, never to the sealed one.
    session.add_items_sync([{"role": "user", "content": "after"}])
    assert [i["content"] for i in reader.get_items_sync()] == ["m0 日本", "m1 日本", "m2 日本", "after"]
    assert store.session("sealed")["records"] == 6


def test_a_change_cancelled_again_and_again_ends_before_the_cancellation(store):
    """Cancelling an add while its thread runs, three times over, neither stops it nor leaves it
    running: the cancellation comes once the item is stored."""
    session = AnnalSession(store, "stubborn")
    started, release = threading.Event(), threading.Event()
    add = session.add_items_sync

    def held(items: list) -> None:
        started.set()
        release.wait(30)
        add(items)

    session.add_items_sync = held  # type: ignore[method-assign]
    content = "東京\u3000🦀 e\u0301 " + "ж" * 5000

    async def story() -> List[str]:
        task = asyncio.ensure_future(session.add_items([{"role": "user", "content": content}]))
        for _ in range(30_000):
            if started.is_set():
                break
            await asyncio.sleep(0.001)
        assert started.is_set(), "the add never reached its thread"
        for _ in range(3):
            task.cancel()
            await asyncio.sleep(0.01)
        still_running = not task.done()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert still_running, "the cancellation came before the add ended"
        return [item["content"] for item in await session.get_items()]

    assert asyncio.run(story()) == [content]


def test_a_forked_child_changes_its_sessions(tmp_path):
    """A process forked after its parent changed a session runs its own changes: the parent's
    threads are not the child's."""
    from annal.agents import _finish

    with annal.Store(tmp_path / "parent.redb") as store:
        asyncio.run(AnnalSession(store, "before-fork").add_items([{"role": "user", "content": "親 🦀"}]))
    child = os.fork()
    if child == 0:
        try:
            status = 0 if asyncio.run(asyncio.wait_for(_finish(lambda: "子"), 10)) == "子" else 1
        except BaseException:
            status = 2
        os._exit(status)
    for _ in range(300):
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        raise AssertionError("the child's change never ended")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
