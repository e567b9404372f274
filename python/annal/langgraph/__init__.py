"""LangGraph persistence in annal: :class:`AnnalSaver`, a checkpointer (LangGraph's
``BaseCheckpointSaver``) keeping each thread as annal sessions of append-only, hash-chained
records; :func:`project_messages`, the messages a model should see next under a budget, by
annal's projection of the thread; :func:`pre_model_hook`, that projection as the node a graph
runs before its model (``create_react_agent(..., pre_model_hook=...)``); and
:func:`history_tools`, the tools a graph binds to find and read what a projection left out.

>>> from annal.langgraph import AnnalSaver  # doctest: +SKIP
>>> graph = builder.compile(checkpointer=AnnalSaver("sessions.redb"))  # doctest: +SKIP

Thread ``T`` lives in the annal session ``langgraph:T`` and, once it branches (time travel) or
is deleted, in ``langgraph:T~g1``, ``~g2``, ... (:func:`thread_session`). Each new message of
the state's ``messages`` channel is also a record of its role, so ``annal history search``,
``annal ui`` and exports see the graph's conversation.
"""

from ._hook import pre_model_hook
from ._messages import MESSAGES_CHANNEL, history_tools, project_messages
from ._saver import AnnalSaver
from ._thread import thread_session

__all__ = ["AnnalSaver", "MESSAGES_CHANNEL", "history_tools", "pre_model_hook", "project_messages", "thread_session"]
