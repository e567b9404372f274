"""An OpenAI Agents SDK agent whose session is kept in annal, under a 16K window.

    python examples/agents_session.py            # offline: a scripted model answers
    OPENAI_API_KEY=... python examples/agents_session.py --model gpt-4.1-mini

Each run's history is annal's projection of the session: it never overflows the window, and
the agent can search and read back everything the projection left out.
"""

import asyncio
import json
import os
import sys
import tempfile

from agents import Agent, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import annal
from annal.agents import AnnalSession, history_tools


@function_tool
def run_tests(module: str) -> str:
    """Run one module's tests.

    Args:
        module: The module to test.
    """
    return f"test {module}::sums ... ok\n" + f"test {module}::rounding ... FAILED (left 0.1, right 0.3)\n" * 80


class OfflineModel(Model):
    """Answers without a network: runs the tests once, then reports what it read."""

    async def get_response(self, system_instructions, input, *args, **kwargs):
        last = input[-1] if isinstance(input, list) else {"content": input}
        if last.get("type") == "function_call_output":
            text = "The rounding test fails: left 0.1, right 0.3."
            return ModelResponse(output=[ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
            )], usage=Usage(), response_id=None)
        call = ResponseFunctionToolCall(id="fc", call_id=f"call_{len(input)}", type="function_call",
                                        name="run_tests", arguments=json.dumps({"module": "ledger"}))
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


async def main() -> None:
    """Runs twenty turns and prints what the session kept and sent."""
    """Runs the loop and prints what it shows."""
    model = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else OfflineModel()
    path = os.path.join(tempfile.mkdtemp(), "sessions.redb")
    with annal.Store(path) as store:
        session = AnnalSession(store, "ledger-fix", window=16_384, max_output=2_048)
        agent = Agent(name="coder", instructions="You fix code. Use history_search for earlier work.",
                      model=model, tools=[run_tests, *history_tools(session)])
        for turn in range(20):
            result = await Runner.run(agent, f"Run the ledger tests again (try {turn}).", session=session)
        print("last answer:", result.final_output)
        sent = await session.get_items()  # what the next run sends: compacted when due
        view = store.project("ledger-fix", 16_384, 2_048 + session.reserve)
        print(f"history sent: {len(sent)} items; "
              f"stored: {store.session('ledger-fix')['records']} records; view from a {view['stats']['source']['kind']}")
        first = store.search("rounding FAILED", session="ledger-fix", end=4, limit=1)[0]
        print(f"the first run's output, left out of the view, is still there: {first['entryId']}")
        assert view["stats"]["source"]["kind"] != "live", "twenty runs outgrow the window"
        assert store.verify()["ok"]


if __name__ == "__main__":
    asyncio.run(main())
