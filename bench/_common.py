"""Shared pieces of the benchmarks: the machine, percentiles, tables, a judge server process.

Not a benchmark itself. The judge server runs in its own process (``bench/_judge_server.py``)
so its work never competes with the measured process for the GIL, only for CPU.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

BENCH_DIR = Path(__file__).resolve().parent

# Wide enough for the tables when the output goes to a file or a pipe.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 150)

PACKAGES = (
    "livescore-ai",
    "livescore-langchain",
    "langchain",
    "langchain-core",
    "langgraph",
    "openai",
    "opentelemetry-sdk",
    "openinference-instrumentation-langchain",
    "langfuse",
    "livescore-openai-agents",
    "openai-agents",
    "openinference-instrumentation-openai-agents",
)


# -- the machine ---------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the figures were measured on: cores, CPU, memory, Python, package versions."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 0
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "cores": usable,
        "cpu": _cpu_model(),
        "memory_gib": _memory_gib(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(terse=True),
        "packages": versions,
    }


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.machine()


def _memory_gib() -> float | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    match = re.search(r"^MemTotal:\s*(\d+) kB", text, re.MULTILINE)
    return round(int(match.group(1)) / 2**20, 1) if match else None


def print_machine(title: str) -> None:
    """Print the benchmark's title and the machine it runs on."""
    info = machine()
    console.rule(f"[bold]{title}")
    memory = f", {info['memory_gib']} GiB RAM" if info["memory_gib"] else ""
    console.print(f"machine: {info['cores']} cores ({info['cpu']}){memory}, {info['platform']}")
    console.print(f"python:  {info['python']}")
    packages = ", ".join(f"{k} {v}" for k, v in info["packages"].items())
    console.print(f"packages: {packages}")
    console.print()


# -- numbers -------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def current_rss() -> int:
    """The process's resident memory now, in bytes (0 where /proc is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a table (numbers right-aligned)."""
    out = Table(title=title, title_justify="left", show_lines=False)
    for i, column in enumerate(columns):
        out.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        out.add_row(*(str(cell) for cell in row))
    console.print(out)


# -- a judge that answers the hallucination scorer ----------------------------------------------

# Claims the judge "finds" in any output; verdicts always match the number of claims asked.
CLAIMS = (
    "The parcel left the Lyon depot on Monday.",
    "Delivery to a locker takes two working days.",
)


def judge_model(latency_s: float) -> str:
    """The model name that makes the bench judge server answer after ``latency_s``."""
    return f"bench-judge@{latency_s:g}"


def agent_model(latency_s: float) -> str:
    """The model name that makes the bench server play the agent's model (see
    :func:`agent_turn`), answering each turn after ``latency_s``."""
    return f"bench-agent@{latency_s:g}"


# The agent's script, the same on every runtime: two tool calls, then the answer.
AGENT_CALLS = (
    ("track_parcel", {"parcel_id": "4711"}),
    ("delivery_estimate", {"parcel_id": "4711", "destination": "locker"}),
)
AGENT_ANSWER = (
    "Parcel 4711 left the Lyon depot on Monday and is on its way to the Bellecour locker; "
    "delivery to a locker takes two working days, so expect it on Wednesday."
)


def agent_turn(body: Mapping[str, Any]) -> Any:
    """The agent's next turn: one tool call per tool result still missing, then the answer."""
    from livescore.testing import Reply

    messages = body.get("messages") or []
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    done = sum(1 for m in messages[start:] if m.get("role") == "tool")
    if done < len(AGENT_CALLS):
        return Reply.tool_calls(AGENT_CALLS[done], ids=[f"call_{done + 1}"])
    return Reply.text(AGENT_ANSWER)


def bench_reply(body: Mapping[str, Any]) -> Any:
    """Answer any request of the hallucination and faithfulness scorers, or of the bench
    agent, after the latency its model names."""
    from livescore.testing import Reply

    model = str(body.get("model", ""))
    latency = float(model.split("@", 1)[1]) if "@" in model else 0.0
    if model.startswith("bench-agent"):
        turn = agent_turn(body)
        return Reply.delay(latency, turn) if latency > 0 else turn
    response_format = body.get("response_format") or {}
    schema = None
    if response_format.get("type") == "json_schema":
        schema = response_format["json_schema"]["name"]
    prompt = str(body["messages"][-1]["content"])
    verdict = {"verdict": "no", "reason": "The tracking record states it."}
    reply: Any
    if schema == "ExtractedClaims":
        reply = Reply.json({"claims": list(CLAIMS)})
    elif schema in ("ClaimVerdicts", "FaithfulnessVerdicts"):
        # "no" is "not hallucinated" for the one and "contradicted" for the other: either
        # way a valid answer with one verdict per claim, which is all a benchmark needs.
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.DOTALL)
        reply = Reply.json({"verdicts": [{"statement": c, **verdict} for c in claims]})
    elif schema == "OneCallAnswer":
        reply = Reply.json(
            {
                "claims": list(CLAIMS),
                "verdicts": [{"statement": c, **verdict} for c in CLAIMS],
                "reason": "Both claims are in the tracking record.",
            }
        )
    else:
        reply = Reply.text("The score is 0 because both claims are in the tracking record.")
    return Reply.delay(latency, reply) if latency > 0 else reply


@contextmanager
def judge_server() -> Iterator[str]:
    """Run the bench judge server in a child process; yield its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(BENCH_DIR / "_judge_server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("http://"):
            raise RuntimeError(f"the judge server did not start: {line!r}")
        yield line
    finally:
        if proc.stdin is not None:
            proc.stdin.close()  # the server exits when its stdin closes
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def emit_json(data: Mapping[str, Any]) -> None:
    """A child process's result, as the last line of its output."""
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()
