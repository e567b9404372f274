"""What a put costs each LangGraph checkpointer without the graph around it: the calls the chat
graph of ``langgraph_checkpoints.py`` makes of its saver (``put`` and ``put_writes``, with their
arguments) are recorded once with ``InMemorySaver``, then replayed into AnnalSaver and SqliteSaver
from one thread, alternating which goes first.

    python bench/python/langgraph_put_cpu.py [--turns 150] [--rounds 2] [--dir DIR]

Per checkpoint put: the wall time in put + put_writes, and the CPU time of the whole process
(every thread: the store's writer and indexer too) over the replay. Wall time on a shared disk
is mostly the syncs both savers make; CPU time is the work each does for them.
"""

from __future__ import annotations

import argparse
import copy
import gc
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_checkpoints import chat_graph, open_saver


class Recorder(InMemorySaver):
    """An InMemorySaver that keeps every put and put_writes call, arguments copied."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list = []

    def put(self, config, checkpoint, metadata, new_versions):
        args = (copy.deepcopy(config), copy.copy(checkpoint), copy.deepcopy(metadata), dict(new_versions))
        self.calls.append(("put", args))
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        self.calls.append(("put_writes", (copy.deepcopy(config), list(writes), task_id, task_path)))
        return super().put_writes(config, writes, task_id, task_path)


def record(turns: int) -> list:
    recorder = Recorder()
    graph = chat_graph(recorder)
    config = {"configurable": {"thread_id": "bench"}}
    rng = random.Random(0)
    for turn in range(turns):
        words = " ".join(rng.choice(["ledger", "retry", "日本語", "🚀", "parse"]) for _ in range(20))
        message = HumanMessage(f"turn {turn}: {words}", id=f"u{turn}")
        graph.invoke({"messages": [message]}, config, durability="sync")
    return recorder.calls


def replay(kind: str, calls: list, folder: Path) -> dict:
    gc.collect()  # nothing of the saver replayed before is left for this one's collections
    saver = open_saver(kind, folder)
    puts = sum(1 for name, _ in calls if name == "put")
    spent = 0.0
    cpu = time.process_time()
    for name, args in calls:
        start = time.perf_counter()
        getattr(saver, name)(*args)
        spent += time.perf_counter() - start
    cpu = time.process_time() - cpu
    if kind == "annal":
        saver.close()
    else:
        saver.conn.close()
    return {"wall_us": spent / puts * 1e6, "cpu_us": cpu / puts * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    calls = record(args.turns)
    puts = sum(1 for name, _ in calls if name == "put")
    print(f"{puts} puts and {len(calls) - puts} put_writes recorded from {args.turns} turns", flush=True)
    base = Path(tempfile.mkdtemp(dir=args.dir))
    results: dict = {"annal": [], "sqlite": []}
    try:
        for round_ in range(args.rounds):
            for kind in ["annal", "sqlite"] if round_ % 2 == 0 else ["sqlite", "annal"]:
                folder = base / f"{kind}-{round_}"
                folder.mkdir()
                results[kind].append(replay(kind, calls, folder))
                print(f"round {round_} {kind}: {results[kind][-1]}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print()
    print("| per checkpoint put | AnnalSaver | SqliteSaver | SqliteSaver ÷ AnnalSaver |")
    print("|---|--:|--:|--:|")
    for label, key in [("wall time in put + put_writes (µs)", "wall_us"), ("process CPU time (µs)", "cpu_us")]:
        a = statistics.median(r[key] for r in results["annal"])
        s = statistics.median(r[key] for r in results["sqlite"])
        print(f"| {label} | {a:,.0f} | {s:,.0f} | {s / a:.2f}× |")


if __name__ == "__main__":
    main()
