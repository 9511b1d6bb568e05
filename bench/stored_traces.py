"""Benchmark: ``livescore eval --traces`` reading stored traces in bounded memory.

``load_traces`` on OTLP JSON files of 20k, 80k and 320k spans, each in a fresh process:
peak RSS (``VmHWM``), seconds, spans, runs, and the most spans of one trace (the most it
holds in memory at once; the others wait in a temporary SQLite file). Two kinds of file:

- *agent runs*: four-span GenAI runs with their messages (``invoke_agent`` > ``chat`` >
  ``execute_tool`` > ``chat``), eight spans a line, four runs in flight at once, so a line
  mixes traces as a Collector's batches do;
- *one-span lines*: a 200-byte attribute per span and no run (what spans alone cost).

Beside each, the same file read with every span held at once (``read_spans`` then
``runs_from_spans``: how ``load_traces`` read before), for comparison.

Then the whole command on the agent-run files: ``livescore eval --traces FILE --scorer
keyword-coverage --out OUT --concurrency 4`` (a code scorer: no judge), in a fresh process:
peak RSS, seconds, runs scored, and the temporary file's size once every run is in it (the
runs wait there and are read back as they are scored). ``--source DIR`` measures another
checkout of the code (an earlier commit unpacked with ``git archive``) on the same files.
Timings are counted, never asserted. Run:
``python bench/stored_traces.py [--quick] [--json P] [--source DIR] [--only-eval]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import ROOT, Results, console, mib, print_machine, table


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _run_spans(n: int) -> list[dict[str, Any]]:
    """Run ``n``'s four spans, children first (the order they end)."""
    trace = f"{0x5BF92F3577B34DA6A3CE929D00000000 + n:032x}"
    root = f"{4 * n + 1:016x}"
    question = f"What is the weather in town {n}? Please answer in one sentence."
    answer = f"It is sunny in town {n}, 21 degrees, with a light breeze from the west."

    def span(index: int, name: str, parent: str | None, attributes: list[Any]) -> dict[str, Any]:
        record: dict[str, Any] = {
            "traceId": trace,
            "spanId": f"{4 * n + index:016x}",
            "name": name,
            "startTimeUnixNano": str(1_000 * n + index),
            "endTimeUnixNano": str(1_000 * n + 10 - index),
            "attributes": attributes,
        }
        if parent is not None:
            record["parentSpanId"] = parent
        return record

    return [
        span(
            2,
            "chat gpt-test",
            root,
            [
                _attr("gen_ai.operation.name", "chat"),
                _attr("gen_ai.input.messages", _messages("user", question)),
                _attr(
                    "gen_ai.output.messages",
                    json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [
                                    {
                                        "type": "tool_call",
                                        "id": "c1",
                                        "name": "get_weather",
                                        "arguments": {"city": f"town {n}"},
                                    }
                                ],
                            }
                        ]
                    ),
                ),
            ],
        ),
        span(
            3,
            "execute_tool get_weather",
            root,
            [
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", "get_weather"),
                _attr("gen_ai.tool.call.id", "c1"),
                _attr("gen_ai.tool.call.result", f"sunny, 21 C, breeze from the west in town {n}"),
            ],
        ),
        span(
            4,
            "chat gpt-test",
            root,
            [
                _attr("gen_ai.operation.name", "chat"),
                _attr("gen_ai.input.messages", _messages("user", question)),
                _attr("gen_ai.output.messages", _messages("assistant", answer)),
            ],
        ),
        span(
            1,
            "invoke_agent weather",
            None,
            [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("gen_ai.input.messages", _messages("user", question)),
                _attr("gen_ai.output.messages", _messages("assistant", answer)),
            ],
        ),
    ]


def _line(spans: list[dict[str, Any]]) -> bytes:
    request = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    return json.dumps(request).encode() + b"\n"


