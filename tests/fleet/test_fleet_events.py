"""The fleet's scores as gen_ai.evaluation.result events: parented to the runs' spans carried
in the jobs, exported before a job's results are acknowledged, chosen with ``--emit``."""

from __future__ import annotations

import anyio
from fleet_support import Fleet, wait_for
from opentelemetry.sdk.trace import TracerProvider

from livescore import Run
from livescore.evals import run_evals
from livescore.live import LiveDispatcher
from livescore.scorers import create_keyword_coverage_scorer

DATA = [
    {"input": "Rust ownership rules", "output": "Ownership rules in Rust", "id": "a"},
    {"input": "Python generators", "output": "Nothing relevant", "id": "b"},
    {"input": "Go channels", "output": "Channels in Go", "id": "c"},
]


def test_a_jobs_events_are_exported_before_its_results_come_back(fleet: Fleet) -> None:
    # A batch delay no test waits for: only the worker's commit can export the events.
    worker = fleet.start_worker(
        "--scorer-concurrency", "4", env={"OTEL_BLRP_SCHEDULE_DELAY": "600000"}
    )
    provider = TracerProvider()  # the items get spans of their own, here
    result = anyio.run(
        lambda: run_evals(
            DATA, [create_keyword_coverage_scorer()], broker=fleet.url, tracer_provider=provider
        )
    )
    provider.shutdown()
    # No waiting: the results came back, so the events have left the worker.
    events = {e.span_id: e for e in fleet.receiver.events()}
    assert len(events) == len(DATA)
    for item in result.items:
        assert item.run is not None
        event = events[str(item.run.span_id)]
        assert event.trace_id == item.run.trace_id
        assert event.attributes["gen_ai.evaluation.name"] == "keyword-coverage"
        assert event.attributes["gen_ai.evaluation.score.value"] == (
            item.scores["keyword-coverage"].score
        )
        assert event.attributes["livescore.source"] == "eval"
        assert event.service_name == "livescore-worker-test"
    assert worker.terminate() == 0


def _run(i: int) -> Run:
    return Run(
        input="Rust ownership",
        output="Ownership in Rust",
        run_id=f"run-{i}",
        trace_id=f"{i + 1:032x}",
        span_id=f"{i + 1:016x}",
        name="rust-tutor",
    )


def _score_live(fleet: Fleet, runs: list[Run]) -> None:
    with LiveDispatcher(
        [create_keyword_coverage_scorer()], broker=fleet.url, register_atexit=False
    ) as dispatcher:
        for run in runs:
            assert dispatcher.submit(run)
        assert dispatcher.flush(timeout=30)


def test_emit_spans_and_otlp_endpoint(fleet: Fleet) -> None:
    # --otlp-endpoint wins over the variables, which point nowhere here.
    worker = fleet.start_worker(
        "--otlp-endpoint",
        fleet.receiver.url,
        "--emit",
        "spans",
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
    )
    runs = [_run(i) for i in range(3)]
    _score_live(fleet, runs)
    fleet.wait_for_pairs({(r.run_id, "keyword-coverage") for r in runs})
    assert worker.terminate() == 0
    assert fleet.receiver.events() == []


def test_emit_events_with_the_proposals(fleet: Fleet) -> None:
    worker = fleet.start_worker("--emit", "events", "--semconv-proposals")
    runs = [_run(i) for i in range(3)]
    _score_live(fleet, runs)
    wait_for(lambda: len(fleet.receiver.events()) >= len(runs), 30, "the events")
    assert worker.terminate() == 0
    assert fleet.score_spans() == []
    events = {e.span_id: e for e in fleet.receiver.events()}
    assert set(events) == {r.span_id for r in runs}
    for run in runs:
        event = events[str(run.span_id)]
        assert event.trace_id == run.trace_id
        assert event.attributes["livescore.run.id"] == run.run_id
        assert event.attributes["livescore.source"] == "live"
        assert event.attributes["gen_ai.evaluation.evaluator.type"] == "deterministic"
        assert event.attributes["gen_ai.evaluation.target"] == "rust-tutor"
