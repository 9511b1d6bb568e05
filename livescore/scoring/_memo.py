"""Shared work between the scorers of one run: :class:`RunMemo` (identical judge requests
asked once, and one set of personal-data placeholders per run)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel

from livescore.judges import Judge, JudgeReply, JudgeUsage, OpenAIJudge
from livescore.pii import Detect, Pseudonyms

__all__ = ("RunMemo",)


@dataclass(slots=True)
class _Entry:
    judge: Judge  # kept alive, so an identity key cannot be reused by another object
    done: anyio.Event = field(default_factory=anyio.Event)
    reply: JudgeReply[Any] | None = None


class RunMemo:
    """The judge answers of one run, shared by the scorers that score it.

    Two requests are the same when they go to the same judge (the same object, or two
    :class:`~livescore.judges.OpenAIJudge` with the same server, model and sampling
    settings) with the same system prompt, prompt and answer schema. The first is sent; a
    later one, even while the first is in flight, gets a copy of its answer without a call
    (``usage.shared`` instead of ``usage.calls``), unless its own ``validate`` rejects it. A
    request that fails or is cancelled is not shared. Live scoring makes one memo per job,
    ``run_evals`` one per item; pass your own to :meth:`~livescore.Scorer.score` to share
    between scorers you run yourself. A memo is for one run and one event loop.

    Attributes:
        requests: Requests sent to a judge through this memo.
        reused: Answers handed to a second asker instead of a call.
        calls_saved: Judge calls those reused answers cost their first asker (retries
            included): what sharing saved.

    Example:
        >>> import anyio
        >>> from livescore.scorers import create_hallucination_scorer
        >>> from livescore.testing import ScriptedJudge
        >>> memo = RunMemo()
        >>> judge = ScriptedJudge([{"claims": []}])  # one answer, asked for once
        >>> run = {"input": "Hi", "output": "Hello! How can I help?"}
        >>> first = create_hallucination_scorer(model=judge, context=["A fact."])
        >>> second = create_hallucination_scorer(model=judge, context=["A fact."], id="again")
        >>> async def both():
        ...     return [await s.score(run, memo=memo) for s in (first, second)]
        >>> [(r.usage.calls, r.usage.shared) for r in anyio.run(both)]
        [(1, 0), (0, 1)]
        >>> memo.requests, memo.reused, memo.calls_saved
        (1, 1, 1)
    """

    __slots__ = ("_entries", "_pseudonyms", "calls_saved", "requests", "reused")

    def __init__(self) -> None:
        self._entries: dict[tuple[Hashable, ...], _Entry] = {}
        self._pseudonyms: dict[int, tuple[Detect, Pseudonyms]] = {}
        self.requests = 0
        self.reused = 0
        self.calls_saved = 0

    def __repr__(self) -> str:
        return (
            f"RunMemo(requests={self.requests}, reused={self.reused}, "
            f"calls_saved={self.calls_saved})"
        )

    def pseudonyms(self, detect: Detect) -> Pseudonyms:
        """The placeholders of this run for ``detect``, shared by its scorers: every score
        of the run names the same person ``<PERSON_1>``, so identical prompts stay shared."""
        held = self._pseudonyms.get(id(detect))
        if held is None or held[0] is not detect:
            held = self._pseudonyms[id(detect)] = (detect, Pseudonyms(detect))
        return held[1]

    async def ask(
        self,
        judge: Judge,
        *,
        system: str,
        prompt: str,
        schema: type[BaseModel] | None,
        call: Callable[[], Awaitable[JudgeReply[Any]]],
        validate: Callable[[Any], None] | None = None,
    ) -> tuple[JudgeReply[Any], bool]:
        """The answer to a request: ``call()``'s, or a copy of an identical request's.

        ``judge``, ``system``, ``prompt`` and ``schema`` name the request; ``call`` sends
        it; ``validate`` is the asker's own check (raising ``ValueError``), applied to a
        shared answer before it is handed over. Returns the reply and whether it was shared
        (its usage is then ``shared=1`` and nothing else: the first asker paid).
        """
        # Two OpenAIJudge objects with the same settings send the same request (scorers
        # built from the same "openai/<model>" string each get their own object); any
        # other judge is only the same as itself.
        if isinstance(judge, OpenAIJudge):
            settings = (judge.temperature, judge.max_tokens, judge.structured_output)
            identity: Hashable = ("openai", judge.base_url, judge.model_name, *settings)
        else:
            identity = ("object", id(judge))
        key = (identity, system, prompt, schema)
        while (entry := self._entries.get(key)) is not None:
            await entry.done.wait()
            reply = entry.reply
            if reply is None:
                continue  # the first asker failed or was cancelled: ask (or wait) again
            value = _copy(reply.value)
            if validate is not None:
                try:
                    validate(value)
                except ValueError:
                    # This asker wants something the shared answer lacks: its own call.
                    self.requests += 1
                    return await call(), False
            self.reused += 1
            self.calls_saved += reply.usage.calls
            return JudgeReply(value, JudgeUsage(shared=1)), True
        entry = self._entries[key] = _Entry(judge)
        self.requests += 1
        try:
            reply = await call()
        except BaseException:
            # Not shared: whoever waits asks again. The entry goes first, so the next
            # asker finds no entry and sends the request itself.
            del self._entries[key]
            entry.done.set()
            raise
        # The stored value is never handed out as is: each reuse gets a copy.
        entry.reply = JudgeReply(_copy(reply.value), reply.usage)
        entry.done.set()
        return reply, False


def _copy(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_copy(deep=True)
    return value
