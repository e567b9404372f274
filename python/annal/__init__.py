"""annal: an embeddable, event-sourced session store for AI agents.

Every record of an agent session (user text, assistant text, tool calls, tool output) is
appended once to a durable, hash-chained journal and never rewritten. What the model sees next
is a *projection* under a token budget; what a projection leaves out stays searchable
(:meth:`Store.search`) and retrievable verbatim (:meth:`Store.get`).

>>> import annal, tempfile, os
>>> folder = tempfile.mkdtemp()
>>> with annal.Store(os.path.join(folder, "sessions.redb")) as store:
...     _ = store.append("s1", [{"entryId": "u1", "role": "user",
...                             "blocks": [{"type": "text", "text": "Make the importer faster."}]}])
...     store.search("importer")[0]["entryId"]
'u1'

Records, views and results are plain dicts and lists, in the shapes ``annal ... --json``
prints; ``annal/_annal.pyi`` types each of them for editors. Failures raise the classes of
:mod:`annal.errors`. One :class:`Store` may be shared by every thread: each call releases the
interpreter lock while it reads, writes or searches. Several processes may open the same store
file at once.

:class:`Fleet` joins the stores of many hosts through a NATS JetStream stream: it publishes a
store's sessions, follows the fleet's into a store, and appends to sessions several hosts share.

:mod:`annal.agents` holds :class:`~annal.agents.AnnalSession`, a session store for the OpenAI
Agents SDK.
"""

from __future__ import annotations

from . import errors
from ._annal import Fleet, Store, __version__
from .errors import *  # noqa: F403 (the exception classes, listed once in errors.__all__)

__all__ = ["Fleet", "Store", "__version__", "errors", *errors.__all__]
