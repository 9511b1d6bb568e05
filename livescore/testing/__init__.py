"""Public test doubles for testing scorers: a scripted judge and an OpenAI-compatible server.

Example:
    >>> from livescore.testing import OpenAITestServer, Reply
    >>> with OpenAITestServer([Reply.json({"claims": []})]) as server:
    ...     judge = server.judge()
"""

from livescore.testing._scripted import ScriptedJudge
from livescore.testing._server import OpenAITestServer, Reply, ReplyLike

__all__ = ("OpenAITestServer", "Reply", "ReplyLike", "ScriptedJudge")
