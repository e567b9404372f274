"""A graph's conversation as annal records: each message of the ``messages`` channel is a record
of its role that the command line's ``history search``, ``history get``, ``verify`` and
``annal ui`` see;
time travel makes a branch session sharing what came before; ``project_messages`` and
``history_tools`` over a thread."""

from __future__ import annotations

import http.cookiejar
import json
import os
import subprocess
import urllib.parse
import urllib.request

import pytest
from conftest import WORLD_TEXT
from graphs import chat_graph
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import annal
from annal.langgraph import AnnalSaver, history_tools, project_messages, thread_session


def cli() -> str:
    path = os.environ.get("ANNAL_CLI")
    if not path:
        pytest.fail("ANNAL_CLI names the annal binary built from this workspace; .ci/run sets it")
    return path


def annal_json(store_path: str, *args: str) -> object:
    done = subprocess.run([cli(), *args, "--db", store_path, "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_messages_are_records_the_command_line_finds(store_path):
    config = {"configurable": {"thread_id": "support 7"}}
    with AnnalSaver(store_path) as saver:
        graph = chat_graph(saver)
        graph.invoke({"messages": [HumanMessage("please lookup the zebrafish ledger 日本語 🚀", id="u1")]}, config)
        graph.invoke({"messages": [HumanMessage(WORLD_TEXT[3] + " quokka", id="u2")]}, config)
        records = saver.store.records(thread_session("support 7"))
    roles = [(r["role"], [b["type"] for b in r["blocks"]]) for r in records if r["role"] != "system"]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["toolCall"]),
        ("tool", ["toolResult"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
        ("assistant", ["text"]),
    ]
    hits = annal_json(store_path, "history", "search", "zebrafish")
    assert {(h["session"], h["role"]) for h in hits} >= {
        ("langgraph:support 7", "user"),
        ("langgraph:support 7", "tool"),
    }
    user_hit = next(h for h in hits if h["role"] == "user")
    original = annal_json(store_path, "history", "get", user_hit["entryId"])
    assert original["blocks"][0]["text"] == "please lookup the zebrafish ledger 日本語 🚀"
    assert annal_json(store_path, "history", "search", "quokka")[0]["role"] == "user"
    report = annal_json(store_path, "verify")
    assert report["ok"], report
    assert "langgraph:support 7" in [s["name"] for s in annal_json(store_path, "sessions")]
    session_page = ui_page(store_path, "/session?name=" + urllib.parse.quote("langgraph:support 7"))
    assert "zebrafish ledger" in session_page and "quokka" in session_page


def ui_page(store_path: str, path: str) -> str:
    """A page of ``annal ui`` serving the store, fetched as a browser would (the printed URL's
    token first, then its cookie)."""
    server = subprocess.Popen(
        [cli(), "ui", "--db", store_path, "--port", "0", "--no-open"], stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().split(": ", 1)[1].strip()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        assert "langgraph:support 7" in opener.open(url, timeout=30).read().decode()
        base = url.split("/?", 1)[0]
        return opener.open(base + path, timeout=30).read().decode()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_time_travel_forks_the_session_by_reference(store_path):
    config = {"configurable": {"thread_id": "branchy"}}
    with AnnalSaver(store_path) as saver:
        graph = chat_graph(saver)
        graph.invoke({"messages": [HumanMessage("first question", id="u1")]}, config)
        graph.invoke({"messages": [HumanMessage("second question", id="u2")]}, config)
        history = list(graph.get_state_history(config))
        after_first = next(s for s in history if len(s.values["messages"]) == 2 and not s.next)
        # A run from an earlier checkpoint: its first checkpoint is that one's second child.
        graph.invoke({"messages": [HumanMessage("edited path", id="e1")]}, after_first.config)
        state = graph.get_state(config)
        assert [m.content for m in state.values["messages"]][-2:] == ["edited path", "answer 3: edited path"]
        branch = saver.store.session(thread_session("branchy", 1))
        assert branch["parent"] == thread_session("branchy") and branch["forkAt"] > 0
        texts = [b.get("text") for r in saver.store.records(branch["name"]) for b in r["blocks"]]
        # The branch shows its conversation in order: the shared start, then its own messages.
        assert [t for t in texts if t] == ["first question", "answer 1: first question", "edited path", "answer 3: edited path"]
        # The first branch is still whole, and the saver still lists it.
        assert "second question" in [b.get("text") for r in saver.store.records("langgraph:branchy") for b in r["blocks"]]
        assert len(list(graph.get_state_history(config))) > len(history)
        assert saver.store.verify()["ok"]


def test_delete_thread_leaves_a_receipt_and_starts_empty(store_path):
    config = {"configurable": {"thread_id": "gone"}}
    with AnnalSaver(store_path) as saver:
        graph = chat_graph(saver)
        graph.invoke({"messages": [HumanMessage("remember the walrus", id="u1")]}, config)
        saver.delete_thread("gone")
        assert saver.get_tuple(config) is None
        receipt = saver.store.records("langgraph:gone")[-1]["meta"]["langgraph"]
        assert receipt["kind"] == "delete" and receipt["checkpoints"] > 0
        graph.invoke({"messages": [HumanMessage("a new start", id="u2")]}, config)
        assert [m.content for m in graph.get_state(config).values["messages"]] == ["a new start", "answer 1: a new start"]
        fresh = saver.store.session(thread_session("gone", 1))
        assert fresh["forkAt"] == 0
    with AnnalSaver(store_path) as reopened:
        assert [m.content for m in chat_graph(reopened).get_state(config).values["messages"]][0] == "a new start"


def test_project_messages_fits_the_window_and_tools_fetch_what_it_left_out(store_path):
    config = {"configurable": {"thread_id": "long"}}
    with AnnalSaver(store_path) as saver:
        graph = chat_graph(saver)
        for turn in range(40):
            line = f"turn {turn} lookup " + " ".join(WORLD_TEXT[:5]) + " detail" * 400
            graph.invoke({"messages": [HumanMessage(line + (" narwhal" if turn == 3 else ""), id=f"u{turn}")]}, config)
        everything = graph.get_state(config).values["messages"]
        view = project_messages(saver, config, window=16_000, max_output=2_000)
        assert 0 < len(view) < len(everything)
        assert sum(len(str(m.content)) for m in view) // 4 < 16_000 - 2_000
        assert all(isinstance(m, (HumanMessage, AIMessage, ToolMessage)) for m in view)
        search, get = history_tools(saver, "long")
        found = search.invoke({"query": "narwhal"})
        entry = found.splitlines()[1].split(" ")[0]
        assert "narwhal" in get.invoke({"id": entry})
        assert "no matches" in history_tools(saver, "another")[0].invoke({"query": "narwhal"})
        assert project_messages(saver, {"configurable": {"thread_id": "nobody"}}) == []
        # The long messages channel went to the blob table, each version once.
        blobs = [b for r in saver.store.records("langgraph:long") for b in r["blocks"] if b["type"] == "blob"]
        assert blobs and len({b["hash"] for b in blobs}) == len(blobs)
        assert saver.store.verify()["blobs"] >= len(blobs)
    with AnnalSaver(store_path) as reopened:
        again = chat_graph(reopened).get_state(config).values["messages"]
        assert [(m.id, m.content) for m in again] == [(m.id, m.content) for m in everything]


def test_a_store_given_stays_open(store_path):
    with annal.Store(store_path) as store:
        with AnnalSaver(store) as saver:
            chat_graph(saver).invoke({"messages": [HumanMessage("hi", id="u1")]}, {"configurable": {"thread_id": "x"}})
        assert not store.closed
        assert store.session("langgraph:x")["records"] > 0


def test_new_messages_finds_each_change_once():
    # What decides which messages of a put become records: the new ones, and those changed
    # since the parent, however they changed (replaced, reassigned, or a list changed in place).
    from annal.langgraph._messages import NOTHING_SEEN, new_messages

    call = {"id": "c1", "name": "lookup", "args": {"q": WORLD_TEXT[2]}}
    first = [HumanMessage(WORLD_TEXT[1], id="u1"), AIMessage("", tool_calls=[call], id="a1")]
    fresh, seen = new_messages(first, NOTHING_SEEN)
    assert fresh == first
    second = first + [ToolMessage("found 🚀", tool_call_id="c1", id="t1"), AIMessage(WORLD_TEXT[3], id="a2")]
    fresh, seen = new_messages(second, seen)
    assert [m.id for m in fresh] == ["t1", "a2"]
    assert new_messages(list(second), seen)[0] == []
    second[1].tool_calls.append({"id": "c2", "name": "lookup", "args": {}, "type": "tool_call"})
    second[3].tool_calls.append({"id": "c3", "name": "lookup", "args": {}, "type": "tool_call"})
    fresh, seen = new_messages(list(second), seen)
    assert [m.id for m in fresh] == ["a1", "a2"]
    second[0].content = WORLD_TEXT[0]
    third = second[:2] + [ToolMessage([{"type": "text", "text": "part one"}], tool_call_id="c1", id="t1")] + second[3:]
    fresh, seen = new_messages(third, seen)
    assert [m.id for m in fresh] == ["u1", "t1"]
    third[2].content.append({"type": "text", "text": "part two"})
    fresh, seen = new_messages(list(third), seen)
    assert [m.id for m in fresh] == ["t1"]
    # A message without an id is known by its place.
    fresh, seen = new_messages(third + [HumanMessage("no id")], seen)
    assert [m.content for m in fresh] == ["no id"]
    assert new_messages(third + [HumanMessage("no id")], seen)[0] == []
