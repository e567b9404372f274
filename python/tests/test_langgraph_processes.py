"""Two processes running graphs on one store at once, each on a thread of its own and both on a
shared thread: every checkpoint either put is listed, every message either sent is found, each
own thread reads as its process left it, and ``annal verify`` passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from annal.langgraph import AnnalSaver

TURNS = 12

WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[4])
from graphs import chat_graph
from langchain_core.messages import HumanMessage
from annal.langgraph import AnnalSaver

path, name, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
puts = {}
with AnnalSaver(path) as saver:
    put = saver.put
    def counted(config, *rest):
        thread = config["configurable"]["thread_id"]
        puts[thread] = puts.get(thread, 0) + 1
        return put(config, *rest)
    saver.put = counted
    graph = chat_graph(saver)
    print("ready", flush=True)
    sys.stdin.readline()  # both processes start together, when the test says go
    for turn in range(turns):
        for thread in (f"own-{name}", "shared"):
            text = f"{name} on {thread} turn {turn} marker{name}{turn}x 日本語 🚀"
            graph.invoke({"messages": [HumanMessage(text, id=f"{name}-{thread}-{turn}")]},
                         {"configurable": {"thread_id": thread}})
print(json.dumps(puts), flush=True)
"""


def cli() -> str:
    path = os.environ.get("ANNAL_CLI")
    if not path:
        pytest.fail("ANNAL_CLI names the annal binary built from this workspace; .ci/run sets it")
    return path


def test_two_processes_share_a_store(store_path):
    here = os.path.dirname(os.path.abspath(__file__))
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, store_path, name, str(TURNS), here],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready", worker.stderr.read()
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    puts = []
    for worker in workers:
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err
        puts.append(json.loads(out.strip().splitlines()[-1]))

    with AnnalSaver(store_path) as saver:
        for name, counted in zip(("alpha", "beta"), puts):
            own = f"own-{name}"
            assert len(list(saver.list({"configurable": {"thread_id": own}}))) == counted[own]
            state = saver.get_tuple({"configurable": {"thread_id": own}}).checkpoint["channel_values"]
            assert [m.id for m in state["messages"] if m.type == "human"] == [
                f"{name}-{own}-{turn}" for turn in range(TURNS)
            ]
        shared = list(saver.list({"configurable": {"thread_id": "shared"}}))
        assert len(shared) == puts[0]["shared"] + puts[1]["shared"]
        assert len({t.checkpoint["id"] for t in shared}) == len(shared)
        for name in ("alpha", "beta"):
            for turn in range(TURNS):
                hits = saver.store.search(f"marker{name}{turn}x", role="user", limit=10)
                sessions = {hit["session"].split("~g")[0] for hit in hits}
                assert sessions == {f"langgraph:own-{name}", "langgraph:shared"}, (name, turn, hits)
        assert isinstance(saver, BaseCheckpointSaver)
    done = subprocess.run([cli(), "verify", "--db", store_path, "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"]
