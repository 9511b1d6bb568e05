"""Score on a worker fleet: agents publish sampled runs, ``livescore worker`` scores them.

The agent side is :class:`BrokerExecutor` (what ``LiveDispatcher(scorers, broker=URL)``
and ``LiveScoringHandler(scorers=..., broker=URL)`` use): sampling stays in the agent's
process, and each sampled run is published as a JSON job to a queue of an existing task
engine (Dramatiq over Redis). The worker side is :class:`FleetWorker` (what
``livescore worker MODULE:ATTR --broker URL`` runs): it scores each job with the same code
as in-process scoring, emits each score as a child span of the run's span, and
acknowledges the job only after its scores were exported. :class:`RedisJudgeGate` holds
the judge limits every worker shares, :class:`RedisBudgetLedger` the judge budgets.

Importing this package does not import Dramatiq or the Redis client; using it does
(``pip install 'livescore-ai[fleet]'``).

Example:
    >>> from livescore.fleet import BrokerExecutor
    >>> BrokerExecutor("redis://127.0.0.1:6379/0").queue
    'livescore'
"""

from typing import TYPE_CHECKING

from livescore._errors import BrokerUnavailableError
from livescore.fleet._executor import BrokerExecutor
from livescore.fleet._worker import FleetWorker, WorkerStats

if TYPE_CHECKING:
    from livescore.fleet._gate import RedisBudgetLedger, RedisJudgeGate
    from livescore.fleet._otel_env import configure_from_env
    from livescore.fleet._remote import open_remote_scoring

__all__ = (
    "BrokerExecutor",
    "BrokerUnavailableError",
    "FleetWorker",
    "RedisBudgetLedger",
    "RedisJudgeGate",
    "WorkerStats",
    "configure_from_env",
    "open_remote_scoring",
)


def __getattr__(name: str) -> object:
    # These import the Redis client or the OpenTelemetry SDK: only when asked for.
    if name == "RedisJudgeGate":
        from livescore.fleet._gate import RedisJudgeGate

        return RedisJudgeGate
    if name == "RedisBudgetLedger":
        from livescore.fleet._gate import RedisBudgetLedger

        return RedisBudgetLedger
    if name == "configure_from_env":
        from livescore.fleet._otel_env import configure_from_env

        return configure_from_env
    if name == "open_remote_scoring":
        from livescore.fleet._remote import open_remote_scoring

        return open_remote_scoring
    raise AttributeError(f"module 'livescore.fleet' has no attribute {name!r}")
