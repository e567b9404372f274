"""One kind per failure: the class Python raises, the `annal` command's exit status and its
line agree, failure by failure, because both are read off the library's one classification."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import annal
from annal import _annal

from conftest import WORLD_TEXT, damage_text, text_record

# The command line's exit status for each kind (docs/errors.md lists them).
EXIT_STATUS = {
    "bad input": 1,
    "not found": 3,
    "conflict": 4,
    "busy": 5,
    "read-only": 6,
    "closed": 7,
    "poisoned": 8,
    "corrupted": 9,
    "unsupported": 10,
    "i/o": 11,
    "internal": 12,
    "forked": 13,
}


def cli() -> str:
    path = os.environ.get("ANNAL_CLI")
    if not path:
        pytest.fail("ANNAL_CLI names the annal binary built from this workspace; .ci/run sets it")
    return path


def test_every_kind_has_its_own_class_and_status():
    kinds = dict(_annal.ERROR_KINDS)
    assert set(kinds) == set(EXIT_STATUS), "the command line and Python know the same kinds"
    assert len(set(kinds.values())) == len(kinds), "one class per kind"
    for kind, name in kinds.items():
        cls = getattr(annal.errors, name)
        assert issubclass(cls, annal.AnnalError), kind
        assert name in annal.errors.__all__ and name in annal.__all__, name
    assert len(set(EXIT_STATUS.values())) == len(EXIT_STATUS)


def class_of(kind: str) -> type:
    return getattr(annal.errors, dict(_annal.ERROR_KINDS)[kind])


def run(store_path: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([cli(), "--db", store_path, *args], input=stdin, capture_output=True, text=True)


def seeded(store_path: str) -> None:
    with annal.Store(store_path) as store:
        store.append("s", [text_record("u1", "user", WORLD_TEXT[1]), text_record("u2", "user", WORLD_TEXT[2])])


# Each case: the kind, the command line's arguments and stdin, and the same request in Python.
CASES = [
    ("not found", ["history", "get", "nope"], "", lambda s: s.get("nope")),
    ("not found", ["show", "ghost"], "", lambda s: s.records("ghost")),
    ("not found", ["fork", "ghost", "--at", "0", "--name", "g"], "", lambda s: s.fork("ghost", 0, "g")),
    (
        "conflict",
        ["append", "s", "--expect", "0"],
        json.dumps(text_record("u3", "user", WORLD_TEXT[3])) + "\n",
        lambda s: s.append("s", [text_record("u3", "user", WORLD_TEXT[3])], expected_next=0),
    ),
    ("bad input", ["fork", "s", "--at", "0", "--name", "s"], "", lambda s: s.fork("s", 0, "s")),
    ("bad input", ["history", "search", '"unclosed'], "", lambda s: s.search('"unclosed')),
    (
        "bad input",
        ["append", "s"],
        json.dumps(text_record("w1", "wizard", WORLD_TEXT[0])) + "\n",
        lambda s: s.append("s", [text_record("w1", "wizard", WORLD_TEXT[0])]),
    ),
]


@pytest.mark.parametrize("kind, args, stdin, call", CASES, ids=[f"{c[0]}:{' '.join(c[1][:2])}" for c in CASES])
def test_a_failure_is_one_kind_everywhere(store_path, kind, args, stdin, call):
    seeded(store_path)
    printed = run(store_path, *args, stdin=stdin)
    assert printed.returncode == EXIT_STATUS[kind], f"{args}: {printed.stderr}"
    lines = printed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("annal: "), printed.stderr
    with annal.Store(store_path) as store:
        with pytest.raises(annal.AnnalError) as raised:
            call(store)
    assert type(raised.value) is class_of(kind), f"{args}: Python raised {type(raised.value).__name__}"
    assert "\n" not in str(raised.value)


def test_a_store_held_exclusively_is_busy_to_both(store_path):
    seeded(store_path)
    with annal.Store(store_path, sharing="exclusive"):
        printed = run(store_path, "sessions")
        assert printed.returncode == EXIT_STATUS["busy"], printed.stderr
        with pytest.raises(class_of("busy")):
            annal.Store(store_path)


def test_damaged_bytes_are_corrupted_to_both(store_path):
    marker = "MARKER-bytes-to-damage-日本"
    with annal.Store(store_path) as store:
        store.append("s", [text_record("u1", "user", marker)])
    damage_text(store_path, marker)
    printed = run(store_path, "show", "s")
    assert printed.returncode == EXIT_STATUS["corrupted"], printed.stderr
    assert run(store_path, "verify").returncode == EXIT_STATUS["corrupted"]
    # No indexer: one reading the damaged record would stop, and closing would report that.
    with annal.Store(store_path, index_eagerly=False) as store:
        with pytest.raises(class_of("corrupted")):
            store.records("s")


def test_a_store_under_a_file_is_an_io_failure_to_both(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    store_path = str(blocker / "s.redb")
    printed = run(store_path, "append", "s", stdin=json.dumps(text_record("u1", "user", "x")) + "\n")
    assert printed.returncode == EXIT_STATUS["i/o"], printed.stderr
    with pytest.raises(class_of("i/o")) as raised:
        annal.Store(store_path)
    assert isinstance(raised.value, OSError)


def test_read_only_and_closed_stores(store_path):
    seeded(store_path)
    with annal.Store(store_path, read_only=True) as store:
        with pytest.raises(class_of("read-only")):
            store.append("s", [text_record("u9", "user", "x")])
    store = annal.Store(store_path)
    store.close()
    with pytest.raises(class_of("closed")):
        store.sessions()


def mcp_tool_errors(store_path: str, calls: list) -> list:
    """Each call's tool error text from a real `annal mcp` server on stdio (JSON-RPC lines)."""
    server = subprocess.Popen(
        [cli(), "--db", store_path, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        def request(number: int, method: str, params: dict) -> dict:
            server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}) + "\n")
            server.stdin.flush()
            while True:
                line = server.stdout.readline()
                assert line, f"the server closed before answering {method}"
                answer = json.loads(line)
                if answer.get("id") == number:
                    return answer

        info = {"name": "annal-python-tests", "version": "1"}
        request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info})
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        texts = []
        for number, (tool, arguments) in enumerate(calls, start=2):
            result = request(number, "tools/call", {"name": tool, "arguments": arguments})["result"]
            assert result.get("isError") is True, result
            texts.append(result["content"][0]["text"])
        return texts
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def test_the_mcp_server_names_the_same_kind(store_path):
    seeded(store_path)
    cases = [
        ("not found", "history_get", {"entryId": "nope"}, lambda s: s.get("nope")),
        ("not found", "history_search", {"query": "日本", "session": "ghost"}, lambda s: s.search("日本", session="ghost")),
        ("bad input", "history_search", {"query": '"unclosed'}, lambda s: s.search('"unclosed')),
    ]
    texts = mcp_tool_errors(store_path, [(tool, arguments) for _, tool, arguments, _ in cases])
    with annal.Store(store_path) as store:
        for (kind, tool, arguments, call), text in zip(cases, texts):
            assert text.startswith(f"{kind}: "), f"{tool} {arguments}: {text}"
            with pytest.raises(class_of(kind)):
                call(store)
