"""instrument(): the handler on every LangChain run without callbacks=."""

from __future__ import annotations

import threading
from collections.abc import Callable

from _lc_support import ANSWER, QUESTION, Recorded, SpySink, recording_scorer, weather_agent

from livescore_langchain import (
    LiveScoringHandler,
    instrument,
    instrumented_handler,
    uninstrument,
)

MakeHandler = Callable[..., LiveScoringHandler]


def test_instrument_scores_runs_without_callbacks(make_handler: MakeHandler) -> None:
    recorded = Recorded()
    handler = make_handler([recording_scorer(recorded)])
    instrument(handler)

    result = weather_agent().invoke(QUESTION)

    assert handler.flush(timeout=10)
    assert result["messages"][-1].content == ANSWER
    (ctx,) = recorded.contexts
    assert [s.kind for s in ctx.run.steps] == ["model", "tool", "model"]
    assert ctx.context is not None
    assert len(ctx.context) == 1


def test_instrument_reaches_threads_started_later() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    instrument(handler)
    try:
        worker = threading.Thread(target=lambda: weather_agent().invoke(QUESTION))
        worker.start()
        worker.join(timeout=30)
    finally:
        uninstrument()

    assert len(sink.runs) == 1


def test_a_handler_also_passed_in_callbacks_records_once() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    instrument(handler)
    try:
        weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
    finally:
        uninstrument()

    (run,) = sink.runs
    assert [s.kind for s in run.steps] == ["model", "tool", "model"]


def test_uninstrument_stops_and_instrument_replaces() -> None:
    first, second = SpySink(), SpySink()
    instrument(LiveScoringHandler(dispatcher=first, emit_run_spans="never"))
    replacement = LiveScoringHandler(dispatcher=second, emit_run_spans="never")
    instrument(replacement)
    assert instrumented_handler() is replacement
    weather_agent().invoke(QUESTION)
    uninstrument()
    weather_agent().invoke(QUESTION)

    assert instrumented_handler() is None
    assert (len(first.runs), len(second.runs)) == (0, 1)
