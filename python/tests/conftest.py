"""Shared pieces of the Python tests: real-world text, record builders, a store per test."""

from __future__ import annotations

import os
import random

import pytest

import annal

# Text as agents meet it: multi-byte spaces, CJK, emoji (with joiners and modifiers), combining
# marks, right-to-left script, and a line far longer than any terminal.
WORLD_TEXT = [
    "Fix the flaky test in\u3000ledger/balance.rs\u00a0please",
    "日本語の説明: インポーターを速くする",
    "deploy 🚀 then 👩🏽‍💻 reviews; family 👨‍👩‍👧‍👦 ok",
    "cafe\u0301 nai\u0308ve Zoe\u0308 — combining marks",
    "שלום עולם and مرحبا mixed with ASCII",
    "x" * 20_000 + " end-of-long-line",
]


def text_record(entry_id: str, role: str, text: str) -> dict:
    """A record of one text block."""
    return {"entryId": entry_id, "role": role, "blocks": [{"type": "text", "text": text}]}


def tool_pair(n: int, output: str) -> list:
    """An assistant record calling Bash, and the tool record with its output."""
    call = {
        "entryId": f"a{n}",
        "role": "assistant",
        "blocks": [
            {"type": "text", "text": f"Running step {n}."},
            {"type": "toolCall", "callId": f"c{n}", "tool": "Bash", "input": {"command": f"cargo test step{n}"}},
        ],
    }
    result = {
        "entryId": f"t{n}",
        "role": "tool",
        "blocks": [{"type": "toolResult", "callId": f"c{n}", "tool": "Bash", "isError": False, "output": output}],
    }
    return [call, result]


def noise(seed: int, words: int) -> str:
    """Reproducible filler text of ``words`` words, some of them multi-byte."""
    rng = random.Random(seed)
    vocabulary = ["ledger", "balance", "α", "β", "日本", "🚀", "commit", "retry", "parse", "index", "e\u0301"]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def damage_text(store_path: str, marker: str) -> None:
    """Overwrites every stored copy of ``marker`` in the store file, as a failing disk would.
    A shared store keeps new records in the log beside its file until a checkpoint (a damaged
    frame there is a torn write, dropped whole): opening the store alone first folds the log
    into the file, where the record is then damaged."""
    import annal

    with annal.Store(store_path, sharing="exclusive", index_eagerly=False):
        pass
    image = bytearray(open(store_path, "rb").read())
    at = image.find(marker.encode())
    assert at >= 0, "the record's text is stored inline"
    while at >= 0:
        image[at] = ord("N")
        at = image.find(marker.encode(), at + 1)
    open(store_path, "wb").write(bytes(image))


@pytest.fixture
def store_path(tmp_path):
    """A store file's path in the test's own folder."""
    return os.path.join(tmp_path, "sessions.redb")


@pytest.fixture
def store(store_path):
    """An open store, closed after the test."""
    with annal.Store(store_path) as opened:
        yield opened
