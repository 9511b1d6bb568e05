"""``livescore eval`` with --otlp-endpoint, --phoenix and --langfuse: each item's trace and
scores reach the dashboards."""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli_support import hallucination_responder, write_jsonl
from otlp_receiver import OTLPTestReceiver
from phoenix_server import get_json
from score_api_doubles import LangfuseTestReceiver

from livescore.cli import main
from livescore.cli._export import Export
from livescore.testing import OpenAITestServer

ITEMS = [
    {"id": "a", "input": "Rust ownership rules", "output": "Ownership in Rust has three rules."},
    {"id": "b", "input": "Python generators", "output": "Generators yield values lazily."},
]
JUDGED_ITEMS = [
    {"question": "When does it open?", "context": "It opens at 8.", "output": "At 8."},
    {"question": "Where is it?", "context": "It is in Lyon.", "output": "In Lyon."},
]


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def langfuse(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangfuseTestReceiver]:
    with LangfuseTestReceiver() as receiver:
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-cli")
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-cli")
        monkeypatch.setenv("LANGFUSE_BASE_URL", receiver.url)
        yield receiver


def test_langfuse_scores_name_the_traces_sent_to_the_otlp_endpoint(
    tmp_path: Path, langfuse: LangfuseTestReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    with OTLPTestReceiver() as collector:
        code = main(["eval", str(data), "--quiet", "--otlp-endpoint", collector.url, "--langfuse"])
    assert code == 0, capsys.readouterr().err
    assert "langfuse: sent 2 · failed 0 · skipped 0 · dropped 0" in capsys.readouterr().err
    items = {s.span_id: s for s in collector.spans if s.name == "eval_item"}
    assert {s.service_name for s in collector.spans} == {"livescore-eval"}
    scores = langfuse.scores()
    assert len(scores) == 2
    for score in scores:
        span = items[score["observationId"]]
        assert score["traceId"] == span.trace_id
        assert score["name"] == "keyword-coverage"
        assert score["value"] > 0


def test_the_otlp_endpoint_gets_each_score_as_an_event_on_its_items_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    with OTLPTestReceiver() as collector:
        code = main(["eval", str(data), "--quiet", "--otlp-endpoint", collector.url])
    assert code == 0, capsys.readouterr().err
    items = {s.span_id: s for s in collector.spans if s.name == "eval_item"}
    events = collector.events()
    assert len(events) == 2
    for event in events:
        print(event.line())
        assert event.span_id in items
        assert event.trace_id == items[event.span_id].trace_id
        assert event.attributes["gen_ai.evaluation.name"] == "keyword-coverage"
        assert event.attributes["livescore.source"] == "eval"
        assert event.service_name == "livescore-eval"
    assert len([s for s in collector.spans if s.name.startswith("evaluation ")]) == 2


@pytest.mark.parametrize(
    ("emit", "score_spans", "events"), [("spans", 2, 0), ("events", 0, 2), ("events,spans", 2, 2)]
)
def test_emit_chooses_spans_events_or_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], emit: str, score_spans: int, events: int
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    with OTLPTestReceiver() as collector:
        argv = ["eval", str(data), "--quiet", "--otlp-endpoint", collector.url, "--emit", emit]
        code = main([*argv, "--semconv-proposals"])
    assert code == 0, capsys.readouterr().err
    spans = [s for s in collector.spans if s.name.startswith("evaluation ")]
    assert len(spans) == score_spans
    assert len(collector.events()) == events
    assert len([s for s in collector.spans if s.name == "eval_item"]) == 2  # always
    for record in [*(s.attributes for s in spans), *(e.attributes for e in collector.events())]:
        assert record["gen_ai.evaluation.evaluator.id"] == "keyword-coverage"
        assert record["gen_ai.evaluation.evaluator.type"] == "deterministic"


@pytest.mark.parametrize(
    ("otlp", "emit", "logs"),
    [(False, None, False), (True, None, True), (True, ("spans",), False)],
)
def test_events_go_to_the_otlp_endpoint_only_never_to_phoenix(
    otlp: bool, emit: tuple[str, ...] | None, logs: bool
) -> None:
    # Phoenix has no logs endpoint: --phoenix gets the traces, never the events. (Both are
    # up: a destination that is down is refused before scoring.)
    with OTLPTestReceiver() as phoenix, OTLPTestReceiver() as collector:
        args = argparse.Namespace(
            otlp_endpoint=collector.url if otlp else None,
            phoenix=phoenix.url,
            langfuse=False,
            emit=emit,
        )
        export = Export.from_args(args)
        try:
            assert (export.logger_provider is not None) == logs
            assert f"{phoenix.url}/v1/traces" in export.urls
        finally:
            for sink in export.sinks:
                sink.shutdown(0)
            export.sinks = []
            export.close()


def test_usage_errors_come_before_any_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    assert main(["eval", str(data), "--quiet", "--langfuse"]) == 2
    assert "LANGFUSE_PUBLIC_KEY" in capsys.readouterr().err
    assert main(["eval", str(data), "--quiet", "--phoenix", "grpc://127.0.0.1:4317"]) == 2
    assert "--phoenix" in capsys.readouterr().err
    argv = ["eval", str(data), "--quiet", "--broker", "redis://127.0.0.1:1/0", "--emit", "spans"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "error: --emit: with --broker the workers emit the scores: give it to livescore worker"
    )
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(data), "--quiet", "--emit", "metrics"])
    assert exited.value.code == 2
    assert "argument --emit: unknown signal 'metrics'" in capsys.readouterr().err


