"""Shared pieces of the benchmarks: the machine, percentiles, tables, a judge server process,
the results files, and Mastra's pinned npm packages.

Not a benchmark itself. The judge server runs in its own process (``bench/_judge_server.py``)
so its work never competes with the measured process for the GIL, only for CPU.

Results files: each benchmark writes its figures with :func:`write_results`, as JSON with the
machine, the Python and package versions, the git commit and a timestamp. A full run (no
``--quick``, no option that narrows it) writes ``bench/results/<name>.json``, the files the
docs cite (committed); any other run writes ``bench/results/local/<name>.json``
(ignored by git), so a quick look never overwrites the cited figures.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shutil
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
ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"

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
    "aiohttp",
    "httpx",
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


def careful_hallucination_reply(body: Mapping[str, Any]) -> Any:
    """Answer the hallucination scorer about *this* item, as a careful judge would.

    Its claims are the output's sentences, a claim is hallucinated when most of its words
    are missing from the context, and the explanation names each claim: so the answers,
    and the usage the server reports for them (estimated from the text, prompt and
    answer), vary from item to item as a real judge's do.
    """
    from livescore.testing import Reply

    prompt = str(body["messages"][-1]["content"])
    output = re.search(r"<output>\n(.*?)\n</output>", prompt, re.DOTALL)
    context = re.search(r"<context>\n(.*?)\n</context>", prompt, re.DOTALL)
    known = set(re.findall(r"\w+", (context.group(1) if context else "").lower()))

    def claims() -> list[str]:
        text = output.group(1) if output else ""
        return [c.strip() for c in re.split(r"(?<=[.!?])\s+", text) if c.strip()]

    def verdict(claim: str) -> dict[str, str]:
        words = re.findall(r"\w+", claim.lower())
        missing = [w for w in words if w not in known]
        bad = len(missing) * 2 > len(words)
        reason = (
            f"The context does not mention {', '.join(missing[:4])}."
            if bad
            else "The context states this."
        )
        return {"statement": claim, "verdict": "yes" if bad else "no", "reason": reason}

    if "List the factual claims" in prompt:
        return Reply.json({"claims": claims()})
    if "<claims>" in prompt:
        asked = re.findall(r'<claim index="\d+">\n?(.*?)\n?</claim>', prompt, re.DOTALL)
        return Reply.json({"verdicts": [verdict(c) for c in asked]})
    if "list its claims, give one verdict per claim" in prompt:
        found = claims()
        verdicts = [verdict(c) for c in found]
        return Reply.json({"claims": found, "verdicts": verdicts, "reason": "Checked."})
    verdicts = re.findall(r"claim: (.*)", prompt)
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is as computed because"
    named = "; ".join(v.strip() for v in verdicts) or "no claim"
    return Reply.text(f"{opening} of these claims: {named}.")


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


# -- results files --------------------------------------------------------------------------------


def git_state() -> dict[str, Any]:
    """The commit the figures were measured on, and whether the work tree had changes."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        # rstrip: porcelain lines start with a space that is part of the status.
        return done.stdout.rstrip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    # Uncommitted changes to what the figures depend on (the code): documentation and the
    # results files themselves do not count.
    changed = [
        path
        for path in (line[3:] for line in (status or "").splitlines() if line)
        if not (path.endswith(".md") or path.startswith("bench/results/"))
    ]
    return {
        "commit": commit,
        "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
        "dirty": None if status is None else bool(changed),
        "changed": changed,
    }


