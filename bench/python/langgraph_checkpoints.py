"""LangGraph checkpointers side by side: annal.langgraph.AnnalSaver against SqliteSaver
(langgraph-checkpoint-sqlite), on the same graph and machine, in one run.

    pip install ./python -r python/requirements-test.txt   # a release build of the package
    python bench/python/langgraph_checkpoints.py [--turns 334] [--rounds 2] [--gets 500] [--dir DIR]

The graph is a chat loop (``MessagesState``, a scripted model answering each user message) run
for ``--turns`` turns on one thread, three checkpoints a turn (the input, the step before the
model, the step after it) and one task's writes, so 334 turns make a 1,002-checkpoint thread
whose ``messages`` channel grows to 668 messages. Both savers write files in one folder on the
same disk and make each put durable before it returns (SQLite in WAL mode with its default
synchronous=FULL; annal commits durably). Measured, each round alternating which saver goes
first:

- put + put_writes per step: the time spent in both, per checkpoint, while the graph runs;
- get_tuple p50: the thread's latest checkpoint, and a checkpoint named by id, ``--gets`` each;
- list: every checkpoint of the thread, the median of three.

The states both savers end with must be equal.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from annal.langgraph import AnnalSaver


def chat_graph(saver):
    def model(state):
        last = state["messages"][-1]
        return {"messages": [AIMessage(f"answer {len(state['messages'])}: {last.content[:60]}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=saver)


class Timed:
    """Wraps a saver's put and put_writes to add up the time spent in them."""

    def __init__(self, saver):
        self.saver, self.seconds, self.puts = saver, 0.0, 0
        put, put_writes = saver.put, saver.put_writes

        def timed_put(*args, **kwargs):
            start = time.perf_counter()
            try:
                return put(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.puts += 1

        def timed_put_writes(*args, **kwargs):
            start = time.perf_counter()
            try:
                return put_writes(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        saver.put, saver.put_writes = timed_put, timed_put_writes


def open_saver(kind: str, folder: Path):
    if kind == "annal":
        return AnnalSaver(folder / "annal.redb")
    saver = SqliteSaver(sqlite3.connect(str(folder / "sqlite.db"), check_same_thread=False))
    saver.setup()
    return saver


def run_one(kind: str, folder: Path, turns: int, gets: int, rng_seed: int) -> dict:
    # The saver measured before this one is garbage in reference cycles (the timing wrappers):
    # collected now, so this one's collections do not walk the other's objects.
    gc.collect()
    saver = open_saver(kind, folder)
    timed = Timed(saver)
    graph = chat_graph(saver)
    config = {"configurable": {"thread_id": "bench"}}
    rng = random.Random(rng_seed)
    for turn in range(turns):
        words = " ".join(rng.choice(["ledger", "retry", "日本語", "🚀", "parse"]) for _ in range(20))
        graph.invoke({"messages": [HumanMessage(f"turn {turn}: {words}", id=f"u{turn}")]}, config)
    per_step_us = timed.seconds / timed.puts * 1e6
    ids = [t.config["configurable"]["checkpoint_id"] for t in saver.list(config)]
    latest, named = [], []
    for _ in range(gets):
        start = time.perf_counter()
        saver.get_tuple(config)
        latest.append(time.perf_counter() - start)
        pick = {"configurable": {"thread_id": "bench", "checkpoint_ns": "", "checkpoint_id": rng.choice(ids)}}
        start = time.perf_counter()
        saver.get_tuple(pick)
        named.append(time.perf_counter() - start)
    lists = []
    for _ in range(3):
        start = time.perf_counter()
        listed = list(saver.list(config))
        lists.append(time.perf_counter() - start)
    state = [(m.type, m.content) for m in graph.get_state(config).values["messages"]]
    if kind == "annal":
        saver.close()
    else:
        saver.conn.close()
    return {
        "checkpoints": len(listed),
        "per_step_us": per_step_us,
        "get_latest_us": statistics.median(latest) * 1e6,
        "get_named_us": statistics.median(named) * 1e6,
        "list_ms": statistics.median(lists) * 1e3,
        "state": state,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=334)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--gets", type=int, default=500)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(dir=args.dir))
    results = {"annal": [], "sqlite": []}
    try:
        for round_ in range(args.rounds):
            order = ["annal", "sqlite"] if round_ % 2 == 0 else ["sqlite", "annal"]
            states = {}
            for kind in order:
                folder = base / f"{kind}-{round_}"
                folder.mkdir()
                result = run_one(kind, folder, args.turns, args.gets, round_)
                states[kind] = result.pop("state")
                results[kind].append(result)
                print(f"round {round_} {kind}: {result}", flush=True)
            assert states["annal"] == states["sqlite"], "the savers ended in different states"
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print()
    print(f"| measure ({args.turns} turns, median of {args.rounds} rounds) | AnnalSaver | SqliteSaver | SqliteSaver ÷ AnnalSaver |")
    print("|---|---|---|---|")
    rows = [
        ("put + put_writes per step (µs)", "per_step_us"),
        ("get_tuple p50, latest (µs)", "get_latest_us"),
        ("get_tuple p50, by id (µs)", "get_named_us"),
        (f"list of the {results['annal'][0]['checkpoints']}-checkpoint thread (ms)", "list_ms"),
    ]
    for label, key in rows:
        a = statistics.median(r[key] for r in results["annal"])
        s = statistics.median(r[key] for r in results["sqlite"])
        print(f"| {label} | {a:,.1f} | {s:,.1f} | {s / a:.2f}× |")
    print(f"\nmachine: {os.cpu_count()} cores; python {os.sys.version.split()[0]}")


if __name__ == "__main__":
    main()
