"""annal.Store: every method, every exception, with real-world text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import annal
from conftest import WORLD_TEXT, damage_text, noise, text_record, tool_pair


def test_append_reads_back_every_text_exactly(store):
    records = [text_record(f"u{i}", "user", text) for i, text in enumerate(WORLD_TEXT)]
    records += tool_pair(1, "ok\n" + WORLD_TEXT[1])
    receipt = store.append("s1", records, expected_next=0)
    assert receipt == {"sourceOrders": list(range(len(records))), "appended": len(records), "next": len(records)}
    assert list(receipt) == ["appended", "next", "sourceOrders"], "in the order `annal append --json` prints"
    back = store.records("s1")
    assert [r["blocks"][0].get("text") for r in back[: len(WORLD_TEXT)]] == WORLD_TEXT
    assert back[-2]["blocks"][1]["input"] == {"command": "cargo test step1"}
    assert back[-1]["blocks"][0]["output"] == "ok\n" + WORLD_TEXT[1]
    assert [r["sourceOrder"] for r in back] == list(range(len(records)))
    assert all(len(r["hash"]) == 64 for r in back)
    assert store.records("s1", 2, 4) == back[2:4]
    # The same batch again stores nothing and answers with the stored positions.
    again = store.append("s1", records)
    assert again["appended"] == 0 and again["sourceOrders"] == receipt["sourceOrders"]


def test_sessions_and_session(store):
    assert store.sessions() == []
    assert store.session("nobody") is None
    store.append("b", [text_record("b1", "user", "hi")])
    store.append("a", [text_record("a1", "user", "hi"), text_record("a2", "assistant", "hello")])
    names = [(s["name"], s["records"]) for s in store.sessions()]
    assert names == [("a", 2), ("b", 1)]
    info = store.session("a")
    assert info["parent"] is None and info["forkAt"] is None and len(info["head"]) == 64


def test_conflict_on_expected_next(store):
    store.append("s", [text_record("u1", "user", "first")])
    with pytest.raises(annal.ConflictError) as raised:
        store.append("s", [text_record("u2", "user", "second")], expected_next=0)
    assert (raised.value.expected, raised.value.actual) == (0, 1)
    assert str(raised.value) == (
        f'{store.path}: conflict: session "s" has 1 records, so its next sourceOrder is 1, not 0; '
        "nothing was appended"
    )
    assert store.session("s")["records"] == 1, "a refused batch stores nothing"


@pytest.mark.parametrize(
    "records, words",
    [
        ([{"role": "wizard"}], 'record 0: unknown role "wizard"'),
        ([text_record("ok", "user", "x"), {"entryId": "e", "blocks": []}], "record 1:"),
        ([{"role": "user", "timestamp": "yesterday"}], "RFC 3339"),
        ([{"role": "user", "blocks": [{"type": "text", "text": float("nan")}]}], "not JSON"),
        ([{"role": "user", "blocks": [{"type": "text", "text": {1, 2}}]}], "not JSON"),
        ("not a list", "records must be a list"),
    ],
)
def test_bad_records_are_refused_whole(store, records, words):
    with pytest.raises(annal.BadInputError) as raised:
        store.append("s", records)
    assert words in str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert store.session("s") is None


def test_bad_input_from_the_store(store):
    store.append("s", [text_record("u1", "user", "one")])
    with pytest.raises(annal.BadInputError, match="already exists with different content"):
        store.append("s", [text_record("u1", "user", "changed")])
    with pytest.raises(annal.BadInputError, match="invalid session name"):
        store.append("", [text_record("u9", "user", "x")])
    with pytest.raises(annal.BadInputError, match="already exists"):
        store.fork("s", 1, "s")
    with pytest.raises(annal.BadInputError, match="cannot fork"):
        store.fork("s", 5, "s2")
    with pytest.raises(annal.BadInputError, match="window"):
        store.project("s", 1_000, 900)
    with pytest.raises(annal.BadInputError):
        store.search('"unclosed')
    with pytest.raises(annal.BadInputError, match="role"):
        store.search("x", role="robot")
    with pytest.raises(annal.BadInputError, match="format"):
        store.export("s", format="pdf")
    with pytest.raises(annal.BadInputError, match="not a transcript annal can read"):
        store.import_(b"\x00\x01 plainly not a transcript", "junk")
    with pytest.raises(annal.BadInputError, match="sharing"):
        annal.Store(os.path.join(os.path.dirname(store.path), "x.redb"), sharing="everyone")


def test_not_found(store):
    store.append("s", [text_record("u1", "user", "one")])
    cases = [
        lambda: store.get("nope"),
        lambda: store.get("u1#7"),
        lambda: store.project("ghost"),
        lambda: store.compact("ghost"),
        lambda: store.fork("ghost", 0, "g2"),
        lambda: store.export("ghost"),
        lambda: store.verify("ghost"),
        lambda: store.search("one", session="ghost"),
        lambda: store.records("ghost"),
    ]
    for case in cases:
        with pytest.raises(annal.NotFoundError) as raised:
            case()
        assert isinstance(raised.value, LookupError)
        assert "\n" not in str(raised.value)


def test_messages_are_the_command_lines(store_path):
    """Each failure raises with the line `annal` prints for it (less its `annal: ` prefix, and
    the command line's hint at its own flag)."""
    cli = os.environ.get("ANNAL_CLI")
    if not cli:
        pytest.fail("ANNAL_CLI names the annal binary built from this workspace; .ci/run sets it")
    with annal.Store(store_path) as store:
        store.append("s", [text_record("u1", "user", "one")])
        store.append("t", [text_record("v1", "user", "two")])
    failures = [
        (["history", "get", "nope"], lambda s: s.get("nope")),
        (["fork", "ghost", "--at", "0", "--name", "g"], lambda s: s.fork("ghost", 0, "g")),
        (["fork", "s", "--at", "0", "--name", "t"], lambda s: s.fork("s", 0, "t")),
        (["history", "search", "one", "--session", "ghost"], lambda s: s.search("one", session="ghost")),
        (["history", "search", '"unclosed'], lambda s: s.search('"unclosed')),
        (["export", "ghost"], lambda s: s.export("ghost")),
        (["append", "s", "--expect", "0"], lambda s: s.append("s", [text_record("u2", "user", "x")], expected_next=0)),
    ]
    stdin = json.dumps(text_record("u2", "user", "x")) + "\n"
    for args, call in failures:
        printed = subprocess.run([cli, "--db", store_path, *args], input=stdin, capture_output=True, text=True)
        assert printed.returncode != 0, args
        line = printed.stderr.strip().removeprefix("annal: ").replace(" (--expect 0)", "")
        with annal.Store(store_path) as store:
            with pytest.raises(annal.AnnalError) as raised:
                call(store)
        assert str(raised.value) == line, f"{args}: Python says {raised.value!s}; the command line, {line}"


def step_output(n: int, marker: str) -> str:
    """A tool's output: a first line, noise, and on line 3 of step 3 only, the marker."""
    middle = f"{marker}\n" if n == 3 else "nothing to see\n"
    return f"step {n}\n{noise(n, 300)}\n{middle}{noise(n + 100, 300)}"


def test_project_compact_search_get(store):
    store.append("s", [text_record("u0", "user", "Make the importer faster; keep every record.")])
    marker = "checksum-0003-ζ"
    for n in range(1, 30):
        output = step_output(n, marker)
        store.append("s", tool_pair(n, output) + [text_record(f"u{n}", "user", f"Go on {n} 日本")])
    view = store.project("s", 16_384, 2_048)
    budget = view["stats"]["budget"]
    assert view["stats"]["compactionDue"]
    assert view["stats"]["tokens"]["total"] <= budget["capacityTokens"]
    outcome = store.compact("s", 16_384, 2_048)
    assert outcome["status"] == "committed" and outcome["upto"] > 0
    again = store.project("s", 16_384, 2_048, responses_items=True)
    assert again["stats"]["source"]["kind"] == "checkpoint"
    assert not again["stats"]["compactionDue"]
    assert again["omitted"], "a long session under a small window leaves originals out"
    assert marker not in json.dumps(again["messages"], ensure_ascii=False)
    assert store.compact("s", 16_384, 2_048)["status"] in ("reused", "notNeeded")
    # Every user message is kept, and the view is Responses items too.
    users = [i for i in again["items"] if i.get("role") == "user"]
    assert any("Make the importer faster" in i["content"] for i in users)
    kinds = {i.get("type", "message") for i in again["items"]}
    assert kinds <= {"message", "function_call", "function_call_output"}
    # What the view left out is found by its words and read back verbatim.
    hits = store.search(marker, session="s", limit=3)
    assert hits[0]["entryId"] == "t3" and hits[0]["type"] == "toolResult"
    original = store.get(f"{hits[0]['entryId']}#{hits[0]['blockIndex']}")
    assert original["blocks"][0]["text"] == step_output(3, marker)
    assert store.get("t3#0", (3, 3))["blocks"][0]["text"] == f"{marker}\n"
    filtered = store.search("step", role="tool", tool="bash", limit=50, start=10, end=20)
    assert filtered and all(10 <= h["sourceOrder"] < 20 and h["role"] == "tool" for h in filtered)
    assert store.search("absent-word-qqq") == []


def test_fork_export_import_round_trip(store, tmp_path):
    records = [text_record(f"u{i}", "user", text) for i, text in enumerate(WORLD_TEXT)] + tool_pair(1, "done")
    store.append("s", records)
    fork = store.fork("s", 3, "s-retry")
    assert (fork["parent"], fork["forkAt"], fork["records"]) == ("s", 3, 3)
    store.append("s-retry", [text_record("r1", "user", "try another way")])
    assert [r["entryId"] for r in store.records("s-retry")] == ["u0", "u1", "u2", "r1"]

    jsonl = store.export("s")
    assert jsonl.count("\n") == len(records) + 1
    written = store.export("s", os.path.join(tmp_path, "s.jsonl"))
    assert written["records"] == len(records)
    assert "日本語" in store.export("s", format="markdown")
    store.append("k", [text_record("k1", "user", "my key is sk-ant-api03-" + "A" * 40)])
    assert "A" * 40 not in store.export("k", redact=True)

    with annal.Store(os.path.join(tmp_path, "copy.redb")) as copy:
        summary = copy.import_(jsonl, "s")
        assert summary["formats"] == ["annal"] and summary["recordsNew"] == len(records)
        assert [r["hash"] for r in copy.records("s")] == [r["hash"] for r in store.records("s")]
        assert copy.import_(jsonl.encode(), "s")["recordsPresent"] == len(records)
        assert copy.verify()["ok"]


def test_import_paths(store, tmp_path):
    folder = tmp_path / "claude" / "project"
    folder.mkdir(parents=True)
    lines = [
        {"type": "user", "uuid": "cu1", "sessionId": "cc-1", "timestamp": "2026-01-02T10:00:00Z",
         "message": {"role": "user", "content": "Rename the ledger module 日本"}},
        {"type": "assistant", "uuid": "ca1", "sessionId": "cc-1", "timestamp": "2026-01-02T10:00:05Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Renamed 🚀"}]}},
    ]
    transcript = folder / "cc-1.jsonl"
    transcript.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
    (folder / "notes.json").write_text('{"just": "some settings"}')
    summary = store.import_paths([tmp_path / "claude"])
    assert summary["files"] == 1 and summary["sessions"] == ["cc-1"] and summary["recordsNew"] == 2
    assert [os.path.basename(p) for p in summary["unrecognised"]] == ["notes.json"]
    assert store.import_paths([transcript])["recordsPresent"] == 2
    assert store.search("ledger")[0]["session"] == "cc-1"
    with pytest.raises(annal.BadInputError, match="notes"):
        store.import_paths([folder / "notes.json"])
    with pytest.raises(annal.AnnalError, match="cannot read"):
        store.import_paths([tmp_path / "missing.jsonl"])
    with pytest.raises(annal.BadInputError, match="format"):
        store.import_paths([transcript], format="word")


