"""BatchingSink: O(1) sends, batches on its own thread, retries until a deadline, counts."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _sink_support import RecordingBatchSink, make_record
from forking import in_forked_child
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from livescore.sinks import BatchingSink, DeliveryResult, RetryLater, ScoreRecord, SkipRecord

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sinks() -> Iterator[list[BatchingSink[str]]]:
    made: list[BatchingSink[str]] = []
    yield made
    for sink in made:
        sink.shutdown(5)


def new(made: list[BatchingSink[str]], *args: object, **kwargs: object) -> RecordingBatchSink:
    sink = RecordingBatchSink(*args, **kwargs)  # type: ignore[arg-type]
    made.append(sink)
    return sink


def sink_counts(reader: InMemoryMetricReader) -> dict[tuple[str, str, str], int]:
    data = reader.get_metrics_data()
    counts: dict[tuple[str, str, str], int] = {}
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != "livescore.sink.records":
                    continue
                for point in metric.data.data_points:
                    attrs = dict(point.attributes or {})
                    key = (
                        str(attrs["livescore.sink"]),
                        str(attrs["livescore.sink.outcome"]),
                        str(attrs.get("livescore.reason", "")),
                    )
                    counts[key] = int(point.value)
    return counts


def test_records_go_out_in_batches_of_at_most_max_batch(sinks: list[BatchingSink[str]]) -> None:
    sink = new(sinks, max_batch=5, flush_interval=60)
    for n in range(12):
        sink.send(make_record(n))
    assert sink.flush(10)
    assert sorted(len(b) for b in sink.batches) == [2, 5, 5]
    assert sorted(sink.delivered()) == sorted(f"r{n}" for n in range(12))
    stats = sink.stats()
    assert (stats.sent, stats.failed, stats.dropped, stats.pending) == (12, 0, 0, 0)


def test_a_batch_goes_out_after_flush_interval_without_a_flush(
    sinks: list[BatchingSink[str]],
) -> None:
    delivered = threading.Event()

    def answer(batch: Sequence[str], call: int) -> None:
        delivered.set()

    sink = new(sinks, answer, max_batch=100, flush_interval=0.05)
    sink.send(make_record(1))
    assert delivered.wait(10)
    assert sink.delivered() == ["r1"]


def test_send_never_waits_for_a_delivery_in_progress_and_a_full_queue_drops(
    sinks: list[BatchingSink[str]],
) -> None:
    gate = threading.Event()
    sink = new(sinks, gate=gate, max_queue=3, max_batch=1, flush_interval=0)
    sink.send(make_record(1))
    assert sink.entered.wait(10)  # the worker is stuck delivering r1
    for n in range(2, 7):  # returns at once: r2 and r3 fit beside r1, the rest do not
        sink.send(make_record(n))
    stats = sink.stats()
    assert (stats.pending, stats.dropped) == (3, 3)
    assert stats.dropped_by_reason == {"queue_full": 3}
    gate.set()
    assert sink.flush(10)
    assert sink.delivered() == ["r1", "r2", "r3"]


def test_what_deliver_asks_to_retry_is_retried_with_backoff_until_sent(
    sinks: list[BatchingSink[str]],
) -> None:
    def answer(batch: Sequence[str], call: int) -> DeliveryResult | None:
        # r2's target appears on the third try
        if call < 3:
            return DeliveryResult(retry={i: "not_yet" for i, x in enumerate(batch) if x == "r2"})
        return None

    sink = new(sinks, answer, initial_backoff=0.01, max_backoff=0.02, flush_interval=60)
    sink.send(make_record(1))
    sink.send(make_record(2))
    assert sink.flush(10)
    assert sink.batches[0] == ["r1", "r2"]
    assert sink.batches[1:] == [["r2"], ["r2"]]
    assert sink.stats().sent == 2


def test_a_record_retried_past_the_deadline_fails_with_the_reason(
    sinks: list[BatchingSink[str]], caplog: pytest.LogCaptureFixture
) -> None:
    def answer(batch: Sequence[str], call: int) -> DeliveryResult:
        return DeliveryResult(retry=dict.fromkeys(range(len(batch)), "span_not_found"))

    sink = new(sinks, answer, retry_deadline=0.2, initial_backoff=0.01, max_backoff=0.05)
    sink.send(make_record(1))
    with caplog.at_level(logging.DEBUG, logger="livescore.sinks"):
        assert sink.flush(10)
    stats = sink.stats()
    assert (stats.sent, stats.failed) == (0, 1)
    assert stats.failed_by_reason == {"span_not_found": 1}
    assert len(sink.batches) >= 3  # tried, then retried with backoff until the deadline
    warnings_ = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings_) == 1
    assert "span_not_found" in warnings_[0].getMessage()


def test_retry_later_retries_the_whole_batch(sinks: list[BatchingSink[str]]) -> None:
    def answer(batch: Sequence[str], call: int) -> None:
        if call == 1:
            raise RetryLater("http_503")

    sink = new(sinks, answer, initial_backoff=0.01, flush_interval=60)
    sink.send(make_record(1))
    sink.send(make_record(2))
    assert sink.flush(10)
    assert sink.batches == [["r1", "r2"], ["r1", "r2"]]
    assert sink.stats().sent == 2


def test_failures_are_values_and_each_reason_is_logged_once(
    sinks: list[BatchingSink[str]], caplog: pytest.LogCaptureFixture
) -> None:
    def answer(batch: Sequence[str], call: int) -> DeliveryResult:
        if call == 1:
            raise ConnectionAbortedError("boom")
        return DeliveryResult(failed={0: "http_401"}, detail="HTTP 401: bad key")

    sink = new(sinks, answer, max_batch=1, flush_interval=0)
    with caplog.at_level(logging.DEBUG, logger="livescore.sinks"):
        for n in range(4):
            sink.send(make_record(n))
        assert sink.flush(10)
    stats = sink.stats()
    assert stats.failed == 4
    assert stats.failed_by_reason == {"ConnectionAbortedError": 1, "http_401": 3}
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2
    assert any("http_401" in m and "bad key" in m for m in warned)


def test_prepare_may_skip_or_fail_a_record(sinks: list[BatchingSink[str]]) -> None:
    class Picky(RecordingBatchSink):
        def prepare(self, record: ScoreRecord) -> str:
            if record.run.run_id == "r1":
                raise SkipRecord("no_span")
            if record.run.run_id == "r2":
                raise ValueError("cannot encode")
            return record.run.run_id

    sink = Picky()
    sinks.append(sink)
    for n in (1, 2, 3):
        sink.send(make_record(n))
    assert sink.flush(10)
    stats = sink.stats()
    assert (stats.sent, stats.skipped, stats.failed) == (1, 1, 1)
    assert stats.skipped_by_reason == {"no_span": 1}
    assert stats.failed_by_reason == {"prepare_error": 1}
    assert sink.delivered() == ["r3"]


def test_flush_times_out_while_a_delivery_hangs(sinks: list[BatchingSink[str]]) -> None:
    gate = threading.Event()
    sink = new(sinks, gate=gate)
    sink.send(make_record(1))
    assert sink.flush(0.2) is False
    gate.set()
    assert sink.flush(10) is True


def test_shutdown_counts_what_is_left_and_later_sends_as_dropped(
    sinks: list[BatchingSink[str]],
) -> None:
    gate = threading.Event()
    sink = new(sinks, gate=gate, max_batch=1, flush_interval=0)
    sink.send(make_record(1))
    assert sink.entered.wait(10)
    sink.send(make_record(2))
    sink.shutdown(0.2)  # r1 hangs in deliver, r2 never goes
    sink.send(make_record(3))
    gate.set()
    stats = sink.stats()
    assert stats.dropped_by_reason == {"shutdown": 3}
    assert stats.pending == 0
    assert sink.closed
    assert sink.closed_count == 1
    sink.shutdown(1)  # a second call does nothing more
    assert sink.closed_count == 1


def test_outcomes_reach_the_livescore_sink_records_counter(
    sinks: list[BatchingSink[str]],
) -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])

    def answer(batch: Sequence[str], call: int) -> DeliveryResult:
        return DeliveryResult(failed={i: "http_422" for i, x in enumerate(batch) if x == "r2"})

    class Skipping(RecordingBatchSink):
        def prepare(self, record: ScoreRecord) -> str:
            if record.result.status != "scored":
                raise SkipRecord("unscored")
            return record.run.run_id

    sink = Skipping(answer, meter_provider=provider, max_queue=3, flush_interval=60)
    sinks.append(sink)
    for n in (1, 2):
        sink.send(make_record(n))
    sink.send(make_record(3, status="failed", error="judge timed out"))
    sink.send(make_record(4))  # the queue holds 3
    assert sink.flush(10)
    assert sink_counts(reader) == {
        ("recording", "sent", ""): 1,
        ("recording", "failed", "http_422"): 1,
        ("recording", "skipped", "unscored"): 1,
        ("recording", "dropped", "queue_full"): 1,
    }
    provider.shutdown()


def test_flush_delivers_on_the_calling_thread_when_no_thread_can_start(
    sinks: list[BatchingSink[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    sink = new(sinks, flush_interval=60)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    with monkeypatch.context() as patch:
        patch.setattr(threading.Thread, "start", refuse)
        sink.send(make_record(1))
    assert sink.stats().pending == 1
    assert sink.flush(10)
    assert sink.delivered() == ["r1"]
    assert sink.stats().sent == 1


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="max_batch must be at least 1"):
        RecordingBatchSink(max_batch=0)
    with pytest.raises(ValueError, match="retry_deadline"):
        RecordingBatchSink(retry_deadline=-1)
    with pytest.raises(TypeError, match="max_queue must be an int"):
        RecordingBatchSink(max_queue=1.5)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_starts_empty_and_delivers_on_its_own_thread(
    sinks: list[BatchingSink[str]],
) -> None:
    gate = threading.Event()
    sink = new(sinks, gate=gate, max_batch=1, flush_interval=0)
    sink.send(make_record(1))
    assert sink.entered.wait(10)  # the parent's thread is busy at the fork
    sink.send(make_record(2))

    def child() -> dict[str, Any]:
        gate.set()  # the child's own deliveries must not wait (the parent's gate)
        before = sink.stats()
        sink.send(make_record(9))
        flushed = sink.flush(10)
        return {
            "pending_before": before.pending,
            "flushed": flushed,
            "sent": sink.stats().sent,
            "last": sink.delivered()[-1:],
        }

    report = in_forked_child(child)
    assert report == {"pending_before": 0, "flushed": True, "sent": 1, "last": ["r9"]}
    gate.set()
    assert sink.flush(10)
    assert sink.stats().sent == 2  # the parent's r1 and r2, delivered by the parent


def _run_script(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_records_pending_at_exit_are_delivered(tmp_path: Path) -> None:
    out = tmp_path / "delivered.txt"
    done = _run_script(
        f"""
        from _sink_support import RecordingBatchSink, make_record

        class FileSink(RecordingBatchSink):
            def deliver(self, batch):
                with open({str(out)!r}, "a") as f:
                    f.writelines(x + "\\n" for x in batch)

        sink = FileSink(flush_interval=3600)
        for n in range(3):
            sink.send(make_record(n))
        # no flush, no shutdown: the exit hook delivers
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text().split() == ["r0", "r1", "r2"]


def test_at_exit_a_dispatchers_last_scores_still_reach_its_sink(tmp_path: Path) -> None:
    out = tmp_path / "delivered.txt"
    done = _run_script(
        f"""
        from _sink_support import RecordingBatchSink
        from livescore import Run
        from livescore.live import LiveDispatcher
        from livescore.scorers import create_keyword_coverage_scorer

        class FileSink(RecordingBatchSink):
            def deliver(self, batch):
                with open({str(out)!r}, "a") as f:
                    f.writelines(x + "\\n" for x in batch)

        sink = FileSink(flush_interval=3600)
        dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], sinks=[sink])
        for n in range(20):
            dispatcher.submit(Run(input="Rust ownership", output="Ownership", run_id=f"r{{n}}"))
        # the script ends with runs still queued: the dispatcher's exit hook scores them,
        # then the sinks' exit hook delivers their scores
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(out.read_text().split()) == sorted(f"r{n}" for n in range(20))
