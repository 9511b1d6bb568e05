"""``livescore collect --broker``: runs received over OTLP are scored by the fleet's
``livescore worker`` processes, under the received run's span."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from fleet_support import HERE, Fleet, wait_for
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces"))
from _trace_support import genai_tool_run


def test_received_runs_are_handed_to_the_fleet(fleet: Fleet, tmp_path: Path) -> None:
    fleet.start_worker()
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    collect = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "livescore.cli",
            "collect",
            "fleet_scorers:scorers",
            "--listen",
            "127.0.0.1:0",
            "--broker",
            fleet.url,
            "--quiet-period",
            "0.3",
        ],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert collect.stderr is not None
    line = collect.stderr.readline()
    found = re.search(r"on (http://127\.0\.0\.1:\d+)/v1/traces", line)
    assert found, line
    provider = TracerProvider()
    sent = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(sent))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=found.group(1) + "/v1/traces"))
    )
    genai_tool_run(provider, question="Weather in Lyon?", answer="It is sunny in Lyon.")
    provider.shutdown()
    root = next(s for s in sent.get_finished_spans() if s.parent is None)
    run_id = format(root.context.span_id, "016x")
    try:
        fleet.wait_for_pairs([(run_id, "keyword-coverage")], timeout=60)
    finally:
        collect.send_signal(signal.SIGTERM)
        _, err = collect.communicate(timeout=60)
    assert collect.returncode == 0, err
    assert "handed off 3" in err  # keyword-coverage, crasher, raiser: the fleet's scorers
    wait_for(lambda: len(fleet.score_spans()) == 3, 30, "three scores\n" + fleet.logs())
    [score] = [s for s in fleet.score_spans() if s.name == "evaluation keyword-coverage"]
    assert score.parent_span_id == run_id
    assert score.trace_id == format(root.context.trace_id, "032x")
