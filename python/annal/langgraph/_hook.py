"""The projection as a graph's ``pre_model_hook``: :func:`pre_model_hook` gives the model node
annal's projection of the thread's messages under a token budget (``llm_input_messages``, as
LangGraph's ``create_react_agent`` takes it), leaving the state's ``messages`` as they are.

The hook runs in a step whose checkpoint LangGraph may still be saving (its default durability,
``"async"``, saves in the background while the step runs): it waits for that checkpoint to be
stored by this process, so the projection holds every message the step sees. Where no
checkpoint can be waited for (``durability="exit"`` saves only at the end; a graph without a
thread), or the step replays a checkpoint that already has a child (its branch's session holds
what came after it), the hook passes the state's messages through unchanged."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ._messages import MESSAGES_CHANNEL, project_messages

if TYPE_CHECKING:  # pragma: no cover
    from ._saver import AnnalSaver

# LangGraph's names in a task's config (langgraph._internal._constants): the task's namespace
# (its graph's namespace, then `|`, then `node:task_id`), the checkpoint each enclosing
# namespace runs from, and the run's durability.
_NS_KEY = "checkpoint_ns"
_MAP_KEY = "checkpoint_map"
_DURABILITY_KEY = "__pregel_durability"
_NS_SEP = "|"


def pre_model_hook(
    saver: "AnnalSaver",
    *,
    window: int = 200_000,
    max_output: Optional[int] = None,
    wait_seconds: float = 30.0,
) -> Any:
    """A node to give ``create_react_agent(..., pre_model_hook=...)`` (or to put before a model
    node of any ``StateGraph`` whose state has ``messages``): it returns
    ``{"llm_input_messages": project_messages(...)}`` for the checkpoint the step runs from, under
    ``window`` less ``max_output`` (as :func:`project_messages`). The graph must be compiled
    with ``saver`` as its checkpointer. ``wait_seconds`` bounds the wait for that checkpoint's
    put; past it, or where there is nothing to wait for, the state's messages pass through."""
    from langchain_core.runnables import RunnableLambda

    def hook(state: Any, config: Dict[str, Any]) -> Dict[str, Any]:
        return {"llm_input_messages": model_input(saver, state, config, window, max_output, wait_seconds)}

    async def ahook(state: Any, config: Dict[str, Any]) -> Dict[str, Any]:
        return await asyncio.to_thread(hook, state, config)

    return RunnableLambda(hook, afunc=ahook, name="annal_pre_model_hook")


def model_input(
    saver: "AnnalSaver",
    state: Any,
    config: Dict[str, Any],
    window: int,
    max_output: Optional[int],
    wait_seconds: float,
) -> List[Any]:
    """The messages the model is given for the step ``config`` names: the projection of the
    branch holding its checkpoint, or the state's messages where there is none to project."""
    messages = _state_messages(state)
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        return messages
    ns = _graph_namespace(str(configurable.get(_NS_KEY, "")))
    checkpoint_id = (configurable.get(_MAP_KEY) or {}).get(ns)
    if checkpoint_id is None:
        return messages
    # Under "exit" nothing is saved before the run ends: there is no checkpoint to wait for.
    wait = 0.0 if configurable.get(_DURABILITY_KEY) == "exit" else wait_seconds
    if not saver.wait_for_branch_head(str(thread_id), ns, checkpoint_id, wait):
        return messages
    branch = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
    projected = project_messages(saver, branch, window=window, max_output=max_output)
    return projected or messages


def _graph_namespace(task_ns: str) -> str:
    """The namespace of the graph a task runs in: its own namespace less its last part
    (``node:task_id``)."""
    return task_ns.rsplit(_NS_SEP, 1)[0] if _NS_SEP in task_ns else ""


def _state_messages(state: Any) -> List[Any]:
    """The ``messages`` of a state given as a dict or as an object (a pydantic state)."""
    if isinstance(state, dict):
        return list(state.get(MESSAGES_CHANNEL) or [])
    return list(getattr(state, MESSAGES_CHANNEL, None) or [])