@pytest.mark.phoenix
def test_each_item_is_a_trace_in_phoenix_with_its_scores_as_badges(
    tmp_path: Path, phoenix_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tagged = [{**item, "id": f"{item['id']}-{tmp_path.name}"} for item in ITEMS]
    data = write_jsonl(tmp_path / "data.jsonl", tagged)
    out = tmp_path / "results.jsonl"
    code = main(["eval", str(data), "--quiet", "--phoenix", phoenix_url, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "phoenix: sent 2 · failed 0 · skipped 0 · dropped 0" in capsys.readouterr().err
    results = [json.loads(line) for line in out.read_text().splitlines()]
    span_ids = {r["span_id"]: r for r in results}
    query = "&".join(f"span_ids={s}" for s in span_ids)
    annotations: list[dict[str, Any]] = get_json(
        f"{phoenix_url}/v1/projects/default/span_annotations?{query}&limit=100"
    )["data"]
    assert len(annotations) == 2
    for annotation in annotations:
        result = span_ids[annotation["span_id"]]
        score = result["scores"]["keyword-coverage"]
        assert annotation["name"] == "keyword-coverage"
        assert annotation["annotator_kind"] == "CODE"
        assert annotation["result"]["score"] == pytest.approx(score["score"])
        assert annotation["result"]["label"] == score["label"]
        assert annotation["metadata"]["livescore.source"] == "eval"


# -- what was not delivered --------------------------------------------------------------------


@contextlib.contextmanager
def _hanging_up_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:PORT``: accepts each connection and closes it unanswered (an
    endpoint that is up when the command starts, and takes nothing)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join(timeout=10)
        listener.close()


def test_spans_an_endpoint_did_not_take_are_one_line_and_exit_1(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    with _hanging_up_endpoint() as url:
        code = main(["eval", str(data), "--quiet", "--otlp-endpoint", url])
    err = capfd.readouterr().err
    # Before: exit 0, the exporter's raw "Transient error …" lines, and no summary.
    assert code == 1
    assert "Transient error" not in err
    lines = [line for line in err.splitlines() if "not delivered" in line]
    assert len(lines) == 2, err
    assert lines[0].startswith(f"traces: 4 of 4 span(s) not delivered to {url}/v1/traces (")
    assert lines[1].startswith(f"events: 2 of 2 event(s) not delivered to {url}/v1/logs (")


@pytest.mark.parametrize("option", ["--otlp-endpoint", "--phoenix", "--langfuse"])
def test_a_destination_that_is_down_is_refused_before_the_judge_is_paid(
    option: str,
    tmp_path: Path,
    refused_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Before: every item scored (and the judge paid), then 11 s of retries and "not
    # delivered". Now checked before scoring, as --out is.
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-cli")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-cli")
    monkeypatch.setenv("LANGFUSE_BASE_URL", refused_url)
    data = write_jsonl(tmp_path / "data.jsonl", JUDGED_ITEMS)
    out = tmp_path / "out.jsonl"
    destination = [] if option == "--langfuse" else [refused_url]
    with OpenAITestServer(responder=hallucination_responder) as judge:
        code = main(
            [
                "eval",
                str(data),
                "--quiet",
                "--scorer",
                "hallucination",
                "--model",
                "m",
                "--base-url",
                judge.base_url,
                "--out",
                str(out),
                option,
                *destination,
            ]
        )
        assert judge.requests == []
    err = capfd.readouterr().err
    assert code == 2
    port = refused_url.rsplit(":", 1)[1]
    assert err.splitlines()[-1] + "\n" == (
        f"error: {option}: nothing answers at http://127.0.0.1:{port} (connection refused); "
        f"start it or leave {option} out (checked before scoring: nothing was scored)\n"
    )
    assert not out.exists()


def test_events_a_traces_only_backend_refuses_are_said_with_the_fix_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    with OTLPTestReceiver(traces_only=True) as jaeger_like:
        code = main(["eval", str(data), "--quiet", "--otlp-endpoint", jaeger_like.url])
        err = capsys.readouterr().err
        # Before: exit 0, "4 span(s) sent", and the two events lost without a word.
        assert code == 1
        assert f"traces: 4 span(s) sent to {jaeger_like.url}/v1/traces" in err
        assert (
            f"events: 2 of 2 event(s) not delivered to {jaeger_like.url}/v1/logs (HTTP 404: "
            "the endpoint takes no logs (Jaeger takes none); --emit spans sends none)"
        ) in " ".join(err.split())
        args = ["eval", str(data), "--quiet", "--otlp-endpoint", jaeger_like.url]
        assert main([*args, "--emit", "spans"]) == 0
        assert "not delivered" not in capsys.readouterr().err
    assert len(jaeger_like.spans) == 8


def test_spans_that_arrived_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ITEMS)
    with OTLPTestReceiver() as collector:
        assert main(["eval", str(data), "--quiet", "--otlp-endpoint", collector.url]) == 0
    err = capsys.readouterr().err
    assert f"traces: 4 span(s) sent to {collector.url}/v1/traces" in err
    assert f"events: 2 event(s) sent to {collector.url}/v1/logs" in err