def test_verify_and_corruption(store_path):
    marker = "MARKER-text-that-will-be-damaged"
    with annal.Store(store_path) as store:
        store.append("s", [text_record("u1", "user", marker), text_record("u2", "user", "fine")])
        assert store.verify() == {"sessions": 1, "records": 2, "blobs": 0, "ok": True, "problems": []}
        assert store.verify("s")["ok"]
    damage_text(store_path, marker)
    # No indexer: one reading the damaged record would stop, and closing would report that.
    with annal.Store(store_path, index_eagerly=False) as store:
        with pytest.raises(annal.CorruptedError):
            store.get("u1")
        report = store.verify()
        assert not report["ok"] and report["problems"][0]["session"] == "s"
        assert store.get("u2")["blocks"][0]["text"] == "fine", "undamaged records still read"


POISON = textwrap.dedent(
    """
    import os, resource, signal, sys
    import annal
    path = sys.argv[1]
    store = annal.Store(path, index_eagerly=False)
    store.append("s", [{"entryId": "u0", "role": "user", "blocks": [{"type": "text", "text": "kept"}]}])
    # Closed and reopened, so no fold of that append into the store file is still to come: one
    # failing on its own thread after the limit below would poison the store first.
    store.close()
    store = annal.Store(path, index_eagerly=False)
    # Writes past the file's size now fail (EFBIG), as on a full disk.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    size = os.path.getsize(path)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    big = [{"entryId": f"b{i}", "role": "user", "blocks": [{"type": "text", "text": os.urandom(300_000).hex()}]} for i in range(8)]
    try:
        store.append("s", big)
        print("no error")
    except annal.AnnalError as err:
        print("first:", type(err).__name__)
    try:
        store.append("s", [{"entryId": "u1", "role": "user", "blocks": []}])
    except annal.PoisonedError as err:
        print("then:", type(err).__name__, err)
    """
)


