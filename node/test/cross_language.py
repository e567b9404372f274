"""The Python half of the Node package's cross-language test (test/cross_language.ts): ``write
STORE THREAD`` runs two turns of a LangGraph graph with annal's Python ``AnnalSaver`` and prints
the thread's messages; ``read STORE THREAD`` prints the messages of the thread's latest
checkpoint, as the Python saver reads them. Values are stored as JSON (the serializer both
languages' LangGraph read), not msgpack, which LangGraph.js does not read."""

from __future__ import annotations

import json
import sys
from typing import Any

from langchain_core.load import dumps as lc_dumps
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, MessagesState, StateGraph

from annal.langgraph import AnnalSaver


class JsonSerializer(JsonPlusSerializer):
    """Every value as LangChain's JSON (messages as constructor objects)."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return "json", lc_dumps(obj).encode()


def echo(state: MessagesState) -> dict:
    last = state["messages"][-1]
    return {"messages": [AIMessage(content=f"echo: {last.content}", id=f"py-{len(state['messages'])}")]}


def main() -> None:
    mode, store, thread = sys.argv[1:4]
    config = {"configurable": {"thread_id": thread}}
    with AnnalSaver(store, serde=JsonSerializer()) as saver:
        if mode == "write":
            graph = StateGraph(MessagesState).add_node("echo", echo).add_edge(START, "echo").compile(checkpointer=saver)
            graph.invoke({"messages": [HumanMessage(content="plan the ledger 台帳", id="p1")]}, config)
            state = graph.invoke({"messages": [HumanMessage(content="and the index", id="p2")]}, config)
            messages = state["messages"]
        else:
            messages = saver.get_tuple(config).checkpoint["channel_values"]["messages"]
    print(json.dumps([message.content for message in messages], ensure_ascii=False))


if __name__ == "__main__":
    main()
