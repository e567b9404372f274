"""A graph's conversation as annal records: each new message of a ``messages`` channel becomes a
record of its role (user, assistant with its tool calls, tool result, system), so search, the
viewer, export and projections see the graph's conversation as any agent's. Also
:func:`project_messages`, annal's projection of a thread as LangGraph messages under a budget,
and :func:`history_tools`, the tools a graph binds to fetch what a projection left out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ..agents import render_hits, render_original
from ._thread import META_KEY

if TYPE_CHECKING:  # pragma: no cover
    from ._saver import AnnalSaver

MESSAGES_CHANNEL = "messages"
"""The channel whose messages become records (the one ``MessagesState`` and ``add_messages``
use)."""

_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system", "chat": "user"}


def _text(content: Any) -> str:
    """A message's content as text: a string as itself, a list of parts as their texts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return "" if content is None else str(content)


def fingerprint(message: Any) -> tuple:
    """What tells two versions of one message apart (a message replaced under its id). Kept in
    memory only; computed for every message of the channel at each step, so cheap: no JSON, and
    a LangChain message's fields read from its ``__dict__`` (a missing attribute of a pydantic
    model, as ``tool_calls`` of a user message, costs a raised and caught error)."""
    fields = getattr(message, "__dict__", None)
    if fields is None:
        fields = {name: getattr(message, name, None) for name in ("type", "content", "tool_calls")}
    calls = fields.get("tool_calls")
    return (fields.get("type") or "", _text(fields.get("content", "")), repr(calls) if calls else "")


def message_record(message: Any, entry_id: str, ns: str, checkpoint_id: str) -> Optional[Dict[str, Any]]:
    """The record of one message, or None for a kind that is not a message of a conversation
    (a ``RemoveMessage``, an object that is no message)."""
    role = _ROLES.get(getattr(message, "type", None))
    if role is None:
        return None
    text = _text(getattr(message, "content", ""))
    blocks: List[Dict[str, Any]] = []
    if role == "tool":
        blocks.append(
            {
                "type": "toolResult",
                "callId": str(getattr(message, "tool_call_id", "") or ""),
                "tool": str(getattr(message, "name", "") or ""),
                "isError": getattr(message, "status", "success") == "error",
                "output": text,
            }
        )
    elif text:
        blocks.append({"type": "text", "text": text})
    for call in getattr(message, "tool_calls", None) or []:
        args = call.get("args")
        block = {"type": "toolCall", "callId": str(call.get("id") or ""), "tool": str(call.get("name") or "")}
        if isinstance(args, (dict, list)):
            block["input"] = args
        else:
            block["inputText"] = json.dumps(args)
        blocks.append(block)
    part = {"kind": "message", "ns": ns, "checkpoint": checkpoint_id, "id": getattr(message, "id", None)}
    return {"entryId": entry_id, "role": role, "blocks": blocks, "meta": {META_KEY: part}}


def new_messages(messages: Any, known: Dict[str, tuple]) -> Tuple[List[Any], Dict[str, tuple]]:
    """The messages of ``messages`` not in ``known`` (id to fingerprint), or changed since; and
    what is known after them."""
    if not isinstance(messages, list):
        return [], known
    fresh: List[Any] = []
    after: Dict[str, tuple] = {}
    for index, message in enumerate(messages):
        fields = getattr(message, "__dict__", None)
        key = (fields.get("id") if fields is not None else getattr(message, "id", None)) or f"#{index}"
        mark = fingerprint(message)
        after[key] = mark
        if known.get(key) != mark:
            fresh.append(message)
    return fresh, after


def _to_message(message: Dict[str, Any]) -> Any:
    """One message of a projection as a LangChain message."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    texts, calls, results = [], [], []
    for block in message["blocks"]:
        kind = block.get("type")
        if kind == "toolCall":
            args = block.get("input")
            calls.append({"id": block.get("callId", ""), "name": block.get("tool", ""), "args": args or {}})
        elif kind == "toolResult":
            results.append(block)
        elif isinstance(block.get("text"), str):
            texts.append(block["text"])
    text = "\n".join(texts)
    if results:
        result = results[0]
        return ToolMessage(content=result.get("output", text), tool_call_id=result.get("callId", ""))
    role = message["role"]
    if role == "assistant":
        return AIMessage(content=text, tool_calls=calls)
    if role == "system":
        return SystemMessage(content=text)
    return HumanMessage(content=text)


def project_messages(
    saver: "AnnalSaver",
    config: Dict[str, Any],
    *,
    window: int = 200_000,
    max_output: Optional[int] = None,
) -> List[Any]:
    """The messages a model should see next for the thread (and checkpoint) ``config`` names,
    under ``window`` less ``max_output`` (default ``min(32_000, window // 4)``): annal's deterministic projection of the branch's
    session (every user message, the assistant's answers, the recent tail verbatim, an index of
    tool evidence), with markers naming the ids of what it left out, which
    :func:`history_tools` fetch back. As LangChain messages; an empty list for a thread with no
    messages."""
    session = saver.branch_session(config)
    if session is None:
        return []
    if max_output is None:
        max_output = min(32_000, window // 4)
    view = saver.store.project(session, window, max_output)
    # A checkpoint's large channel values are blob blocks of its record: state, not conversation.
    said = [m for m in view["messages"] if any(b.get("type") != "blob" for b in m["blocks"])]
    return [_to_message(message) for message in said]


def history_tools(saver: "AnnalSaver", thread_id: Optional[str] = None) -> List[Any]:
    """``history_search`` and ``history_get`` as LangChain tools a graph binds: search every
    stored message of the graph's threads (of ``thread_id`` alone when given) by its words, then
    read one verbatim by the id a hit or a projection's marker names."""
    from langchain_core.tools import StructuredTool

    from ._thread import thread_session

    store = saver.store

    def history_search(query: str, limit: int = 10) -> str:
        """Search every stored message (user and assistant text, tool calls and outputs, also
        what the conversation view left out) by its words; returns ids for history_get."""
        wanted = max(1, min(int(limit), 50))
        if thread_id is None:
            return render_hits(query, store.search(query, limit=wanted))
        # The thread's branches are several sessions: ask for more, keep the thread's.
        name = thread_session(thread_id)
        hits = store.search(query, limit=wanted * 10)
        mine = [hit for hit in hits if hit["session"] == name or hit["session"].startswith(name + "~g")]
        return render_hits(query, mine[:wanted])

    def history_get(id: str, first_line: int = 0, last_line: int = 0) -> str:
        """Read one stored message verbatim by the id a search hit or an omission marker names
        (ENTRY or ENTRY#BLOCK); first_line and last_line (from 1) narrow a long text."""
        lines = None
        if first_line > 0 or last_line > 0:
            lines = (max(first_line, 1), last_line if last_line > 0 else 2**62)
        try:
            return render_original(store.get(id, lines))
        except Exception as err:  # a model's wrong id is its answer, not the graph's failure
            return str(err)

    return [
        StructuredTool.from_function(history_search),
        StructuredTool.from_function(history_get),
    ]
