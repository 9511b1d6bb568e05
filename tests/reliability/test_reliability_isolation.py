"""Isolation between scores: a blocking hook, a BaseException, a flush from inside a scorer.

Each of these took down or stalled other scorers before.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import anyio
from _reliability_support import (
    FAST_JUDGE,
    MakeHandler,
    attributes,
    evaluation_spans,
    grounded_reply,
    question,
    tool_contexts,
    weather_agent,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import Run, StepContext, create_scorer
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer

BLOCK_S = 3.0  # how long the synchronous get_context blocks its thread
OTHERS_TIMEOUT_S = 2.0  # the other scorers' timeout: shorter than the block


def test_a_blocking_sync_get_context_does_not_stall_the_other_scorers(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # Before: get_context ran on the worker's event loop, so time.sleep there froze every
    # other score; their judge calls outlived their timeouts and were blamed on the judge
    # (0 of 4 scored). Now it runs in a worker thread: 4 of 4.
    with OpenAITestServer(responder=grounded_reply) as server:

        def slow_store(run: Run, step: Any) -> list[str]:
            # Block once the other scorers' judge calls are on the wire, so that a loop
            # blocked here (the bug) would hold their replies past their timeouts.
            deadline = time.monotonic() + 10
            while len(server.requests) < 3 and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(BLOCK_S)  # a synchronous document store that takes its time
            return tool_contexts(run, step)

        judge = server.judge(**{**FAST_JUDGE, "timeout": 5.0})
        others = [
            ScorerConfig(
                create_hallucination_scorer(
                    model=judge,
                    get_context=tool_contexts,
                    judge_mode="one_call",
                    id=f"grounded-{i}",
                ),
                timeout=OTHERS_TIMEOUT_S,
            )
            for i in range(3)
        ]
        slow = ScorerConfig(
            create_hallucination_scorer(
                model=judge, get_context=slow_store, judge_mode="one_call", id="slow-store"
            ),
            timeout=30,
        )
        handler = make_handler([*others, slow])
        weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=60)
    stats = handler.stats()
    assert (stats.scored, stats.failed) == (4, 0), stats.failed_by_type
    statuses = {
        attributes(s)[A.LIVESCORE_SCORER_ID]: attributes(s)[A.LIVESCORE_STATUS]
        for s in evaluation_spans(exporter.get_finished_spans())
    }
    assert statuses == {
        "grounded-0": "scored",
        "grounded-1": "scored",
        "grounded-2": "scored",
        "slow-store": "scored",
    }


def test_a_blocked_sync_get_context_times_out_in_its_own_step(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    release = threading.Event()

    def stuck_store(run: Run, step: Any) -> list[str]:
        release.wait(20)
        return ["too late"]

    stuck = create_scorer(
        id="stuck-store",
        description="its store never answers in time",
        get_context=stuck_store,
        generate_score=lambda ctx: 1.0,
    )
    quick = create_scorer(id="quick", description="x", generate_score=lambda ctx: 0.5)
    handler = make_handler([ScorerConfig(stuck, timeout=0.3), quick])
    try:
        weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=30)  # not waiting for the blocked thread
    finally:
        release.set()
    spans = exporter.get_finished_spans()
    (stuck_span,) = evaluation_spans(spans, "stuck-store")
    attrs = attributes(stuck_span)
    assert (attrs[A.LIVESCORE_STATUS], attrs[A.ERROR_TYPE], attrs[A.LIVESCORE_FAILED_STEP]) == (
        "failed",
        "timeout",
        "get_context",
    )
    assert attributes(evaluation_spans(spans, "quick")[0])[A.LIVESCORE_STATUS] == "scored"


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("this error cannot describe itself")


BAD_THINGS: dict[str, BaseException] = {
    "keyboard-interrupt": KeyboardInterrupt(),
    "system-exit": SystemExit(1),
    "generator-exit": GeneratorExit(),
    "stray-cancel": asyncio.CancelledError(),
    "unprintable": UnprintableError(),
}


def test_a_base_exception_in_one_scorer_fails_that_score_only(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # Before: any of these crashed the worker, and every unrelated score in flight was
    # dropped as worker_error. Now each fails its own score, with a reason.
    in_flight = threading.Barrier(len(BAD_THINGS) + 3, timeout=20)

    def raiser(exc: BaseException) -> Any:
        async def step(ctx: StepContext) -> float:
            # Raise only once the good scores are in flight too.
            await anyio.to_thread.run_sync(in_flight.wait)
            raise exc

        return step

    async def good(ctx: StepContext) -> float:
        await anyio.to_thread.run_sync(in_flight.wait)
        await anyio.sleep(0.05)  # still running while the others raise
        return 1.0

    scorers = [
        create_scorer(id=name, description="raises", generate_score=raiser(exc))
        for name, exc in BAD_THINGS.items()
    ] + [create_scorer(id=f"good-{i}", description="fine", generate_score=good) for i in range(3)]
    handler = make_handler(scorers)
    weather_agent().invoke(question(), config={"callbacks": [handler]})
    assert handler.flush(timeout=30)
    weather_agent().invoke(question(), config={"callbacks": [handler]})  # the worker lives on
    assert handler.flush(timeout=30)

    stats = handler.stats()
    assert stats.dropped == 0, stats.dropped_by_reason
    for i in range(3):
        assert stats.by_scorer[f"good-{i}"].scored >= 1
    assert stats.failed_by_type.keys() >= {
        "KeyboardInterrupt",
        "SystemExit",
        "GeneratorExit",
        "CancelledError",
        "UnprintableError",
    }
    spans = exporter.get_finished_spans()
    for name in BAD_THINGS:
        attrs = attributes(evaluation_spans(spans, name)[0])
        assert attrs[A.LIVESCORE_STATUS] == "failed"
        assert attrs[A.LIVESCORE_FAILED_STEP] == "generate_score"
    (unprintable, *_) = evaluation_spans(spans, "unprintable")
    assert "could not be read" in (unprintable.status.description or "")


def test_flush_and_aflush_inside_a_scorer_return_false_at_once() -> None:
    # Before: awaiting aflush() in a scorer waited for itself until shutdown gave up.
    holder: list[LiveDispatcher] = []
    answers: dict[str, bool] = {}

    async def awaits_aflush(ctx: StepContext) -> float:
        answers["aflush"] = await holder[0].aflush()  # no timeout: it must not wait at all
        return 1.0

    def flushes_from_get_context(run: Run, step: Any) -> list[str]:
        answers["flush in a sync hook"] = holder[0].flush()
        return ["context"]

    scorers = [
        create_scorer(id="aflush", description="x", generate_score=awaits_aflush),
        create_scorer(
            id="flush",
            description="x",
            get_context=flushes_from_get_context,
            generate_score=lambda ctx: 1.0,
        ),
    ]
    with LiveDispatcher(scorers, register_atexit=False) as dispatcher:
        holder.append(dispatcher)
        dispatcher.submit(Run(input="q", output="a"))
        assert dispatcher.flush(timeout=20) is True
        assert dispatcher.stats().scored == 2
    assert answers == {"aflush": False, "flush in a sync hook": False}
