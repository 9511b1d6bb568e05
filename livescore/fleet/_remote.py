"""Offline scoring on the fleet: ``run_evals(..., broker=URL)`` and ``livescore eval --broker``.

Each item's run is published as a job like a live run (``source = "eval"``), naming a Redis
list of this evaluation to send results to. A worker sends a job's results there in the same
transaction that marks its pairs done, so each result arrives once; one task of the
evaluation reads the list and hands each job's results to the item waiting for them. The
list expires a day after its last result.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from livescore._errors import BrokerUnavailableError, JobTooLargeError
from livescore._threads import run_in_thread
from livescore.fleet._engine import Publisher
from livescore.fleet._executor import DEFAULT_QUEUE
from livescore.fleet._ledger import PREFIX
from livescore.live import ScorerConfig, ScoringJob
from livescore.runs import Conversation, Run, TraceParent
from livescore.scoring import Scorer, ScoreResult

__all__ = ("RemoteScoring", "open_remote_scoring")

_log = logging.getLogger("livescore.fleet")

_PUBLISH_ATTEMPTS = 5


@dataclass(slots=True)
class _Pending:
    expected: frozenset[str]
    results: dict[str, ScoreResult] = field(default_factory=dict)
    event: anyio.Event = field(default_factory=anyio.Event)


class RemoteScoring:
    """Score runs on the fleet and wait for their results (one evaluation)."""

    def __init__(
        self, scorers: Sequence[Scorer], publisher: Publisher, reply_to: str, client: Any
    ) -> None:
        self.scorers = list(scorers)
        self._configs = tuple(ScorerConfig(s) for s in self.scorers)
        self._publisher = publisher
        self.reply_to = reply_to
        self._client = client
        self._pending: dict[str, _Pending] = {}
        self.published = 0

    async def score(
        self, run: Run, conversation: Conversation | None = None
    ) -> dict[str, ScoreResult]:
        """Publish ``run`` to every scorer and wait for the workers' results; with a
        ``conversation`` (``run`` its last turn), conversation scorers judge it whole."""
        job_id = uuid.uuid4().hex
        record = ScoringJob(
            run, self._configs, TraceParent.of_run(run), conversation=conversation
        ).to_dict()
        record.update(id=job_id, source="eval", reply_to=self.reply_to)
        pending = self._pending[job_id] = _Pending(frozenset(s.id for s in self.scorers))
        try:
            failure = await self._publish(record)
            if failure is not None:
                error_type, error = failure
                return {
                    s.id: ScoreResult(
                        run_id=run.run_id,
                        scorer_id=s.id,
                        status="failed",
                        error=error,
                        error_type=error_type,
                    )
                    for s in self.scorers
                }
            await pending.event.wait()
            return {s.id: pending.results[s.id] for s in self.scorers}
        finally:
            self._pending.pop(job_id, None)

    async def _publish(self, record: dict[str, Any]) -> tuple[str, str] | None:
        """Publish ``record``; ``None``, or why it was not: ``(error type, message)``."""
        wait = 0.1
        for attempt in range(_PUBLISH_ATTEMPTS):
            try:
                await run_in_thread(self._publisher.publish, record)
            except JobTooLargeError as exc:
                return "job_too_large", str(exc)
            except BrokerUnavailableError as exc:
                if attempt == _PUBLISH_ATTEMPTS - 1:
                    return "broker_unavailable", f"{exc} (after {_PUBLISH_ATTEMPTS} attempts)"
                await anyio.sleep(wait)
                wait *= 2
                continue
            self.published += 1
            return None
        return "broker_unavailable", "unreachable"  # pragma: no cover

    async def collect(self) -> None:
        """Read results from the reply list until cancelled."""
        import redis

        while True:
            try:
                item = await self._client.blpop([self.reply_to], timeout=1)
            except (redis.RedisError, OSError) as exc:
                _log.warning("livescore: reading eval results failed (%s); retrying", exc)
                await anyio.sleep(1.0)
                continue
            if item is None:
                continue
            try:
                message = json.loads(item[1])
                job_id = str(message["job"])
                results = [ScoreResult.from_dict(r) for r in message["results"]]
            except Exception:
                _log.exception("livescore: an eval result could not be read; ignored")
                continue
            pending = self._pending.get(job_id)
            if pending is None:
                continue
            for result in results:
                pending.results.setdefault(result.scorer_id, result)
            if pending.expected <= pending.results.keys():
                pending.event.set()


@contextlib.asynccontextmanager
async def open_remote_scoring(
    url: str,
    scorers: Sequence[Scorer],
    *,
    queue: str = DEFAULT_QUEUE,
    publisher_factory: Callable[[str, str], Publisher] | None = None,
) -> AsyncIterator[RemoteScoring]:
    """Connect to the broker and collect results for the length of the block.

    Raises:
        BrokerUnavailableError: The broker does not answer.
    """
    import redis
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(url, socket_connect_timeout=2.0, socket_timeout=10.0)
    try:
        await client.ping()
    except (redis.RedisError, OSError) as exc:
        await client.aclose()
        raise BrokerUnavailableError(f"cannot reach the broker for run_evals: {exc}") from None
    if publisher_factory is None:
        from livescore.fleet._dramatiq import DramatiqPublisher

        publisher: Publisher = DramatiqPublisher(url, queue)
    else:
        publisher = publisher_factory(url, queue)
    remote = RemoteScoring(scorers, publisher, f"{PREFIX}eval:{uuid.uuid4().hex}:results", client)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(remote.collect)
            try:
                yield remote
            finally:
                tg.cancel_scope.cancel()
    finally:
        publisher.close()
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                await client.delete(remote.reply_to)
            await client.aclose()
