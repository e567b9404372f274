"""The store calls the LangGraph saver writes through: ``append_if_unchanged`` (an append only
while the sessions a writer read are as it read them), ``lengths``, and a blob's data given as
bytes; and two savers on one thread, each appending after the other changed it behind its back."""

from __future__ import annotations

import base64
import json
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


def test_metadata_given_as_json_text_is_the_same_record_as_given_as_a_dict(store):
    part = {"kind": "checkpoint", "texts": WORLD_TEXT, "n": [-3, 0, 12], "none": None, "yes": True, "ctl": "a\x01\n\"b"}
    canonical = json.dumps(part, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"))
    # The same value in forms the store must parse and write again: spaces, keys out of order,
    # escaped text, a number written with a fraction.
    spaced = json.dumps(dict(reversed(list(part.items()))), indent=1)
    fraction = {"kind": "writes", "at": 1.5, "big": 12345678901234567890}
    texts = [canonical, spaced, json.dumps(fraction)]
    records = [text_record(f"m{i}", "system", WORLD_TEXT[i]) for i in range(3)]
    receipt = store.append_if_unchanged(
        "m", records, expected_next=0, expected=[("m", None)], meta_json=[{"langgraph": text} for text in texts]
    )
    assert receipt["appended"] == 3
    assert [r["meta"]["langgraph"] for r in store.records("m")] == [part, part, fraction]
    # Given as dicts, the same records are already stored: the same content, the same hash.
    as_dicts = [dict(record, meta={"langgraph": value}) for record, value in zip(records, [part, part, fraction])]
    assert store.append("m", as_dicts)["appended"] == 0
    assert store.verify("m")["ok"]


def test_metadata_as_json_text_is_refused_when_it_cannot_be_kept(store):
    record = text_record("t", "system", WORLD_TEXT[1])
    with pytest.raises(annal.BadInputError, match="not JSON text"):
        store.append_if_unchanged("t", [record], expected_next=0, expected=[], meta_json=[{"k": "{'a': 1}"}])
    without_id = {"role": "system", "blocks": [{"type": "text", "text": WORLD_TEXT[2]}]}
    with pytest.raises(annal.BadInputError, match=r"record 0: metadata given as JSON text needs the record's \"entryId\""):
        store.append_if_unchanged("t", [without_id], expected_next=0, expected=[], meta_json=[{"k": "1"}])
    with pytest.raises(annal.BadInputError, match="meta_json has 2 items for 1 records"):
        store.append_if_unchanged("t", [record], expected_next=0, expected=[], meta_json=[None, None])
    assert store.session("t") is None


def test_a_savers_parts_are_written_as_the_store_keeps_them():
    from annal.langgraph._thread import pack, pack_value, part_json

    blocks: list = []
    checkpoint = {
        "kind": "checkpoint",
        "ns": "子图|节点:\u3000e\u0301 \"q\"\n",
        "id": "1f0-🚀",
        "parent": None,
        "checkpoint": pack(("msgpack", WORLD_TEXT[2].encode())),
        "metadata": pack(("json", b"{}")),
        "values": [
            ["messages", "0001.5", pack_value(("msgpack", WORLD_TEXT[5].encode()), blocks)],
            ["x\x01", 7, pack(("empty", b""))],
        ],
    }
    writes = {
        "kind": "writes",
        "ns": "",
        "checkpoint": "1f0",
        "task": "t\\1",
        "path": "~__pregel_pull, model",
        "writes": [[-1, "__error__", pack(("msgpack", b"x"))], [0, "messages", pack(("bytes", b"\x00\xff"))]],
    }
    drop = {"kind": "drop", "reason": "runs", "checkpoints": [["", "a"]]}
    canonical = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")).encode
    assert len(blocks) == 1  # the long value went to a blob block, named by its index
    for part in (checkpoint, writes, drop):
        assert part_json(part) == canonical(part)


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
