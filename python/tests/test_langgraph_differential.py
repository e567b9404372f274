"""``AnnalSaver`` against LangGraph's own ``InMemorySaver``: the same graph given the same few
hundred seeded random operations (messages, tool calls, ``interrupt()`` and
``Command(resume=...)``, ``update_state`` on an earlier checkpoint and runs from that fork,
replays) reaches the same states, histories and fork results with either."""

from __future__ import annotations

import os
import random

from conftest import WORLD_TEXT
from graphs import chat_graph, snapshot_shape
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from annal.langgraph import AnnalSaver

OPERATIONS = 300
THREADS = ["t-0", "t-1", "t-2", "日本-3"]
WORDS = ["ledger", "lookup", "review", "retry", "balance", "ünïcode", "🚀", "e\u0301"]


def history(graph, config):
    snapshots = list(graph.get_state_history(config))
    ids = [s.config["configurable"]["checkpoint_id"] for s in snapshots]
    return snapshots, [snapshot_shape(s, ids) for s in snapshots]


def outcome(call):
    """What a call returned, or the class of what it raised."""
    try:
        result = call()
    except Exception as err:  # both savers must fail the same way
        return ("raised", type(err).__name__)
    if isinstance(result, dict):
        return ("returned", tuple(sorted(result)))
    return ("returned", type(result).__name__)


def text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.2:
        words.append(rng.choice(WORLD_TEXT)[:300])
    return " ".join(words)


def test_same_states_histories_and_forks_as_in_memory_saver(tmp_path):
    rng = random.Random(4711)
    with AnnalSaver(os.path.join(tmp_path, "store.redb")) as annal_saver:
        graphs = [chat_graph(InMemorySaver()), chat_graph(annal_saver)]
        kinds = {"send": 0, "resume": 0, "update": 0, "fork_run": 0, "replay": 0}
        for op in range(OPERATIONS):
            thread = rng.choice(THREADS)
            config = {"configurable": {"thread_id": thread}}
            states = [graph.get_state(config) for graph in graphs]
            roll = rng.random()
            if states[0].next and states[0].tasks and states[0].tasks[0].interrupts and roll < 0.6:
                kind, answer = "resume", text(rng)
                calls = [lambda g=g: g.invoke(Command(resume=answer), config) for g in graphs]
            elif roll < 0.55 or not states[0].values:
                kind, message = "send", HumanMessage(text(rng), id=f"h-{op}")
                calls = [lambda g=g: g.invoke({"messages": [message]}, config) for g in graphs]
            else:
                # Time travel: both histories must agree before a checkpoint is picked from them.
                histories = [history(graph, config) for graph in graphs]
                assert histories[0][1] == histories[1][1], f"history of {thread} before operation {op}"
                index = rng.randrange(len(histories[0][0]))
                at = [h[0][index].config for h in histories]
                if roll < 0.8:
                    kind, edit = ("update", HumanMessage(f"edit {op} {text(rng)}", id=f"e-{op}"))
                    forks = [g.update_state(c, {"messages": [edit]}) for g, c in zip(graphs, at)]
                    if rng.random() < 0.5:
                        kind = "fork_run"
                        calls = [lambda g=g, c=c: g.invoke(None, c) for g, c in zip(graphs, forks)]
                    else:
                        calls = []
                else:
                    kind = "replay"
                    calls = [lambda g=g, c=c: g.invoke(None, c) for g, c in zip(graphs, at)]
            kinds[kind] += 1
            results = [outcome(call) for call in calls]
            assert not results or results[0] == results[1], f"operation {op} ({kind}): {results}"
            after = [snapshot_shape(g.get_state(config), []) for g in graphs]
            assert after[0][:5] == after[1][:5], f"state of {thread} after operation {op} ({kind})"
        for thread in THREADS:
            config = {"configurable": {"thread_id": thread}}
            assert history(graphs[0], config)[1] == history(graphs[1], config)[1]
        assert all(count > 10 for count in kinds.values()), kinds
        assert annal_saver.store.verify()["ok"]
