"""The LangGraph graph the checkpointer tests run: a chat loop of real LangGraph parts
(``StateGraph``, ``add_messages``, ``interrupt``), with a scripted model so every answer, tool
call and message id is a function of the state, and two savers given the same operations reach
the same states."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Dict, List, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt


class ChatState(TypedDict):
    messages: Annotated[list, add_messages]
    notes: Annotated[list, operator.add]


def _model(state: ChatState) -> Dict[str, Any]:
    """The scripted model: a tool call when the last user message asks for one, else an
    answer quoting it."""
    messages = state["messages"]
    count = len(messages)
    last = messages[-1]
    if isinstance(last, HumanMessage) and "lookup" in str(last.content):
        call = {"id": f"call-{count}", "name": "lookup", "args": {"query": str(last.content)[:60]}}
        return {"messages": [AIMessage(content="", tool_calls=[call], id=f"ai-{count}")]}
    quoted = str(last.content)[:80]
    return {"messages": [AIMessage(content=f"answer {count}: {quoted}", id=f"ai-{count}")]}


def _tools(state: ChatState) -> Dict[str, Any]:
    """Runs the model's tool call: a result naming its query."""
    call = state["messages"][-1].tool_calls[0]
    output = f"lookup found {len(call['args']['query'])} characters for {call['args']['query']}"
    message = ToolMessage(content=output, tool_call_id=call["id"], name="lookup", id=f"tool-{len(state['messages'])}")
    return {"messages": [message]}


def _review(state: ChatState) -> Dict[str, Any]:
    """Asks a human (``interrupt``) when the conversation's first user line asks for review."""
    users = [m for m in state["messages"] if isinstance(m, HumanMessage)]
    if users and "review" in str(users[-1].content):
        answer = interrupt({"question": f"approve after {len(state['messages'])} messages?"})
        return {"notes": [f"reviewed: {answer}"]}
    return {"notes": [f"seen {len(state['messages'])}"]}


def _after_model(state: ChatState) -> str:
    return "tools" if getattr(state["messages"][-1], "tool_calls", None) else "review"


def chat_graph(checkpointer: Any) -> Any:
    """The compiled graph: model → (tools → model)* → review (may interrupt) → end."""
    builder = StateGraph(ChatState)
    builder.add_node("model", _model)
    builder.add_node("tools", _tools)
    builder.add_node("review", _review)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", _after_model, ["tools", "review"])
    builder.add_edge("tools", "model")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)


def message_shape(message: Any) -> tuple:
    """What of a message two runs must agree on."""
    return (
        message.type,
        message.id,
        message.content,
        [(c["id"], c["name"], c["args"]) for c in getattr(message, "tool_calls", None) or []],
        getattr(message, "tool_call_id", None),
    )


def snapshot_shape(snapshot: Any, ids: List[str]) -> tuple:
    """A state snapshot without what differs between two savers by design (checkpoint ids,
    timestamps, channel versions): its values, next nodes, tasks' interrupts, source, step, and
    its parent as a position in the history ``ids``."""
    values = dict(snapshot.values)
    values["messages"] = [message_shape(m) for m in values.get("messages", [])]
    parent = snapshot.parent_config["configurable"]["checkpoint_id"] if snapshot.parent_config else None
    return (
        values,
        snapshot.next,
        [(task.name, [i.value for i in task.interrupts]) for task in snapshot.tasks],
        snapshot.metadata.get("source"),
        snapshot.metadata.get("step"),
        ids.index(parent) if parent in ids else None,
    )
