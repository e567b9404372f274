"""A graph's conversation as annal records: each new message of a ``messages`` channel becomes a
record of its role (user, assistant with its tool calls, tool result, system), so search, the
viewer, export and projections see the graph's conversation as any agent's. Also
:func:`project_messages`, annal's projection of a thread as LangGraph messages under a budget,
and :func:`history_tools`, the tools a graph binds to fetch what a projection left out."""

from __future__ import annotations

import json
import operator
from itertools import compress, count, repeat
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from ..agents import render_hits, render_original

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


def message_record(
    message: Any, entry_id: str, ns: str, checkpoint_id: str
) -> Optional[Tuple[Dict[str, Any], Dict[str, Any]]]:
    """The record of one message without its metadata, and its part (what the record's
    ``meta["langgraph"]`` holds); None for a kind that is not a message of a conversation (a
    ``RemoveMessage``, an object that is no message)."""
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
    return {"entryId": entry_id, "role": role, "blocks": blocks}, part


class Seen:
    """The messages of one checkpoint's state as :func:`new_messages` compared them: their keys
    (id, or ``#index``), types and content objects in order, each key's fingerprint (type, text,
    tool calls: what tells two versions of one message apart), and the positions whose content
    or tool calls could change in place (content not a string, or calls given). Kept in memory
    only."""

    __slots__ = ("keys", "types", "contents", "marks", "unsettled")

    def __init__(
        self, keys: List[str], types: List[Any], contents: List[Any], marks: Dict[str, tuple], unsettled: Set[int]
    ) -> None:
        self.keys, self.types, self.contents, self.marks, self.unsettled = keys, types, contents, marks, unsettled


_FIELDS = operator.attrgetter("__dict__")

NOTHING_SEEN = Seen([], [], [], {}, set())
"""What a checkpoint without messages holds."""


def new_messages(messages: Any, known: Seen) -> Tuple[List[Any], Seen]:
    """The messages of ``messages`` not in ``known``, or changed since; and what is seen after
    them. Called at each put that changes the channel, over all its messages, so the usual case
    costs no fingerprint per message and no Python loop over them (each pass below runs in C):
    when the list starts with the very messages seen (same keys and types, the same content
    objects: a string cannot change in place), only the positions that could have changed in
    place and the new ones are fingerprinted."""
    if not isinstance(messages, list):
        return [], known
    try:
        fields = list(map(_FIELDS, messages))
    except AttributeError:
        fields = [getattr(m, "__dict__", None) or _fields(m) for m in messages]
    keys = list(map(dict.get, fields, repeat("id")))
    if None in keys or "" in keys:
        keys = [key or f"#{index}" for index, key in enumerate(keys)]
    types = list(map(dict.get, fields, repeat("type")))
    contents = list(map(dict.get, fields, repeat("content")))
    calls = list(map(dict.get, fields, repeat("tool_calls")))
    unsettled = set(compress(count(), calls))
    unsettled.update(compress(count(), map(operator.is_not, map(type, contents), repeat(str))))
    seen = len(known.keys)
    check: Any = range(len(keys))
    marks: Dict[str, tuple] = {}
    if (
        0 < seen <= len(keys)
        and keys[:seen] == known.keys
        and types[:seen] == known.types
        and all(map(operator.is_, contents[:seen], known.contents))
    ):
        marks = dict(known.marks)
        again = known.unsettled | {index for index in unsettled if index < seen}
        check = sorted(again) + list(range(seen, len(keys)))
    fresh: List[Any] = []
    for index in check:
        key, call = keys[index], calls[index]
        mark = (types[index] or "", _text(contents[index]), repr(call) if call else "")
        before = known.marks.get(key)
        if before == mark:
            mark = before  # the tuple kept: the new one is freed at once, nothing for the collector
        else:
            fresh.append(messages[index])
        marks[key] = mark
    return fresh, Seen(keys, types, contents, marks, unsettled)


def _fields(message: Any) -> Dict[str, Any]:
    """The fields a fingerprint reads, of an object without ``__dict__``."""
    return {name: getattr(message, name, None) for name in ("id", "type", "content", "tool_calls")}


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
        return ToolMessage(
            content=result.get("output", text),
            tool_call_id=result.get("callId", ""),
            name=result.get("tool") or None,
            status="error" if result.get("isError") else "success",
        )
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
