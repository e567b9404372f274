"""An agent loop on annal's Store: append each turn, send the projection, compact when due,
and find what the projection left out by searching.

    python examples/agent_loop.py [store-file]
"""

import os
import sys
import tempfile

import annal

WINDOW, MAX_OUTPUT = 16_384, 2_048


def main() -> None:
    """Runs the loop and prints what it shows."""
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "sessions.redb")
    with annal.Store(path) as store:
        for turn in range(1, 31):
            ask = "Make the importer faster." if turn == 1 else f"Go on: step {turn}."
            store.append("s", [{"entryId": f"u{turn}", "role": "user", "blocks": [{"type": "text", "text": ask}]}])
            # Before each model call: the view to send, compacted when it has grown too large.
            view = store.project("s", WINDOW, MAX_OUTPUT)
            if view["stats"]["compactionDue"]:
                store.compact("s", WINDOW, MAX_OUTPUT)
                view = store.project("s", WINDOW, MAX_OUTPUT)
            assert view["stats"]["tokens"]["total"] <= view["stats"]["budget"]["capacityTokens"]
            # The model's reply (made up here) and its tool's output, appended as they happen.
            text = "We decided to batch appends by 2,000 records." if turn == 3 else f"Profiling step {turn}."
            store.append("s", [
                {"entryId": f"a{turn}", "role": "assistant", "blocks": [
                    {"type": "text", "text": text},
                    {"type": "toolCall", "callId": f"c{turn}", "tool": "Bash", "input": {"command": f"cargo bench step{turn}"}},
                ]},
                {"entryId": f"t{turn}", "role": "tool", "blocks": [
                    {"type": "toolResult", "callId": f"c{turn}", "tool": "Bash", "isError": False,
                     "output": f"step{turn}: " + "12.5 ms/iter " * 400},
                ]},
            ])
        view = store.project("s", WINDOW, MAX_OUTPUT)
        print(f"view: {len(view['messages'])} messages, {view['stats']['tokens']['total']} tokens, "
              f"from a {view['stats']['source']['kind']}; {len(view['omitted'])} ranges left out")
        # "What did we decide about batching?": search, then read the original.
        hit = store.search("decided batch")[0]
        original = store.get(f"{hit['entryId']}#{hit['blockIndex']}")
        print(f"found {hit['entryId']}: {original['blocks'][0]['text']}")
        assert original["blocks"][0]["text"] == "We decided to batch appends by 2,000 records."
        assert store.verify()["ok"]


if __name__ == "__main__":
    main()
