"""The store calls the LangGraph saver writes through: ``append_if_unchanged`` (an append only
while the sessions a writer read are as it read them), ``lengths``, and a blob's data given as
bytes; and two savers on one thread, each appending after the other changed it behind its back."""

from __future__ import annotations

import base64
import os

import pytest
from conftest import WORLD_TEXT, text_record

import annal
from annal.langgraph import AnnalSaver


def blob_record(entry_id: str, payload: bytes) -> dict:
    block = {"type": "blob", "mediaType": "application/octet-stream", "data": payload}
    return {"entryId": entry_id, "role": "system", "blocks": [block, {"type": "text", "text": WORLD_TEXT[2]}]}


def test_blob_data_as_bytes_reads_back_exactly(store):
    payloads = [text.encode() * 40 for text in WORLD_TEXT] + [bytes(range(256)) * 300, b""]
    records = [blob_record(f"b{i}", payload) for i, payload in enumerate(payloads)]
    store.append("blobs", records)
    read = store.records("blobs")
    assert [base64.b64decode(r["blocks"][0]["data"]) for r in read] == payloads
    assert [r["blocks"][1]["text"] for r in read] == [WORLD_TEXT[2]] * len(payloads)
    # The caller's dicts are left as they were given.
    assert records[0]["blocks"][0]["data"] == payloads[0]
    # The same records given as base64 text are the same records: appending them again is a no-op.
    as_text = [blob_record(f"b{i}", b"") for i in range(len(payloads))]
    for record, payload in zip(as_text, payloads):
        record["blocks"][0]["data"] = base64.b64encode(payload).decode()
    assert store.append("blobs", as_text)["appended"] == 0
    assert store.verify("blobs")["ok"]


def test_blob_bytes_without_an_entry_id_or_outside_a_blob_are_refused(store):
    record = blob_record("", "日本語 🚀".encode())
    del record["entryId"]
    with pytest.raises(annal.BadInputError, match=r"record 1: a blob given as bytes needs the record's \"entryId\""):
        store.append("s", [text_record("u1", "user", WORLD_TEXT[0]), record])
    text_with_bytes = {"entryId": "t", "role": "user", "blocks": [{"type": "text", "text": b"bytes"}]}
    with pytest.raises(annal.BadInputError, match="record 0"):
        store.append("s", [text_with_bytes])
    assert store.session("s") is None


def test_append_if_unchanged_appends_only_while_nothing_moved(store):
    store.append("a", [text_record("a0", "user", WORLD_TEXT[1])])
    expected = [("a", 1), ("b", None)]
    first = store.append_if_unchanged("a", [text_record("a1", "user", WORLD_TEXT[3])], expected_next=1, expected=expected)
    assert first["next"] == 2 and first["appended"] == 1
    assert store.lengths(["a", "b", "a"]) == [2, None, 2]
    # Another writer made "b": nothing is appended, and the answer says so.
    store.append("b", [text_record("b0", "user", WORLD_TEXT[4])])
    refused = store.append_if_unchanged(
        "a", [text_record("a2", "user", WORLD_TEXT[5])], expected_next=2, expected=[("a", 2), ("b", None)]
    )
    assert refused is None
    # A stale position of the session appended to, with an entryId another record took there.
    stale = store.append_if_unchanged("a", [text_record("a1x", "user", "other")], expected_next=1, expected=[("a", 1)])
    assert stale is None
    assert store.lengths(["a", "b"]) == [2, 1]
    assert [r["entryId"] for r in store.records("a")] == ["a0", "a1"]


def test_two_savers_on_one_thread_each_see_the_others_puts(tmp_path):
    from graphs import chat_graph, message_shape
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    path = os.path.join(tmp_path, "s.redb")
    store = annal.Store(path)
    first, second = AnnalSaver(store), AnnalSaver(store)
    graphs = [chat_graph(first), chat_graph(second)]
    config = {"configurable": {"thread_id": "shared 日本語"}}
    alone = chat_graph(InMemorySaver())
    for turn in range(6):
        # Each saver's last read of the thread is stale by the other's turn.
        text = f"turn {turn}: {WORLD_TEXT[turn % 5]}"
        graphs[turn % 2].invoke({"messages": [HumanMessage(text, id=f"u{turn}")]}, config)
        alone.invoke({"messages": [HumanMessage(text, id=f"u{turn}")]}, config)
    expected = [message_shape(m) for m in alone.get_state(config).values["messages"]]
    for saver in (first, second):
        state = saver.get_tuple(config).checkpoint["channel_values"]["messages"]
        assert [message_shape(m) for m in state] == expected
        listed = list(saver.list(config))
        assert len({t.checkpoint["id"] for t in listed}) == len(listed) == len(list(alone.get_state_history(config)))
    # One branch: no put was taken for a second child of its parent, and each message is one record.
    assert [info["name"] for info in store.sessions()] == ["langgraph:shared 日本語"]
    users = [r for r in store.records("langgraph:shared 日本語") if r["role"] == "user"]
    assert [r["blocks"][0]["text"] for r in users] == [f"turn {t}: {WORLD_TEXT[t % 5]}" for t in range(6)]
    assert store.verify()["ok"]
    store.close()