def write_agent_runs(path: Path, spans: int) -> None:
    """``spans`` / 4 runs; four in flight at once, so each line of 8 spans mixes traces."""
    with path.open("wb") as f:
        batch: list[dict[str, Any]] = []
        for group in range(spans // 16):
            runs = [_run_spans(4 * group + k) for k in range(4)]
            for step in range(4):  # the four runs' spans end interleaved
                batch.extend(run[step] for run in runs)
                if len(batch) >= 8:
                    f.write(_line(batch))
                    batch = []
        if batch:
            f.write(_line(batch))


def write_one_span_lines(path: Path, spans: int) -> None:
    with path.open("wb") as f:
        for n in range(spans):
            span = {
                "traceId": f"{0x4BF92F3577B34DA6A3CE929D00000000 + n:032x}",
                "spanId": f"{n + 1:016x}",
                "name": "chat",
                "startTimeUnixNano": "1",
                "endTimeUnixNano": "2",
                "attributes": [_attr("pad", "x" * 200)],
            }
            f.write(_line([span]))


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the parent.
_MEASURE = """
import sys, time
from livescore.traces import load_traces, read_spans, runs_from_spans
start = time.perf_counter()
if sys.argv[2] == "streamed":
    stored = load_traces(sys.argv[1])
    spans, runs, largest = stored.spans, len(stored.runs), stored.largest_trace
else:  # every span held at once, as load_traces read before
    held, _, _ = read_spans(sys.argv[1])
    spans, runs, largest = len(held), len(runs_from_spans(held)), len(held)
seconds = time.perf_counter() - start
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(spans, runs, largest, int(hwm.split()[1]) * 1024, seconds)
"""


# The whole command, the temporary file measured when the runs are all in it (the most it
# holds: after that it is only read).
_EVAL = """
import os, sys, time
from pathlib import Path
import livescore.traces._files as files
from livescore.cli import main
temporary = [0]
try:
    stored_runs = files.StoredRuns.__init__
except AttributeError:  # a checkout from before the runs waited on disk
    stored_runs = None
if stored_runs is not None:
    def noting_its_size(self, store, count):
        folder = Path(store._folder)
        temporary[0] = sum(f.stat().st_size for f in folder.iterdir())
        stored_runs(self, store, count)
    files.StoredRuns.__init__ = noting_its_size
start = time.perf_counter()
code = main(["eval", "--traces", sys.argv[1], "--scorer", "keyword-coverage", "--quiet",
             "--concurrency", "4", "--out", sys.argv[2]])
seconds = time.perf_counter() - start
scored = sum(1 for _ in open(sys.argv[2], "rb"))
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(code, scored, int(hwm.split()[1]) * 1024, seconds, temporary[0])
"""


def measure_eval(sizes: list[int], source: Path, label: str) -> list[dict[str, Any]]:
    """``livescore eval --traces`` whole, on the agent-run files, with the code at ``source``."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path = Path(folder) / f"agent-runs-{size}.jsonl"
            write_agent_runs(path, size)
            out = Path(folder) / "results.jsonl"
            done = subprocess.run(
                [sys.executable, "-c", _EVAL, str(path), str(out)],
                capture_output=True,
                text=True,
                check=False,
                cwd=folder,
                env={**os.environ, "PYTHONPATH": str(source), "COLUMNS": "200"},
            )
            if done.returncode != 0 or not done.stdout.strip():
                raise RuntimeError(f"eval --traces failed: {done.stderr[-2000:]}")
            code, scored, rss, seconds, temporary = done.stdout.split()[-5:]
            rows.append(
                {
                    "file": "agent runs",
                    "code": label,
                    "file_bytes": path.stat().st_size,
                    "spans": size,
                    "runs_scored": int(scored),
                    "exit_code": int(code),
                    "peak_rss_bytes": int(rss),
                    "temporary_file_bytes": int(temporary),
                    "out_bytes": out.stat().st_size,
                    "seconds": float(seconds),
                }
            )
            path.unlink()
            out.unlink()
    table(
        "livescore eval --traces FILE --scorer keyword-coverage --out OUT: peak RSS "
        "(a fresh process each)",
        ["code", "size", "spans", "runs scored", "peak RSS", "temporary file", "seconds"],
        [
            [
                r["code"],
                mib(r["file_bytes"]),
                f"{r['spans']:,}",
                f"{r['runs_scored']:,}",
                mib(r["peak_rss_bytes"]),
                mib(r["temporary_file_bytes"]) if r["temporary_file_bytes"] else "–",
                f"{r['seconds']:.1f}",
            ]
            for r in rows
        ],
    )
    return rows


def measure(sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for kind, write in (
            ("agent runs", write_agent_runs),
            ("one-span lines", write_one_span_lines),
        ):
            for size in sizes:
                path = Path(folder) / f"{kind.replace(' ', '-')}-{size}.jsonl"
                write(path, size)
                for how in ("streamed", "all held"):
                    done = subprocess.run(
                        [sys.executable, "-c", _MEASURE, str(path), how.split()[0]],
                        capture_output=True,
                        text=True,
                        check=True,
                        cwd=ROOT,
                        env={**os.environ, "PYTHONPATH": str(ROOT)},
                    )
                    spans, runs, largest, rss, seconds = done.stdout.split()
                    rows.append(
                        {
                            "file": kind,
                            "read": "load_traces" if how == "streamed" else "every span held",
                            "file_bytes": path.stat().st_size,
                            "spans": int(spans),
                            "runs": int(runs),
                            "most_spans_in_memory": int(largest),
                            "peak_rss_bytes": int(rss),
                            "seconds": float(seconds),
                        }
                    )
                path.unlink()
    table(
        "eval --traces: peak RSS against the file (a fresh process each)",
        ["file", "read", "size", "spans", "runs", "spans in memory", "peak RSS", "seconds"],
        [
            [
                r["file"],
                r["read"],
                mib(r["file_bytes"]),
                f"{r['spans']:,}",
                f"{r['runs']:,}",
                f"{r['most_spans_in_memory']:,}",
                mib(r["peak_rss_bytes"]),
                f"{r['seconds']:.1f}",
            ]
            for r in rows
        ],
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller files")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--source",
        type=Path,
        help="also run eval --traces with the code of this checkout (labelled by its folder)",
    )
    parser.add_argument(
        "--only-eval", action="store_true", help="only the eval --traces rows (no load_traces)"
    )
    args = parser.parse_args()
    record = Results("stored_traces", quick=args.quick)
    print_machine("eval --traces: stored traces in bounded memory")
    sizes = [4_000, 16_000] if args.quick else [20_000, 80_000, 320_000]
    figures: dict[str, Any] = {}
    if not args.only_eval:
        figures["stored_traces"] = measure(sizes)
    evals = []
    if args.source is not None:
        evals += measure_eval(sizes, args.source.resolve(), args.source.name)
    evals += measure_eval(sizes, ROOT, "this checkout")
    figures["eval_traces"] = evals
    console.print(f"wrote {record.write(figures, json_path=args.json)}")


if __name__ == "__main__":
    main()
