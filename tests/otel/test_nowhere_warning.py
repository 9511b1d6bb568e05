"""Live scores that reach no OpenTelemetry SDK provider are reported once per process.

Each case runs in a fresh interpreter: the global providers can be set only once per
process, and the warning is once per process, so only a new process starts from a known
state (the test process's own globals are left alone).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_SCRIPT = """
import logging
from opentelemetry import trace, _logs
from livescore.live import LiveDispatcher
from livescore.runs import Run
from livescore.scorers import create_keyword_coverage_scorer

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
EMIT = "spans,events"
SETUP
for round_ in range(2):
    # two dispatchers, two scores each: still one warning per process
    with LiveDispatcher([create_keyword_coverage_scorer()], emit=EMIT, register_atexit=False) as d:
        for i in range(2):
            d.submit(Run(run_id=f"r{round_}{i}", input="Weather in Paris?", output="Sunny."))
        assert d.flush(timeout=60)
        assert d.stats().scored == 2, d.stats()
print("done")
"""

_SDK_TRACES = """
from opentelemetry.sdk.trace import TracerProvider
trace.set_tracer_provider(TracerProvider())
"""
_SDK_LOGS = """
from opentelemetry.sdk._logs import LoggerProvider
_logs.set_logger_provider(LoggerProvider())
"""


def _run(setup: str) -> str:
    code = textwrap.dedent(_SCRIPT).replace("SETUP", setup)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    return done.stderr


def test_scores_with_no_sdk_provider_warn_once_naming_the_fix() -> None:
    stderr = _run("")
    warnings = [line for line in stderr.splitlines() if "go nowhere" in line]
    assert len(warnings) == 1, stderr
    assert warnings[0].startswith("WARNING livescore.otel:")
    assert "opentelemetry.trace.set_tracer_provider(TracerProvider())" in warnings[0]


@pytest.mark.parametrize("setup", [_SDK_TRACES, _SDK_LOGS], ids=["tracer", "logger"])
def test_scores_that_reach_an_sdk_provider_do_not_warn(setup: str) -> None:
    # Spans and events by default: either provider is a place the scores go.
    stderr = _run(setup)
    assert "go nowhere" not in stderr, stderr


def test_an_events_only_emitter_names_the_logger_provider() -> None:
    # The tracer provider is set, but an events-only emitter makes no spans.
    stderr = _run(_SDK_TRACES + 'EMIT = "events"\n')
    warnings = [line for line in stderr.splitlines() if "go nowhere" in line]
    assert len(warnings) == 1, stderr
    assert "opentelemetry._logs.set_logger_provider(LoggerProvider())" in warnings[0]
