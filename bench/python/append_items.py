"""What the search index kept up to date in the same process costs an append: the p50 of
`Store.append_items` for a two-item turn, on a store shared between processes and one opened
alone, with the index kept up to date as records land (`index_eagerly=True`, the default) and
without it. Each store is fresh, in one folder on the disk the caller names.

With ANNAL_CORPUS set, also the corpus's real turns (the Agents SDK replay's, from
agents_sessions.py), appended the same way with no index: the p50 of a call and the mean CPU
time of the calling thread, which prepares the records and commits their group.

    pip install ./python                 # a release build of the package
    [ANNAL_CORPUS=<corpus folder>] python bench/python/append_items.py [--folder DIR] [--calls N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import annal

TURN = [
    {"role": "user", "content": "please fix the failing test in src/app.py; 東京 ☕ e\u0301 " * 3},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done " * 50}]},
]


def p50_ms(path: Path, calls: int, **options) -> float:
    texts = [json.dumps(item, ensure_ascii=False) for item in TURN]
    times = []
    with annal.Store(path, **options) as store:
        for n in range(calls):
            started = time.perf_counter()
            store.append_items("turns", texts, [f"t{n}a", f"t{n}b"], expected_next=2 * n)
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def corpus_turns(corpus: Path, scratch: Path) -> list:
    """Every turn of the corpus sessions the Agents SDK replay uses, as (session, item texts)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from agents_sessions import conversations, turns

    found = []
    for name, items in conversations(corpus, scratch).items():
        for turn in turns(items):
            found.append((name, [json.dumps(item, ensure_ascii=False) for item in turn]))
    return found


def corpus_row(path: Path, turns: list, rounds: int) -> tuple:
    """p50 wall ms and mean calling-thread CPU ms of append_items over `rounds` of `turns`."""
    times, cpu = [], []
    with annal.Store(path, index_eagerly=False) as store:
        for round_number in range(rounds):
            lengths: dict = {}
            for name, texts in turns:
                session = f"r{round_number}-{name}"
                at = lengths.get(session, 0)
                ids = [f"{session}:{at + k}" for k in range(len(texts))]
                started, thread_started = time.perf_counter(), time.thread_time()
                store.append_items(session, texts, ids, expected_next=at)
                cpu.append(time.thread_time() - thread_started)
                times.append(time.perf_counter() - started)
                lengths[session] = at + len(texts)
    return statistics.median(times) * 1e3, statistics.fmean(cpu) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="where the stores go (default: a temporary folder)")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as scratch:
        print("| sharing | index kept up to date | append_items p50 ms |")
        print("|---|---|--:|")
        for sharing in ("processes", "exclusive"):
            for eager in (True, False):
                path = Path(scratch) / f"{sharing}-{eager}.redb"
                ms = p50_ms(path, args.calls, sharing=sharing, index_eagerly=eager)
                print(f"| {sharing} | {'yes' if eager else 'no'} | {ms:.3f} |")
        corpus = os.environ.get("ANNAL_CORPUS")
        if corpus:
            turns = corpus_turns(Path(corpus), Path(scratch))
            print()
            print(f"The corpus's {len(turns)} turns, three rounds, shared, no index:")
            print()
            print("| append_items p50 ms | calling thread's CPU per call, mean ms |")
            print("|--:|--:|")
            wall, cpu = corpus_row(Path(scratch) / "corpus-turns.redb", turns, 3)
            print(f"| {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
