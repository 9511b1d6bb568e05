"""Benchmark: the OTLP receiver (``livescore collect``) under hostile load, and stored traces.

1. Slow clients. Well-behaved clients (a separate process: 4 threads, each on one
   keep-alive connection, posting a one-span OTLP JSON request as fast as it is answered)
   run for a fixed time with no slow client attached, then with 4 and with 64 attached
   (each sends a request's headers, then its body a byte every 0.5 s, reconnecting when
   cut off). Printed: well-behaved requests a second, how many were answered 200, and the
   share of the baseline's throughput kept.
2. gzip bombs. Small requests' latency while two gzip bombs (256 MiB each once inflated;
   the cap is 16 MiB) are posted over and over, beside the same requests alone.
3. Stored traces. ``load_traces`` on files of 10k to 160k one-span lines, and on a file
   with one line larger than the line cap, each in a fresh process: peak RSS against the
   file's size.

Timings are counted, never asserted. Run: ``python bench/receiver.py [--quick] [--json P]``.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import ROOT, Results, console, mib, percentile, print_machine, table

TRACE_BASE = 0x4BF92F3577B34DA6A3CE929D00000000


def _body(n: int, pad: int = 1_500) -> bytes:
    span = {
        "traceId": f"{TRACE_BASE + n:032x}",
        "spanId": f"{n + 1:016x}",
        "name": "chat",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": "pad", "value": {"stringValue": "x" * pad}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def _receiver(**options: Any) -> Any:
    from livescore.collect import OTLPReceiver, SpanPipeline
    from livescore.live import LiveDispatcher
    from livescore.scorers import create_keyword_coverage_scorer
    from livescore.traces import AssemblyLimits

    dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
    pipeline = SpanPipeline(dispatcher, AssemblyLimits(quiet_period=0.5), finish_on_root=False)
    receiver = OTLPReceiver(pipeline, port=0, **options).start()
    return receiver, pipeline, dispatcher


def _client(port: int, seconds: float, threads: int, out: Any) -> None:
    """In a child process: ``threads`` keep-alive clients posting for ``seconds``."""
    counts: list[tuple[int, int]] = []
    latencies: list[float] = []

    def run(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        sent = ok = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            body = _body(index * 10_000_000 + sent)
            started = time.perf_counter()
            try:
                conn.request("POST", "/v1/traces", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                ok += response.status == 200
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            latencies.append(time.perf_counter() - started)
            sent += 1
        counts.append((sent, ok))

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    out.put(
        {
            "sent": sum(c[0] for c in counts),
            "ok": sum(c[1] for c in counts),
            "p50_ms": percentile(latencies, 50) * 1000,
            "p99_ms": percentile(latencies, 99) * 1000,
        }
    )


class _Slow(threading.Thread):
    """A client sending a body a byte every ``pause`` seconds, reconnecting when cut off."""

    def __init__(self, port: int, stop: threading.Event, pause: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.port, self.stop, self.pause = port, stop, pause
        self.cut_off = 0

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
                    sock.sendall(
                        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: "
                        b"application/json\r\nContent-Length: 100000\r\n\r\n"
                    )
                    while not self.stop.is_set():
                        sock.sendall(b" ")
                        time.sleep(self.pause)
            except OSError:
                self.cut_off += 1
                time.sleep(0.1)


def _measure(receiver: Any, seconds: float, slow: int) -> dict[str, Any]:
    stop = threading.Event()
    slow_clients = [_Slow(receiver.port, stop) for _ in range(slow)]
    for client in slow_clients:
        client.start()
    time.sleep(1.0 if slow else 0.0)  # every slow client has its body under way
    out: Any = multiprocessing.get_context("spawn").Queue()
    child = multiprocessing.get_context("spawn").Process(
        target=_client, args=(receiver.port, seconds, 4, out)
    )
    child.start()
    result: dict[str, Any] = out.get(timeout=seconds + 120)
    child.join(30)
    stop.set()
    result["slow_clients"] = slow
    result["per_s"] = result["ok"] / seconds
    result["slow_cut_off"] = sum(c.cut_off for c in slow_clients)
    return result


def slow_clients(seconds: float) -> list[dict[str, Any]]:
    receiver, pipeline, dispatcher = _receiver(body_timeout=2.0)
    try:
        rows = [_measure(receiver, seconds, slow) for slow in (0, 4, 64)]
    finally:
        receiver.stop(5)
        pipeline.shutdown(5)
        dispatcher.shutdown(5)
    base = rows[0]["per_s"] or 1.0
    for row in rows:
        row["kept"] = row["per_s"] / base
    table(
        "Well-behaved clients (4 keep-alive connections, another process) with slow clients",
        ["slow clients", "requests/s (200)", "answered 200", "p50 ms", "p99 ms", "kept"],
        [
            [
                r["slow_clients"],
                f"{r['per_s']:.0f}",
                f"{r['ok']}/{r['sent']}",
                f"{r['p50_ms']:.1f}",
                f"{r['p99_ms']:.1f}",
                f"{r['kept']:.0%}",
            ]
            for r in rows
        ],
    )
    return rows


def gzip_bombs(requests: int) -> list[dict[str, Any]]:
    receiver, pipeline, dispatcher = _receiver()
    bomb = gzip.compress(b" " * (256 * 1024 * 1024), compresslevel=9)
    rows = []
    try:
        for bombs in (0, 2):
            stop = threading.Event()
            statuses: list[int] = []

            def send(stop: threading.Event = stop, statuses: list[int] = statuses) -> None:
                while not stop.is_set():
                    conn = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=60)
                    conn.request(
                        "POST",
                        "/v1/traces",
                        bomb,
                        {"Content-Type": "application/json", "Content-Encoding": "gzip"},
                    )
                    statuses.append(conn.getresponse().status)
                    conn.close()

            senders = [threading.Thread(target=send, daemon=True) for _ in range(bombs)]
            for sender in senders:
                sender.start()
            latencies = []
            conn = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=60)
            for n in range(requests):
                started = time.perf_counter()
                conn.request("POST", "/v1/traces", _body(n), {"Content-Type": "application/json"})
                conn.getresponse().read()
                latencies.append(time.perf_counter() - started)
            stop.set()
            for sender in senders:
                sender.join(60)
            rows.append(
                {
                    "bombs": bombs,
                    "p50_ms": percentile(latencies, 50) * 1000,
                    "max_ms": max(latencies) * 1000,
                    "bomb_answers": sorted(set(statuses)),
                    "bombs_answered": len(statuses),
                }
            )
    finally:
        receiver.stop(5)
        pipeline.shutdown(5)
        dispatcher.shutdown(5)
    table(
        "Small requests while gzip bombs (256 MiB inflated, 16 MiB cap) are posted",
        ["bombs in flight", "p50 ms", "max ms", "bombs answered"],
        [
            [r["bombs"], f"{r['p50_ms']:.1f}", f"{r['max_ms']:.1f}", r["bombs_answered"]]
            for r in rows
        ],
    )
    return rows


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the parent.
_RSS = """
import sys
from livescore.traces import load_traces
stored = load_traces(sys.argv[1])
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(stored.spans, len(stored.problems), int(hwm.split()[1]) * 1024)
"""


def stored_traces(sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for lines in sizes:
            path = Path(folder) / f"{lines}.jsonl"
            with path.open("wb") as f:
                for n in range(lines):
                    f.write(_body(n, pad=200) + b"\n")
            files.append((f"{lines:,} one-span lines", path))
        huge = Path(folder) / "huge.jsonl"
        with huge.open("wb") as f:
            f.write(_body(0, pad=200) + b"\n")
            f.write(b'{"resourceSpans": [], "pad": "' + b"x" * (256 * 1024 * 1024) + b'"}\n')
        files.append(("one 256 MiB line (past the 64 MiB cap)", huge))
        for label, path in files:
            done = subprocess.run(
                [sys.executable, "-c", _RSS, str(path)],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            spans, problems, rss = (int(v) for v in done.stdout.split())
            rows.append(
                {
                    "file": label,
                    "file_bytes": path.stat().st_size,
                    "spans": spans,
                    "problems": problems,
                    "peak_rss_bytes": rss,
                }
            )
    table(
        "eval --traces: load_traces peak RSS against the file (a fresh process each)",
        ["file", "size", "spans", "bad lines", "peak RSS"],
        [
            [r["file"], mib(r["file_bytes"]), r["spans"], r["problems"], mib(r["peak_rss_bytes"])]
            for r in rows
        ],
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, smaller files")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    record = Results("receiver", quick=args.quick)
    print_machine("OTLP receiver under hostile load; stored traces")
    figures = {
        "slow_clients": slow_clients(4.0 if args.quick else 15.0),
        "gzip_bombs": gzip_bombs(50 if args.quick else 200),
        "stored_traces": stored_traces(
            [10_000, 40_000] if args.quick else [10_000, 40_000, 160_000]
        ),
    }
    console.print(f"wrote {record.write(figures, json_path=args.json)}")


if __name__ == "__main__":
    main()
