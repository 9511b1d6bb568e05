"""What a failing ``assert checks.…`` prints under pytest (a real pytest in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

FAILING_TESTS = textwrap.dedent(
    """
    from livescore import Run, Step, ToolCall, checks

    RUN = Run(
        input="Where is my refund?",
        output="Your parcel ships on Monday.",
        steps=[Step(kind="tool", tool_call=ToolCall("lookup_order", error="HTTP 503"))],
    )

    def test_mentions_the_refund():
        assert checks.includes(RUN, "refund")

    def test_tools_succeed():
        assert checks.no_tool_errors(RUN)

    def test_passes():
        assert checks.excludes(RUN, "refund")
    """
)


def test_a_failing_check_names_the_check_the_reason_and_the_evidence(tmp_path: Path) -> None:
    (tmp_path / "test_agent.py").write_text(FAILING_TESTS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_agent.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "200"},  # the short summary's width
    )
    out = done.stdout
    assert done.returncode == 1, out
    assert "2 failed, 1 passed" in out
    assert (
        "AssertionError: assert <includes FAILED: the answer does not contain 'refund' "
        "(case ignored); answer: 'Your parcel ships on Monday.'>"
    ) in out
    assert (
        "AssertionError: assert <no-tool-errors FAILED: 1 of 1 tool calls failed: "
        "lookup_order (failed: HTTP 503)>"
    ) in out
    # The short summary keeps the check's name and outcome at the start.
    assert (
        "FAILED test_agent.py::test_mentions_the_refund - AssertionError: assert <includes "
        "FAILED: the answer does not contain 'refund'"
    ) in out
