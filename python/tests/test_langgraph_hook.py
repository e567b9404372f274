"""``pre_model_hook`` in a real ``create_react_agent`` run with a scripted chat model: the model
is given annal's projection of the thread under its window (the state's messages while they
fit, fewer once they do not), every model call fits, and the agent finds what the projection
left out with ``history_tools``; the state keeps every message."""

from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Any, List

import pytest
from conftest import WORLD_TEXT, noise
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

from annal.langgraph import AnnalSaver, history_tools, pre_model_hook

WINDOW, MAX_OUTPUT = 16_384, 2_048

# create_react_agent is what the hook is for; LangGraph 1.x points to langchain.agents for it.
pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


@tool
def read_file(path: str) -> str:
    """Read a source file of the project."""
    n = int(re.sub(r"\D", "", path))
    return f"// {path}\nfn checksum_{n:04}() -> u32 {{ {n * 7919} }}\n" + noise(n, 1400)


class ScriptedModel(BaseChatModel):
    """A chat model whose answer is a function of the last message it is given, keeping every
    request: a user's "Read module N" is a read_file call, a question about a checksum a
    history search, the search's hit a history_get of it, anything else an answer."""

    requests: List[List[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self

    def _generate(self, messages: List[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.requests.append(list(messages))
        last, count = messages[-1], len(self.requests)
        message = AIMessage(f"Noted after {len(messages)} messages.", id=f"ai-{count}")
        if isinstance(last, HumanMessage) and str(last.content).startswith("Read module"):
            path = f"src/mod{str(last.content).split()[2]}.rs"
            message = self._call("read_file", {"path": path}, count)
        elif isinstance(last, HumanMessage) and "checksum_0007" in str(last.content):
            message = self._call("history_search", {"query": "checksum_0007", "limit": 5}, count)
        elif isinstance(last, ToolMessage) and last.name == "history_search":
            # As a model would: the hit that is a tool's output, not the question itself.
            found = re.search(r"^(.+?) \[[^\]]* toolResult\]", str(last.content), re.M)
            assert found, last.content
            message = self._call("history_get", {"id": found.group(1)}, count)
        elif isinstance(last, ToolMessage) and last.name == "history_get":
            message = AIMessage(f"Found it: {str(last.content)[:200]}", id=f"ai-{count}")
        return ChatResult(generations=[ChatGeneration(message=message)])

    @staticmethod
    def _call(name: str, args: dict, count: int) -> AIMessage:
        return AIMessage("", tool_calls=[{"id": f"call-{count}", "name": name, "args": args}], id=f"ai-{count}")


def tokens(text: str) -> int:
    """annal's default count: a token per four characters."""
    return math.ceil(len(text) / 4)


def request_tokens(messages: List[BaseMessage]) -> int:
    """What one model request's messages carry: texts and tool-call arguments."""
    total = 0
    for message in messages:
        total += tokens(message.content if isinstance(message.content, str) else json.dumps(message.content))
        for call in getattr(message, "tool_calls", None) or []:
            total += tokens(json.dumps(call["args"], ensure_ascii=False))
    return total


def shape(messages: List[BaseMessage]) -> list:
    return [(m.type, m.content, [c["id"] for c in getattr(m, "tool_calls", None) or []]) for m in messages]


def test_the_model_sees_the_projection_and_finds_what_it_left_out(store_path):
    turns = 30
    config = {"configurable": {"thread_id": "react 1"}}
    with AnnalSaver(store_path) as saver:
        model = ScriptedModel(requests=[])
        agent = create_react_agent(
            model,
            [read_file, *history_tools(saver, "react 1")],
            pre_model_hook=pre_model_hook(saver, window=WINDOW, max_output=MAX_OUTPUT),
            checkpointer=saver,
        )
        for n in range(1, turns + 1):
            agent.invoke({"messages": [HumanMessage(f"Read module {n} please {WORLD_TEXT[n % 5]}")]}, config)
            if n == 1:
                # While the thread fits, the model is given the state's messages as they are.
                state = agent.get_state(config).values["messages"]
                assert shape(model.requests[-1]) == shape(state[:-1])
        result = agent.invoke({"messages": [HumanMessage("What did checksum_0007 return?")]}, config)
        sizes = [request_tokens(request) for request in model.requests]
        assert max(sizes) + MAX_OUTPUT <= WINDOW, f"largest request {max(sizes)} tokens"
        # The state keeps every message, well over the window; the model was given fewer, the
        # first file left out...
        everything = result["messages"]
        assert request_tokens(everything) > 2 * WINDOW
        last_turn = model.requests[-3]
        assert len(last_turn) < len(everything)
        assert "fn checksum_0007() -> u32 { 55433 }" not in json.dumps([m.content for m in last_turn], ensure_ascii=False)
        # ...with every user message kept, and the newest exchange verbatim.
        said = " ".join(str(m.content) for m in last_turn)
        assert all(f"Read module {n} please" in said for n in range(1, turns + 1))
        assert shape(last_turn[-3:]) == shape(everything[-8:-5])
        # The agent found the original with the history tools: verbatim.
        assert "fn checksum_0007() -> u32 { 55433 }" in str(model.requests[-1][-1].content)
        assert str(everything[-1].content).startswith("Found it: ")
        assert len(everything) == 4 * turns + 6
        assert saver.store.verify()["ok"]


def test_every_durability_and_the_async_hook(store_path):
    with AnnalSaver(store_path) as saver:
        model = ScriptedModel(requests=[])
        hook = pre_model_hook(saver, window=WINDOW, max_output=MAX_OUTPUT)
        agent = create_react_agent(model, [read_file], pre_model_hook=hook, checkpointer=saver)
        for durability in ("sync", "async", "exit"):
            config = {"configurable": {"thread_id": f"d-{durability}"}}
            agent.invoke({"messages": [HumanMessage("Read module 3 日本語 🚀")]}, config, durability=durability)
            agent.invoke({"messages": [HumanMessage("and again")]}, config, durability=durability)
            state = agent.get_state(config).values["messages"]
            # Whether projected (sync, async) or passed through (exit: nothing stored yet), the
            # model was given the whole short conversation.
            assert shape(model.requests[-1]) == shape(state[:-1]), durability

        async def go() -> None:
            config = {"configurable": {"thread_id": "async"}}
            await agent.ainvoke({"messages": [HumanMessage("Read module 5 שלום")]}, config)
            state = (await agent.aget_state(config)).values["messages"]
            assert shape(model.requests[-1]) == shape(state[:-1])

        asyncio.run(go())
        # A run without a thread has nothing stored: the hook passes the messages through.
        plain = create_react_agent(model, [read_file], pre_model_hook=hook)
        plain.invoke({"messages": [HumanMessage("hello")]})
        assert shape(model.requests[-1]) == [("human", "hello", [])]
