"""Run every benchmark in sequence, each in its own process: ``python bench/run_all.py [--quick]``.

``make bench`` calls this. Each benchmark prints its own tables and the machine it ran on,
and writes its figures to ``bench/results/<name>.json`` (with ``--quick``, to
``bench/results/local/``, which git ignores). After a full run the docs' tables are
rendered afresh from the results files (``bench/render_tables.py --write``). A
benchmark that fails is reported at the end and makes the exit status non-zero.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent

BENCHMARKS = (
    "hot_path.py",
    "throughput.py",
    "judge_pipeline.py",
    "keyword_coverage.py",
    "burst.py",
    "handler_callbacks.py",
    "import_time.py",
    "code_scorers.py",
    "sinks.py",
    "judge_quality.py",  # skipped, with a message, without the local-judge extra
    "judge_cost.py",
    "fleet.py",
    "fleet_faults.py",
    "traces.py",
    "conversations.py",
    "pii.py",
    "alerts.py",
    "eval_ci.py",
)


def quick_args(script: Path) -> list[str]:
    """How to ask ``script`` for its short run."""
    text = script.read_text(encoding="utf-8")
    if "--quick" in text:
        return ["--quick"]
    if "--seconds" in text:  # a timed benchmark without --quick: time it shorter
        return ["--seconds", "1"]
    return []


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (about 4 minutes)")
    parser.add_argument(
        "--no-render", action="store_true", help="leave the docs' tables as they are"
    )
    args = parser.parse_args(argv)
    failed: list[str] = []
    started = time.perf_counter()
    for name in BENCHMARKS:
        script = BENCH_DIR / name
        if not script.exists():
            print(f"\n{name}: not found, skipped", flush=True)
            continue
        extra = quick_args(script) if args.quick else []
        print(f"\n$ python bench/{name} {' '.join(extra)}".rstrip(), flush=True)
        t0 = time.perf_counter()
        code = subprocess.call([sys.executable, str(script), *extra])
        print(f"[bench/{name}: {time.perf_counter() - t0:.0f} s, exit {code}]", flush=True)
        if code != 0:
            failed.append(name)
    total = time.perf_counter() - started
    print(f"\nall benchmarks: {total:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if not args.quick and not args.no_render:
        print("\n$ python bench/render_tables.py --write", flush=True)
        if subprocess.call([sys.executable, str(BENCH_DIR / "render_tables.py"), "--write"]):
            failed.append("render_tables.py")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