def test_poisoned_after_a_write_error(store_path):
    run = subprocess.run([sys.executable, "-c", POISON, store_path], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("first:") and lines[0] != "first: PoisonedError", lines
    assert lines[1].startswith("then: PoisonedError") and "close and reopen it" in lines[1], lines
    with annal.Store(store_path) as reopened:
        assert [r["entryId"] for r in reopened.records("s")] == ["u0"], "what was stored is kept"
        assert reopened.verify()["ok"]


def test_closed_store(store_path):
    store = annal.Store(store_path)
    assert store.close() is True and store.closed
    assert store.close() is True, "closing twice is harmless"
    with pytest.raises(annal.ClosedError, match="is closed"):
        store.sessions()
    with annal.Store(store_path) as again:
        assert not again.closed
    assert again.closed and "closed" in repr(again)


def test_open_errors(tmp_path):
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("hello, this is not a store at all " * 100)
    with pytest.raises(annal.AnnalError, match="not an annal store|cannot open"):
        annal.Store(not_a_store)
    with pytest.raises(annal.AnnalError):
        annal.Store(tmp_path / "no" / "such" / "folder" / "s.redb", read_only=True)
    with pytest.raises(annal.BadInputError, match="search_wait_seconds"):
        annal.Store(tmp_path / "s.redb", search_wait_seconds=-1)


def test_items_meta_and_numbers(store, tmp_path):
    """Responses items stored and read directly; one record's metadata; numbers out of range."""
    items = ['{"role": "user", "content": "héllo"}', '{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}']
    receipt = store.append_items("it", items, ["i0", "i1"], expected_next=0)
    assert receipt["sourceOrders"] == [0, 1]
    assert store.items("it") == [(0, items[0]), (1, items[1])]
    assert store.items("it", 1, 2) == [(1, items[1])]
    assert store.meta("it", 0) == {"responsesItem": items[0]}
    assert store.meta("it", 9) is None
    with pytest.raises(annal.BadInputError, match="2 ids for 1 items"):
        store.append_items("it", items[:1], ["a", "b"])
    with pytest.raises(annal.BadInputError, match="item 0"):
        store.append_items("it", ["[1, 2]"], ["a"])
    for call, words in [
        (lambda: store.search("x", limit=-1), "limit -1"),
        (lambda: store.search("x", limit=10**6), "at most 10000"),
        (lambda: store.fork("it", -1, "f"), "at -1"),
        (lambda: store.project("it", -5, 100), "window -5"),
        (lambda: store.records("it", -2), "start -2"),
        (lambda: store.append("it", [], expected_next=-1), "expected_next -1"),
    ]:
        with pytest.raises(annal.BadInputError, match=words):
            call()
    assert store.import_(bytearray(b'{"type":"user","uuid":"b1","sessionId":"ba","message":{"role":"user","content":"hi"}}'), "ba")["recordsNew"] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(annal.BadInputError, match="no transcripts"):
        store.import_paths([empty])
