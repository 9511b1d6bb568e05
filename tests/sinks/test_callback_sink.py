"""CallbackSink: each finished score reaches a function in process, off the agent's thread."""

from __future__ import annotations

import logging
import threading

import pytest

from livescore import LiveDispatcher, Run, ScoreResult
from livescore.scorers import create_keyword_coverage_scorer
from livescore.sinks import CallbackSink, ScoreRecord, ScoreSink


def _record(run_id: str = "r1") -> ScoreRecord:
    return ScoreRecord(
        Run(run_id=run_id), ScoreResult(run_id, "demo", score=0.5), None, 1.0, "eval", None
    )


def test_every_score_reaches_the_function_before_the_dispatcher_flush_returns() -> None:
    seen: list[tuple[str, str, float | None, str | None, str]] = []
    agent_thread = threading.current_thread().name

    def keep(record: ScoreRecord) -> None:
        r = record.result
        seen.append(
            (record.run.run_id, r.status, r.score, r.label, threading.current_thread().name)
        )

    sink = CallbackSink(keep)
    assert isinstance(sink, ScoreSink)
    with LiveDispatcher(
        [create_keyword_coverage_scorer()], sinks=[sink], register_atexit=False
    ) as dispatcher:
        for i in range(3):
            dispatcher.submit(
                Run(run_id=f"r{i}", input="Weather in Paris?", output="Sunny in Paris.")
            )
        assert dispatcher.flush(timeout=60)
        assert sorted(s[0] for s in seen) == ["r0", "r1", "r2"]
    assert {(s[1], s[2], s[3]) for s in seen} == {("scored", 0.5, "partial")}
    assert agent_thread not in {s[4] for s in seen}
    assert sink.calls == 3
    assert sink.errors == 0


def test_a_function_that_raises_costs_one_warning_and_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(record: ScoreRecord) -> None:
        raise RuntimeError("boom")

    sink = CallbackSink(broken, name="mine")
    with caplog.at_level(logging.DEBUG, logger="livescore.sinks"):
        sink.send(_record("a"))
        sink.send(_record("b"))
    assert (sink.calls, sink.errors) == (2, 2)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "'mine': on_score raised" in warned[0].getMessage()
    assert sink.flush(1.0)


def test_after_shutdown_scores_are_counted_and_not_passed_on() -> None:
    seen: list[str] = []
    sink = CallbackSink(lambda record: seen.append(record.run.run_id))
    sink.send(_record("before"))
    sink.shutdown()
    sink.send(_record("after"))
    assert seen == ["before"]
    assert (sink.calls, sink.dropped) == (1, 1)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="on_score must be callable"):
        CallbackSink("print")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        CallbackSink(print, name="")
