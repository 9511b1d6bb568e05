"""The live dispatcher: hand-off, worker, limits, accounting and lifecycle."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from typing import Any

import anyio
import pytest
from _live_support import (
    FakeEmitter,
    Gate,
    assert_invariant,
    constant_scorer,
    gated_scorer,
    make_run,
    raising_scorer,
    skipping_scorer,
    wait_until,
)
from forking import in_forked_child

from livescore import Run, ScoreResult, StepContext, create_scorer
from livescore.live import LiveDispatcher, ScorerConfig, is_scoring
from livescore.scoring import Scorer
from livescore.testing import ScriptedJudge


def new(
    dispatchers: list[LiveDispatcher],
    scorers: list[Any],
    emitter: Any,
    **kwargs: Any,
) -> LiveDispatcher:
    kwargs.setdefault("register_atexit", False)
    d = LiveDispatcher(scorers, emitter=emitter, **kwargs)
    dispatchers.append(d)
    return d


# -- scoring outcomes ------------------------------------------------------------------------


def test_scores_failures_and_skips_all_reach_the_emitter(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    d = new(
        dispatchers,
        [constant_scorer(), raising_scorer(), skipping_scorer()],
        emitter,
    )
    for i in range(5):
        assert d.submit(make_run(i)) is True
    assert d.flush(timeout=20) is True

    s = d.stats()
    assert (s.sampled, s.scored, s.failed, s.skipped, s.dropped) == (15, 5, 5, 5, 0)
    assert (s.queued, s.in_flight) == (0, 0)
    assert s.failed_by_type == {"ValueError": 5}
    assert s.by_scorer["constant"].scored == 5
    assert s.by_scorer["raising"].failed == 5
    assert s.by_scorer["skipping"].skipped == 5
    assert sorted(emitter.statuses()) == ["failed"] * 5 + ["scored"] * 5 + ["skipped"] * 5
    assert sorted(emitter.sampled) == ["constant"] * 5 + ["raising"] * 5 + ["skipping"] * 5

    failed = [r for _, r, _ in emitter.results if r.status == "failed"]
    assert {r.error_type for r in failed} == {"ValueError"}
    assert {r.failed_step for r in failed} == {"generate_score"}
    skipped = [r for _, r, _ in emitter.results if r.status == "skipped"]
    assert {r.reason for r in skipped} == {"nothing to judge"}
    assert_invariant(d)


def test_emit_receives_sample_rate_version_and_start_time(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    scorer = create_scorer(
        id="versioned", description="x", generate_score=lambda ctx: 1.0, version="7"
    )
    d = new(dispatchers, [ScorerConfig(scorer, sampling=1.0)], emitter)
    d.submit(make_run(1))
    assert d.flush(timeout=20)
    (run, result, kwargs) = emitter.results[0]
    assert run.run_id == "run-1"
    assert result.score == 1.0
    assert kwargs["sample_rate"] == 1.0
    assert kwargs["scorer_version"] == "7"
    assert kwargs["source"] == "live"
    assert isinstance(kwargs["start_time_ns"], int)


def test_judge_failure_is_a_failed_record_with_the_judge_error_type(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    from pydantic import BaseModel

    from livescore import PromptStep

    class Verdict(BaseModel):
        score: float

    judge = ScriptedJudge([])  # runs out of answers at once: an invalid_response JudgeError
    scorer = create_scorer(
        id="judged",
        description="asks the judge",
        model=judge,
        generate_score=PromptStep(
            description="score", output_schema=Verdict, create_prompt=lambda ctx: "score it"
        ),
    )
    d = new(dispatchers, [scorer], emitter)
    d.submit(make_run(1))
    assert d.flush(timeout=20)
    s = d.stats()
    assert s.failed_by_type == {"invalid_response": 1}
    (_, result, _) = emitter.results[0]
    assert result.judge_model == "scripted"
    assert result.usage.calls == 1


def test_timeout_is_a_failed_record_with_error_type_timeout(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    async def slow(ctx: StepContext) -> float:
        await anyio.sleep(3600)
        return 1.0

    scorer = create_scorer(id="slow", description="never answers", generate_score=slow)
    d = new(dispatchers, [ScorerConfig(scorer, timeout=0.05)], emitter)
    d.submit(make_run(1))
    d.submit(make_run(2))
    assert d.flush(timeout=20)
    s = d.stats()
    assert s.failed == 2
    assert s.failed_by_type == {"timeout": 2}
    results = [r for _, r, _ in emitter.results]
    assert {r.error_type for r in results} == {"timeout"}
    assert all("longer than 0.05 s" in (r.error or "") for r in results)


def test_per_scorer_concurrency_limit(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    peak = 0
    running = 0
    lock = threading.Lock()

    async def tracked(ctx: StepContext) -> float:
        nonlocal peak, running
        with lock:
            running += 1
            peak = max(peak, running)
        await anyio.sleep(0.01)
        with lock:
            running -= 1
        return 1.0

    scorer = create_scorer(id="tracked", description="x", generate_score=tracked)
    d = new(dispatchers, [ScorerConfig(scorer, max_concurrency=2)], emitter)
    for i in range(12):
        d.submit(make_run(i))
    assert d.flush(timeout=20)
    assert d.stats().scored == 12
    assert 1 <= peak <= 2


def test_global_limit_on_scores_in_flight(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, gate: Gate
) -> None:
    a = ScorerConfig(gated_scorer(gate, "a"), max_concurrency=4)
    b = ScorerConfig(gated_scorer(gate, "b"), max_concurrency=4)
    d = new(dispatchers, [a, b], emitter, max_judge_concurrency=3)
    for i in range(10):
        d.submit(make_run(i))
    wait_until(lambda: gate.running == 3)
    assert_invariant(d)
    gate.opened.set()
    assert d.flush(timeout=20)
    assert gate.peak == 3
    assert d.stats().scored == 20


# -- the hand-off never blocks -----------------------------------------------------------


def _fill_worker(d: LiveDispatcher, gate: Gate) -> None:
    """Submit two runs and wait until the worker is stuck on them (one running, one waiting)."""
    assert d.submit(make_run(1))
    assert d.submit(make_run(2))
    wait_until(lambda: gate.started.is_set() and d.stats().in_flight == 2)


def test_full_queue_drops_new_runs_and_counts_them_exactly(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, gate: Gate
) -> None:
    d = new(dispatchers, [gated_scorer(gate)], emitter, max_queue=2, max_judge_concurrency=1)
    _fill_worker(d, gate)

    accepted = [d.submit(make_run(i)) for i in range(3, 1003)]  # the worker is stuck
    assert accepted == [True, True] + [False] * 998
    s = d.stats()
    assert (s.sampled, s.queued, s.in_flight, s.dropped) == (1002, 2, 2, 998)
    assert s.dropped_by_reason == {"queue_full": 998}
    # The stuck worker reports no metrics; flush reports them even when its wait times out.
    assert d.flush(timeout=0) is False
    assert emitter.dropped.count(("gated", "queue_full")) == 998
    assert len(emitter.sampled) == 1002
    assert_invariant(d)

    gate.opened.set()
    assert d.flush(timeout=20)
    s = d.stats()
    assert (s.scored, s.dropped, s.queued, s.in_flight) == (4, 998, 0, 0)
    assert sorted(emitter.run_ids()) == ["run-1", "run-2", "run-3", "run-4"]


def test_drop_oldest_keeps_the_freshest_runs(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, gate: Gate
) -> None:
    d = new(
        dispatchers,
        [gated_scorer(gate)],
        emitter,
        max_queue=2,
        max_judge_concurrency=1,
        overflow="drop_oldest",
    )
    _fill_worker(d, gate)
    accepted = [d.submit(make_run(i)) for i in range(3, 8)]
    assert accepted == [True] * 5
    s = d.stats()
    assert s.dropped_by_reason == {"queue_full": 3}
    assert (s.queued, s.in_flight) == (2, 2)

    gate.opened.set()
    assert d.flush(timeout=20)
    assert sorted(emitter.run_ids()) == ["run-1", "run-2", "run-6", "run-7"]
    assert_invariant(d)


def test_flush_returns_false_on_timeout_and_true_once_done(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, gate: Gate
) -> None:
    d = new(dispatchers, [gated_scorer(gate)], emitter)
    d.submit(make_run(1))
    wait_until(gate.started.is_set)
    assert d.flush(timeout=0.05) is False
    gate.opened.set()
    assert d.flush(timeout=20) is True
    assert d.stats().scored == 1


def test_flush_with_nothing_submitted_is_true(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    d = new(dispatchers, [constant_scorer()], emitter)
    assert d.flush(timeout=0) is True


def test_invariant_holds_while_work_moves(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    async def jitter(ctx: StepContext) -> float:
        await anyio.sleep(0.001)
        return 0.0

    scorers = [
        create_scorer(id="jitter", description="x", generate_score=jitter),
        raising_scorer(),
        skipping_scorer(),
    ]
    d = new(dispatchers, scorers, emitter, max_queue=20)
    for i in range(300):
        d.submit(make_run(i))
        assert_invariant(d)
    assert d.flush(timeout=30)
    s = d.stats()
    assert s.sampled == 900
    assert s.sampled == s.scored + s.failed + s.skipped + s.dropped
    assert_invariant(d)


# -- lifecycle -----------------------------------------------------------------------------


def test_shutdown_drops_unfinished_work_and_later_submissions(
    emitter: FakeEmitter, gate: Gate
) -> None:
    d = LiveDispatcher(
        [gated_scorer(gate)],
        emitter=emitter,
        max_queue=5,
        max_judge_concurrency=1,
        register_atexit=False,
        name="shutdown-test",
    )
    _fill_worker(d, gate)
    for i in range(3, 6):
        assert d.submit(make_run(i))
    d.shutdown(timeout=0.05)  # the gate never opens: nothing can finish

    s = d.stats()
    assert (s.sampled, s.scored, s.dropped, s.queued, s.in_flight) == (5, 0, 5, 0, 0)
    assert s.dropped_by_reason == {"shutdown": 5}
    assert not any(t.name == "shutdown-test-worker" for t in threading.enumerate())
    assert emitter.results == []

    assert d.submit(make_run(9)) is False
    s = d.stats()
    assert (s.sampled, s.dropped) == (6, 6)
    assert d.closed
    d.shutdown(timeout=1)  # a second shutdown is harmless
    assert_invariant(d)


def test_shutdown_finishes_accepted_work_within_the_deadline(emitter: FakeEmitter) -> None:
    async def quick(ctx: StepContext) -> float:
        await anyio.sleep(0.001)
        return 1.0

    d = LiveDispatcher(
        [create_scorer(id="quick", description="x", generate_score=quick)],
        emitter=emitter,
        register_atexit=False,
    )
    for i in range(50):
        d.submit(make_run(i))
    d.shutdown(timeout=30)
    s = d.stats()
    assert (s.scored, s.dropped) == (50, 0)
    assert len(emitter.results) == 50


def test_shutdown_calls_the_emitters_flush_hook() -> None:
    class FlushingFakeEmitter(FakeEmitter):
        flushed: list[float | None]

        def flush(self, timeout: float | None = None) -> None:
            self.flushed.append(timeout)

    emitter = FlushingFakeEmitter()
    emitter.flushed = []
    d = LiveDispatcher([constant_scorer()], emitter=emitter, register_atexit=False)
    d.submit(make_run(1))
    d.shutdown(timeout=10)
    assert len(emitter.flushed) == 1
    assert d.stats().scored == 1


def test_context_manager_shuts_down(emitter: FakeEmitter) -> None:
    with LiveDispatcher([constant_scorer()], emitter=emitter, register_atexit=False) as d:
        d.submit(make_run(1))
    assert d.closed
    assert d.stats().scored == 1


def test_unused_dispatcher_is_garbage_collected_despite_atexit(emitter: FakeEmitter) -> None:
    d = LiveDispatcher([constant_scorer()], emitter=emitter, register_atexit=True)
    ref = weakref.ref(d)
    del d
    gc.collect()
    assert ref() is None


def test_shut_down_dispatcher_is_garbage_collected(emitter: FakeEmitter) -> None:
    # Many times over: a thread of the worker that outlived shutdown() (the worker's own,
    # still returning; anyio's, still leaving its loop) held the dispatcher now and then.
    leaked = 0
    # The session's heap is moved out of the collector's sight first: a full collection
    # over everything earlier tests left (a second and more each, on a loaded machine)
    # fifty times over ran past the test's timeout; the dispatchers made here are what is
    # collected.
    gc.freeze()
    try:
        for i in range(50):
            d = LiveDispatcher([constant_scorer()], emitter=emitter, register_atexit=True)
            d.submit(make_run(i))
            d.shutdown(timeout=10)
            ref = weakref.ref(d)
            del d
            gc.collect()
            leaked += ref() is not None
    finally:
        gc.unfreeze()
    assert leaked == 0
    assert len(emitter.results) == 50


def test_no_thread_waiting_for_the_worker_holds_the_dispatcher(emitter: FakeEmitter) -> None:
    # What outlived shutdown() under load: the loop's threads that wait on the worker's
    # behalf (for work, for an abort) leave only once they get the CPU, and the join gives
    # them a grace, not forever. While they waited they held the dispatcher: the park
    # through a strong reference, both through the queue (which held the dispatcher's
    # methods). Now they hold only the queue, which holds the dispatcher weakly.
    d = LiveDispatcher([constant_scorer()], emitter=emitter, register_atexit=False)
    try:
        d.submit(make_run(0))
        assert d.flush(timeout=10)
        ref = weakref.ref(d)
        worker = d._q._thread
        assert worker is not None

        def waiting_threads() -> list[int]:
            # The threads parked in the queue's condition for the worker: not the worker's
            # own (its loop runs the dispatcher's code, and shutdown joins it).
            return [
                ident
                for ident, frame in sys._current_frames().items()
                if ident != worker.ident and _in_stack(frame, ("park_locked", "wait_for_abort"))
            ]

        _wait_until(lambda: len(waiting_threads()) == 2)
        for ident in waiting_threads():
            frame: Any = sys._current_frames()[ident]
            while frame is not None:
                assert all(value is not ref() for value in frame.f_locals.values()), (
                    frame.f_code.co_name
                )
                frame = frame.f_back
        del frame
        # And what they hold (the queue) does not hold the dispatcher: see test_background.
    finally:
        d.shutdown(timeout=10)


def _in_stack(frame: Any, names: tuple[str, ...]) -> bool:
    while frame is not None:
        if frame.f_code.co_name in names:
            return True
        frame = frame.f_back
    return False


def _wait_until(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_interpreter_exit_finishes_queued_scores_before_the_sdk_shuts_down(
    tmp_path: Any,
) -> None:
    # The app sets up its TracerProvider after creating the dispatcher, so the provider's own
    # exit hook is registered later; the scores must still reach it.
    script = textwrap.dedent(
        """
        import anyio
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            SimpleSpanProcessor, SpanExporter, SpanExportResult,
        )
        from livescore import Run, create_scorer
        from livescore.live import LiveDispatcher

        class PrintingFakeExporter(SpanExporter):
            def export(self, spans):
                for span in spans:
                    print("exported", span.attributes["livescore.run.id"], flush=True)
                return SpanExportResult.SUCCESS

        async def slowish(ctx):
            await anyio.sleep(0.05)
            return 1.0

        scorer = create_scorer(id="s", description="x", generate_score=slowish)
        dispatcher = LiveDispatcher([scorer])  # OTel on the global providers
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(PrintingFakeExporter()))
        trace.set_tracer_provider(provider)
        for i in range(3):
            dispatcher.submit(Run(input="q", output="a", run_id=f"r{i}"))
        # no flush, no shutdown: the exit hook must finish the work
        """
    )
    path = tmp_path / "exit_script.py"
    path.write_text(script)
    proc = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=50, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == ["exported r0", "exported r1", "exported r2"]
    assert "already shutdown" not in proc.stderr


# -- robustness ------------------------------------------------------------------------------


def test_submit_never_raises_on_bad_input(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, caplog: pytest.LogCaptureFixture
) -> None:
    d = new(dispatchers, [constant_scorer()], emitter)
    assert d.submit(object()) is False  # type: ignore[arg-type]
    assert d.submit(make_run(1), decision="nonsense") is False  # type: ignore[arg-type]
    assert "submit failed" in caplog.text
    assert d.submit(make_run(2)) is True
    assert d.flush(timeout=20)
    assert d.stats().scored == 1


def test_a_raising_sampling_predicate_counts_as_a_drop(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, caplog: pytest.LogCaptureFixture
) -> None:
    def predicate(run: Run) -> bool:
        raise RuntimeError("bad predicate")

    d = new(dispatchers, [ScorerConfig(constant_scorer(), sampling=predicate)], emitter)
    assert d.submit(make_run(1)) is False
    s = d.stats()
    assert (s.sampled, s.dropped) == (1, 1)
    assert s.dropped_by_reason == {"sampling_error": 1}
    assert "bad predicate" in caplog.text


def test_predicate_sampling_sees_the_run_at_submit(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    seen: list[str] = []

    def only_errors(run: Run) -> bool:
        seen.append(run.run_id)
        return run.error is not None

    d = new(dispatchers, [ScorerConfig(constant_scorer(), sampling=only_errors)], emitter)
    decision = d.sample("abc")
    assert decision.sampled
    assert decision.scorers == ()
    assert len(decision.deferred) == 1
    assert d.submit(make_run(1), decision) is False
    assert d.submit(make_run(2, error="tool crashed"), decision) is True
    assert d.flush(timeout=20)
    assert seen == ["run-1", "run-2"]
    s = d.stats()
    assert (s.sampled, s.scored) == (1, 1)
    assert emitter.results[0][2]["sample_rate"] is None


def test_unsampled_run_is_not_counted(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    d = new(dispatchers, [ScorerConfig(constant_scorer(), sampling=0.0)], emitter)
    assert d.submit(make_run(1)) is False
    assert d.stats().sampled == 0
    assert emitter.sampled == []


def test_drop_accounts_a_sampled_run_never_submitted(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    d = new(dispatchers, [constant_scorer("a"), constant_scorer("b")], emitter)
    decision = d.sample("some-trace")
    d.drop(decision, "evicted")
    s = d.stats()
    assert (s.sampled, s.dropped) == (2, 2)
    assert s.dropped_by_reason == {"evicted": 2}
    assert sorted(emitter.dropped) == [("a", "evicted"), ("b", "evicted")]
    assert d.flush(timeout=0) is True
    assert_invariant(d)


def test_emitter_exceptions_do_not_kill_the_worker(
    dispatchers: list[LiveDispatcher], caplog: pytest.LogCaptureFixture
) -> None:
    class BrokenFakeEmitter(FakeEmitter):
        def emit(self, run: Run, result: ScoreResult, **kwargs: Any) -> None:
            super().emit(run, result, **kwargs)
            raise RuntimeError("exporter down")

        def record_sampled(self, scorer_id: str, count: int = 1) -> None:
            super().record_sampled(scorer_id, count)
            raise RuntimeError("meter down")

    emitter = BrokenFakeEmitter()
    d = new(dispatchers, [constant_scorer()], emitter)
    for i in range(5):
        assert d.submit(make_run(i)) is True
    assert d.flush(timeout=20)
    s = d.stats()
    assert s.scored == 5
    # Sampled counts are batched, so 1 to 5 record_sampled calls carry the 5 pairs.
    meter_calls = len(emitter.meter_threads)
    assert 1 <= meter_calls <= 5
    assert len(emitter.sampled) == 5
    assert s.emit_errors == 5 + meter_calls  # every emit and every record_sampled raised
    assert len(emitter.results) == 5
    assert caplog.text.count("the emitter raised") == 1  # logged once, counted always


def test_no_metric_call_runs_on_the_submitting_thread(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, gate: Gate
) -> None:
    def broken_predicate(run: Run) -> bool:
        raise RuntimeError("bad predicate")

    d = new(
        dispatchers,
        [gated_scorer(gate), ScorerConfig(constant_scorer("picky"), sampling=broken_predicate)],
        emitter,
        max_queue=2,
        max_judge_concurrency=1,
    )
    agent: dict[str, Any] = {}

    def agent_thread() -> None:
        # Everything the agent's thread can count: accepted runs, queue_full drops,
        # sampling errors and drop(), with the worker busy and with it asleep.
        agent["ident"] = threading.get_ident()
        _fill_worker(d, gate)
        agent["accepted"] = [d.submit(make_run(i)) for i in range(3, 7)]
        d.drop(d.sample("evicted-run"), "evicted")
        gate.opened.set()
        wait_until(lambda: d.stats().scored == 4)
        agent["late"] = d.submit(make_run(99))
        d.drop(d.sample("evicted-late"), "evicted")

    thread = threading.Thread(target=agent_thread)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert d.flush(timeout=20) is True

    assert agent["accepted"] == [True, True, False, False]
    assert agent["late"] is True
    s = d.stats()
    assert s.dropped_by_reason == {"queue_full": 2, "sampling_error": 7, "evicted": 2}
    # After flush the metrics equal the counts, and none was reported by the agent.
    assert len(emitter.sampled) == s.sampled == 7 + 7 + 2
    assert sorted(emitter.dropped) == sorted(
        (sid, reason)
        for sid, per in s.by_scorer.items()
        for reason, n in per.dropped_by_reason.items()
        for _ in range(n)
    )
    assert emitter.meter_threads
    assert agent["ident"] not in emitter.meter_threads


def test_the_worker_reports_metrics_without_a_flush(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    d = new(dispatchers, [constant_scorer()], emitter)
    assert d.submit(make_run(1)) is True
    wait_until(lambda: emitter.sampled == ["constant"])
    workers = [t.ident for t in threading.enumerate() if t.name == f"{d.name}-worker"]
    assert len(workers) == 1
    assert emitter.meter_threads == workers


def test_flush_waits_for_a_metric_report_in_progress_on_the_worker(
    dispatchers: list[LiveDispatcher],
) -> None:
    class BlockingMeterFakeEmitter(FakeEmitter):
        """record_dropped blocks (once armed) until released: a slow meter."""

        def __init__(self) -> None:
            super().__init__()
            self.armed = False
            self.entered = threading.Event()
            self.release = threading.Event()

        def record_dropped(self, scorer_id: str, reason: str, count: int = 1) -> None:
            if self.armed:
                self.entered.set()
                self.release.wait(30)
            super().record_dropped(scorer_id, reason, count)

    emitter = BlockingMeterFakeEmitter()
    d = new(dispatchers, [constant_scorer()], emitter)
    assert d.submit(make_run(1)) is True
    assert d.flush(timeout=20) is True
    emitter.armed = True
    d.drop(d.sample("evicted-run"), "evicted")  # wakes the idle worker, which reports it
    assert emitter.entered.wait(20)
    # Nothing is outstanding, but the report is not done: flush must not say it is.
    assert d.flush(timeout=0.05) is False
    assert emitter.dropped == []
    emitter.release.set()
    assert d.flush(timeout=20) is True
    assert emitter.dropped == [("constant", "evicted")]
    assert len(emitter.sampled) == d.stats().sampled == 2


def test_is_scoring_inside_scorers_only(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    seen: dict[str, bool] = {}

    async def probe(ctx: StepContext) -> float:
        seen["async step"] = is_scoring()
        seen["thread from the step"] = await anyio.to_thread.run_sync(is_scoring)
        return 1.0

    def sync_probe(ctx: StepContext) -> float:
        seen["sync step"] = is_scoring()
        return 1.0

    scorers = [
        create_scorer(id="probe", description="x", generate_score=probe),
        create_scorer(id="sync-probe", description="x", generate_score=sync_probe),
    ]
    d = new(dispatchers, scorers, emitter)
    assert is_scoring() is False
    d.submit(make_run(1))
    assert d.flush(timeout=20)
    assert seen == {"async step": True, "thread from the step": True, "sync step": True}
    assert is_scoring() is False


def test_flush_and_shutdown_from_inside_a_scorer_do_not_deadlock(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter
) -> None:
    holder: list[LiveDispatcher] = []
    answers: list[bool] = []

    def reentrant(ctx: StepContext) -> float:
        answers.append(holder[0].flush(timeout=5))
        return 1.0

    scorer = create_scorer(id="re", description="x", generate_score=reentrant)
    d = new(dispatchers, [scorer], emitter)
    holder.append(d)
    d.submit(make_run(1))
    assert d.flush(timeout=20)
    assert answers == [False]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_forked_child_gets_a_fresh_worker(
    dispatchers: list[LiveDispatcher], emitter: FakeEmitter, gate: Gate
) -> None:
    d = new(dispatchers, [gated_scorer(gate)], emitter, max_judge_concurrency=1)
    _fill_worker(d, gate)  # the parent's worker is busy when the fork happens

    def child() -> dict[str, Any]:
        before = d.stats()
        gate.opened.set()
        accepted = d.submit(make_run(42))
        flushed = d.flush(timeout=20)
        after = d.stats()
        return {
            "sampled_before": before.sampled,
            "accepted": accepted,
            "flushed": flushed,
            "scored": after.scored,
            "sampled": after.sampled,
            "scored_ids": emitter.run_ids()[-1:],
        }

    report = in_forked_child(child)
    assert report == {
        "sampled_before": 0,
        "accepted": True,
        "flushed": True,
        "scored": 1,
        "sampled": 1,
        "scored_ids": ["run-42"],
    }
    # The parent is untouched: its two runs are still in flight.
    assert d.stats().in_flight == 2
    gate.opened.set()
    assert d.flush(timeout=20)
    assert d.stats().scored == 2


# -- configuration errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"max_queue": 0}, ValueError, "max_queue"),
        ({"max_queue": 1.5}, TypeError, "max_queue"),
        ({"max_judge_concurrency": 0}, ValueError, "max_judge_concurrency"),
        ({"overflow": "block"}, ValueError, "overflow"),
        ({"shutdown_timeout": -1}, ValueError, "shutdown_timeout"),
    ],
)
def test_bad_settings_are_rejected(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        LiveDispatcher([constant_scorer()], register_atexit=False, **kwargs)


def test_bad_scorer_lists_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least one scorer"):
        LiveDispatcher([], register_atexit=False)
    with pytest.raises(ValueError, match="unique"):
        LiveDispatcher([constant_scorer("x"), constant_scorer("x")], register_atexit=False)
    with pytest.raises(TypeError, match="list"):
        LiveDispatcher(constant_scorer(), register_atexit=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Scorer or ScorerConfig"):
        LiveDispatcher(["not a scorer"], register_atexit=False)  # type: ignore[list-item]


def test_an_emitter_missing_part_of_the_protocol_is_refused_by_name() -> None:
    class HalfFakeEmitter:
        def emit(self, *args: Any, **kwargs: Any) -> None: ...

        def record_sampled(self, scorer_id: str, count: int = 1) -> None: ...

    with pytest.raises(TypeError, match="lacks record_dropped, record_handed_off"):
        LiveDispatcher(
            [constant_scorer()],
            emitter=HalfFakeEmitter(),  # type: ignore[arg-type]
            register_atexit=False,
        )


def test_scorer_instances_become_default_configs() -> None:
    scorer: Scorer = constant_scorer()
    d = LiveDispatcher([scorer], register_atexit=False)
    (config,) = d.scorers
    assert (config.scorer, config.rate, config.timeout, config.max_concurrency) == (
        scorer,
        1.0,
        60.0,
        4,
    )


def test_a_crashed_worker_drops_its_work_and_a_new_one_starts(
    dispatchers: list[LiveDispatcher],
    emitter: FakeEmitter,
    gate: Gate,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    d = new(dispatchers, [gated_scorer(gate)], emitter, max_judge_concurrency=1)
    _fill_worker(d, gate)  # run-1 scoring, run-2 waiting for a slot
    d.submit(make_run(3))  # queued
    take = d._take_locked

    def broken_take() -> Any:
        monkeypatch.setattr(d, "_take_locked", take)  # only the first call fails
        raise RuntimeError("worker bug")

    monkeypatch.setattr(d, "_take_locked", broken_take)
    gate.opened.set()  # run-1 finishes, the worker asks for more work and crashes
    assert d.flush(timeout=20)
    s = d.stats()
    assert s.scored + s.dropped == 3
    assert s.dropped_by_reason.get("worker_error", 0) >= 1
    assert "the scoring worker stopped" in caplog.text
    assert_invariant(d)

    assert d.submit(make_run(4)) is True  # a fresh worker picks it up
    assert d.flush(timeout=20)
    assert "run-4" in emitter.run_ids()


def test_a_burst_of_submits_shares_the_workers_wake_ups(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each wake-up of the parked worker costs the agent's thread a GIL hand-off; a woken
    # worker lingers so that runs submitted right after share its wake-up.
    wakes = 0
    dispatcher = LiveDispatcher(
        [constant_scorer("s", 1.0)], emitter=FakeEmitter(), register_atexit=False
    )
    park = dispatcher._q.park_locked

    def counting_park(generation: int, timeout: float | None = None) -> None:
        nonlocal wakes
        park(generation, timeout)
        wakes += 1

    monkeypatch.setattr(dispatcher._q, "park_locked", counting_park)
    try:
        dispatcher.submit(make_run(0))
        assert dispatcher.flush(timeout=10)
        wakes = 0
        for i in range(1, 31):
            dispatcher.submit(make_run(i))
            time.sleep(0.001)  # an agent between runs: the worker gets the GIL
        assert dispatcher.flush(timeout=10)
        assert dispatcher.stats().scored == 31
        assert wakes < 15  # about one per run without the linger
    finally:
        dispatcher.shutdown(5)


# -- what the default emitter emits (emit=) ------------------------------------------------------


def test_emit_chooses_what_the_default_emitter_makes_of_each_score() -> None:
    both = LiveDispatcher([constant_scorer()], register_atexit=False)
    events = LiveDispatcher([constant_scorer()], emit="events", register_atexit=False)
    spans = LiveDispatcher([constant_scorer()], emit=("spans",), register_atexit=False)
    try:
        assert both.emitter.signals == ("spans", "events")  # type: ignore[attr-defined]
        assert events.emitter.signals == ("events",)  # type: ignore[attr-defined]
        assert spans.emitter.signals == ("spans",)  # type: ignore[attr-defined]
    finally:
        for d in (both, events, spans):
            d.shutdown()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"emitter": FakeEmitter()}, "with emitter=..., set it there"),
        ({"broker": "redis://127.0.0.1:1/0"}, "emitted on the workers"),
    ],
)
def test_emit_is_refused_where_the_default_emitter_does_not_emit(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        LiveDispatcher([constant_scorer()], emit="events", register_atexit=False, **kwargs)


def test_emit_refuses_an_unknown_signal() -> None:
    with pytest.raises(ValueError, match="unknown signal 'metrics'"):
        LiveDispatcher([constant_scorer()], emit="metrics", register_atexit=False)
