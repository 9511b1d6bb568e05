"""Public test doubles for testing scorers: a scripted judge, an OpenAI-compatible server,
and a throwaway Redis server for trying a scoring fleet.

Example:
    >>> from livescore.testing import OpenAITestServer, Reply
    >>> with OpenAITestServer([Reply.json({"claims": []})]) as server:
    ...     judge = server.judge()
"""

from livescore.testing._redis import RedisTestServer
from livescore.testing._scripted import ScriptedJudge
from livescore.testing._server import OpenAITestServer, Reply, ReplyLike

__all__ = (
    "OpenAITestServer",
    "RedisTestServer",
    "Reply",
    "ReplyLike",
    "ScriptedJudge",
)