def load_average() -> list[float] | None:
    """The machine's 1, 5 and 15-minute load (how busy a shared machine was)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


class Results:
    """Collects what a benchmark run needs to say about itself, and writes its figures.

    Create it when the benchmark starts (it notes the time and the load), call
    :meth:`write` at the end::

        record = Results("hot_path", quick=args.quick, partial=args.runtime != "all")
        ...
        record.write(figures, json_path=args.json)
    """

    def __init__(self, name: str, *, quick: bool = False, partial: bool = False) -> None:
        self.name = name
        self.quick = quick
        self.partial = partial
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.load_at_start = load_average()
        self.extra: dict[str, Any] = {}

    @property
    def standard(self) -> bool:
        """A full run with the default options: the one whose figures the docs cite."""
        return not self.quick and not self.partial

    def path(self) -> Path:
        folder = RESULTS_DIR if self.standard else RESULTS_DIR / "local"
        return folder / f"{self.name}.json"

    def write(self, figures: Any, json_path: Path | None = None) -> Path:
        """Write ``figures`` with the run's description; also to ``json_path`` if given."""
        finished = datetime.datetime.now(datetime.timezone.utc)
        document = {
            "benchmark": self.name,
            "command": " ".join(["python", *_relative_argv()]),
            "quick": self.quick,
            "partial": self.partial,
            "started": self.started.isoformat(timespec="seconds"),
            "duration_s": round((finished - self.started).total_seconds(), 1),
            "load_average": {"start": self.load_at_start, "end": load_average()},
            "machine": machine(),
            "git": git_state(),
            **self.extra,
            "results": figures,
        }
        text = json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        console.print(f"figures written to {_shown(path)}")
        if json_path is not None:
            json_path.write_text(text, encoding="utf-8")
        return path


def _relative_argv() -> list[str]:
    script = Path(sys.argv[0]).resolve()
    try:
        shown = str(script.relative_to(ROOT))
    except ValueError:
        shown = sys.argv[0]
    return [shown, *sys.argv[1:]]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# -- Mastra, from npm, pinned ---------------------------------------------------------------------

MASTRA_DIR = ROOT / ".bench-mastra"
# The versions the docs' figures name. keyword-extractor comes with @mastra/evals.
MASTRA_VERSIONS = {"@mastra/evals": "1.10.2", "@mastra/core": "1.71.0", "zod": "4.6.7"}


def mastra_installed_versions() -> dict[str, str | None]:
    """The versions installed in ``.bench-mastra`` (``None`` where a package is missing)."""
    found: dict[str, str | None] = {}
    for name in (*MASTRA_VERSIONS, "keyword-extractor"):
        manifest = MASTRA_DIR / "node_modules" / name / "package.json"
        try:
            found[name] = str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
        except (OSError, ValueError, KeyError):
            found[name] = None
    return found


def ensure_mastra() -> str | None:
    """Install the pinned Mastra packages into ``.bench-mastra`` with npm (once); return why
    they are not available, or ``None`` when they are."""
    if shutil.which("node") is None:
        return "Node.js (`node`) is not installed"

    def ready() -> bool:
        installed = mastra_installed_versions()
        return all(installed[name] == version for name, version in MASTRA_VERSIONS.items())

    if ready():
        return None
    if shutil.which("npm") is None:
        return "npm is not installed and .bench-mastra lacks the pinned Mastra packages"
    MASTRA_DIR.mkdir(exist_ok=True)
    (MASTRA_DIR / "package.json").write_text(
        json.dumps({"name": "bench-mastra", "private": True, "type": "module"}, indent=2)
    )
    packages = [f"{name}@{version}" for name, version in MASTRA_VERSIONS.items()]
    print(f"installing {' '.join(packages)} into {MASTRA_DIR} ...", flush=True)
    try:
        done = subprocess.run(
            [
                "npm",
                "install",
                "--save-exact",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                *packages,
            ],
            cwd=MASTRA_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "npm install timed out after 600 s"
    if done.returncode != 0 or not ready():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return "npm install failed: " + " / ".join(tail)
    return None


def mastra_meta() -> dict[str, Any]:
    """Node's and the Mastra packages' versions, for a results file."""
    try:
        node = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        node = None
    return {"node": node or None, "npm_packages": mastra_installed_versions()}


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (what the docs paste)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
