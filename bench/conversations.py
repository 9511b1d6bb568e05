"""Benchmark: what open conversations cost a live dispatcher (memory, and its idle timers).

A dispatcher with a conversation scorer holds each open conversation's turns until the
conversation has been scored and stayed quiet for ``ConversationLimits.ttl``, and sets one
timer per conversation (entries of one heap on its worker; no thread or task each). This
measures:

- **memory per open conversation**: conversations of ``--turns`` turns of a support agent's
  size (a 160-character question, a 420-character answer, two tool calls with results of
  about 300 characters), submitted to a real dispatcher and held there: what the
  dispatcher keeps alive per conversation once the agent let go of its runs
  (``tracemalloc``), and the bookkeeping part of it (what it adds to runs the agent still
  holds);
- **the hot path**: ``submit()`` of a turn (with a conversation id) on the agent's thread,
  beside ``submit()`` of a run outside any conversation;
- **the timers' cost**: recording a turn on the worker (the heap included) with 1,000,
  10,000 and 100,000 conversations open; finding the conversations due (per conversation
  due); and the worker's CPU while many conversations are open and none is due (it sleeps
  until the earliest deadline: no wake-ups per conversation);
- **end to end**: conversations going quiet a few at a time over a second, each scored by a
  code scorer: the worker's CPU per conversation scored.

Run: ``python bench/conversations.py [--quick] [--json out.json]``; the figures go to
``bench/results/conversations.json``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from _common import Results, console, percentile, print_machine, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from livescore import Run, Step, ToolCall, create_scorer  # noqa: E402
from livescore.live import ConversationLimits, LiveDispatcher  # noqa: E402
from livescore.live._conversations import ConversationTracker  # noqa: E402
from livescore.otel import OTelEmitter  # noqa: E402
from livescore.scoring import Scorer  # noqa: E402

QUESTION = (
    "Hi, I ordered a pair of running shoes last Tuesday (order 48213) and the tracking page "
    "still says 'label created'. Can you tell me where it is?"
)
ANSWER = (
    "I checked order 48213 for you: the parcel left our Lyon warehouse yesterday at 18:40 and "
    "is now with the carrier, who expects to deliver it to your Bellecour locker on Thursday "
    "before noon. The tracking page updates once the carrier scans it at their hub, which "
    "usually happens overnight. You will get an SMS with the locker code as soon as it "
    "arrives. Is there anything else I can help you with today, such as changing the "
    "delivery point?"
)
TRACKING = {
    "order": 48213,
    "status": "in_transit",
    "events": [
        {"at": "2026-11-30T18:40:00Z", "where": "Lyon warehouse", "what": "departed"},
        {"at": "2026-11-30T21:05:00Z", "where": "Lyon hub", "what": "received by carrier"},
    ],
    "carrier": "Colis Express",
}
ESTIMATE = {"order": 48213, "destination": "locker Bellecour", "eta": "2026-12-03T11:00:00Z"}


def support_turn(conversation_id: str, i: int) -> Run:
    """One turn of a support conversation: two tool calls with their results, an answer."""
    steps = [
        Step(
            kind="tool",
            name="track_order",
            index=0,
            input={"order": 48213},
            tool_call=ToolCall("track_order", f"c{i}a", {"order": 48213}, result=dict(TRACKING)),
        ),
        Step(
            kind="tool",
            name="delivery_estimate",
            index=1,
            input={"order": 48213},
            tool_call=ToolCall(
                "delivery_estimate", f"c{i}b", {"order": 48213}, result=dict(ESTIMATE)
            ),
        ),
    ]
    return Run(
        input=f"{QUESTION} ({i})",
        output=f"{ANSWER} ({i})",
        steps=steps,
        trace_id=f"{hash((conversation_id, i)) & (2**128 - 1):032x}",
        span_id=f"{(hash((i, conversation_id)) & (2**64 - 1)) | 1:016x}",
        conversation_id=conversation_id,
    )


def turns_scorer() -> Scorer:
    return create_scorer(
        id="turns",
        description="turns covered",
        level="conversation",
        generate_score=lambda ctx: float(len(ctx.conversation.runs)),
        sync_steps="inline",
    )


def dispatcher(**kwargs: Any) -> LiveDispatcher:
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    # No SDK: the emitter's own cost stays out of the figures.
    emitter = OTelEmitter(tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider())
    kwargs.setdefault("conversation_idle_timeout", 3600.0)
    return LiveDispatcher([turns_scorer()], emitter=emitter, register_atexit=False, **kwargs)


# -- memory -----------------------------------------------------------------------------------


def memory(conversations: int, turns: int) -> dict[str, Any]:
    # Room for all of them: the figure is what each costs, not what the bounds evict.
    limits = ConversationLimits(
        max_conversations=conversations * 2, max_total_chars=conversations * turns * 4000
    )
    d = dispatcher(conversation_limits=limits, max_queue=conversations * turns + 10)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    runs = [support_turn(f"conv-{c}", t) for c in range(conversations) for t in range(turns)]
    made = tracemalloc.get_traced_memory()[0]
    for run in runs:
        d.submit(run)
    assert d.flush(timeout=600)
    gc.collect()
    bookkeeping = tracemalloc.get_traced_memory()[0] - made  # the runs are the agent's still
    del runs
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - base  # the dispatcher alone holds them now
    tracemalloc.stop()
    stats = d.conversation_stats()
    d.shutdown(timeout=0)
    assert stats.open == conversations, stats
    return {
        "conversations": conversations,
        "turns_per_conversation": turns,
        "chars_per_turn": stats.chars // max(stats.turns, 1),
        "held_bytes_per_conversation": round(held / conversations),
        "held_bytes_per_turn": round(held / (conversations * turns)),
        "bookkeeping_bytes_per_conversation": round(bookkeeping / conversations),
        "bookkeeping_bytes_per_turn": round(bookkeeping / (conversations * turns)),
    }


# -- the hot path -----------------------------------------------------------------------------


def hot_path(samples: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, conversation in (("turn", True), ("run", False)):
        d = dispatcher(max_queue=samples + 10)
        if not conversation:
            length = create_scorer(
                id="length",
                description="length",
                generate_score=lambda ctx: 1.0,
                sync_steps="inline",
            )
            d.shutdown(timeout=0)
            from opentelemetry.metrics import NoOpMeterProvider
            from opentelemetry.trace import NoOpTracerProvider

            d = LiveDispatcher(
                [length],
                emitter=OTelEmitter(
                    tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
                ),
                register_atexit=False,
                max_queue=samples + 10,
            )
        runs = [support_turn(f"c{i % 1000}", i) for i in range(samples)]
        if not conversation:
            for run in runs:
                run.conversation_id = None
        timings = []
        for run in runs:
            started = time.perf_counter_ns()
            d.submit(run)
            timings.append((time.perf_counter_ns() - started) / 1000)
        d.flush(timeout=600)
        d.shutdown(timeout=0)
        out[label] = {
            "p50_us": round(percentile(timings, 50), 2),
            "p99_us": round(percentile(timings, 99), 2),
        }
    return out


# -- timers -----------------------------------------------------------------------------------


def tracker_costs(open_counts: list[int], rounds: int) -> list[dict[str, Any]]:
    rows = []
    config = dispatcher().scorers
    for n in open_counts:
        tracker = ConversationTracker(
            60.0, ConversationLimits(max_conversations=n * 2, max_total_chars=10**12)
        )
        run = support_turn("x", 0)
        now = 0.0
        for i in range(n):  # n conversations open, one turn each
            tracker.add(f"c{i}", run, None, config, now)
        # A new turn of an open conversation (the common case: its timer moves, no heap work).
        started = time.perf_counter()
        for r in range(rounds):
            tracker.add(f"c{r % n}", run, None, config, now + 1.0)
        per_turn = (time.perf_counter() - started) / rounds * 1e6
        # A turn that opens a conversation (a heap push; and, once full, an eviction).
        started = time.perf_counter()
        for r in range(rounds):
            tracker.add(f"new{r}", run, None, config, now + 1.0)
        per_new = (time.perf_counter() - started) / rounds * 1e6
        # Every one due: finding them, per conversation due (each popped once, re-armed for
        # its ttl).
        started = time.perf_counter()
        due = tracker.pop_due(now + 1000.0)
        per_due = (time.perf_counter() - started) / max(len(due), 1) * 1e6
        rows.append(
            {
                "open": n,
                "turn_us": round(per_turn, 2),
                "new_conversation_us": round(per_new, 2),
                "due_us": round(per_due, 2),
                "due": len(due),
            }
        )
    return rows


def idle_worker(conversations: int, seconds: float) -> dict[str, Any]:
    """The worker's CPU while ``conversations`` are open and quiet, none due yet."""
    d = dispatcher(
        conversation_limits=ConversationLimits(max_conversations=conversations * 2),
        max_queue=conversations + 10,
    )
    for i in range(conversations):
        d.submit(support_turn(f"c{i}", 0))
    assert d.flush(timeout=600)
    cpu = time.process_time()
    time.sleep(seconds)  # this thread sleeps: the process's CPU is the worker's
    used = time.process_time() - cpu
    d.shutdown(timeout=0)
    return {
        "open": conversations,
        "seconds": seconds,
        "worker_cpu_ms_per_s": round(used / seconds * 1000, 3),
    }


def run_scores(runs: int) -> float:
    """The worker's CPU per run score with a code scorer of the same cost: the baseline."""
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    one = create_scorer(
        id="one", description="one", generate_score=lambda ctx: 1.0, sync_steps="inline"
    )
    d = LiveDispatcher(
        [one],
        emitter=OTelEmitter(
            tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
        ),
        register_atexit=False,
        max_queue=runs + 10,
    )
    batch = [support_turn("none", i) for i in range(runs)]
    for run in batch:
        run.conversation_id = None
    cpu = time.process_time()
    submit_cpu = 0.0
    for run in batch:
        t0 = time.thread_time()
        d.submit(run)
        submit_cpu += time.thread_time() - t0
    d.flush(timeout=600)
    used = time.process_time() - cpu - submit_cpu
    d.shutdown(timeout=0)
    return round(used / runs * 1e6, 1)


def end_to_end(conversations: int, spread_s: float) -> dict[str, Any]:
    """Conversations going quiet a few at a time over ``spread_s``, each one scored."""
    idle = 0.5
    d = dispatcher(conversation_idle_timeout=idle, max_queue=conversations * 2 + 10)
    gap = spread_s / conversations
    cpu = time.process_time()
    started = time.perf_counter()
    submit_cpu = 0.0
    for i in range(conversations):
        t0 = time.thread_time()
        d.submit(support_turn(f"c{i}", 0))
        d.submit(support_turn(f"c{i}", 1))
        submit_cpu += time.thread_time() - t0
        target = started + (i + 1) * gap
        delay = target - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    deadline = time.monotonic() + 120
    while d.stats().scored < conversations and time.monotonic() < deadline:
        time.sleep(0.01)
    used = time.process_time() - cpu - submit_cpu
    scored = d.stats().scored
    d.shutdown(timeout=0)
    return {
        "conversations": conversations,
        "turns_each": 2,
        "spread_s": spread_s,
        "scored": scored,
        "worker_cpu_us_per_conversation": round(used / max(scored, 1) * 1e6, 1),
        "worker_cpu_us_per_run_score": run_scores(conversations * 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    record = Results("conversations", quick=args.quick)
    print_machine("Open conversations: memory and idle timers")
    size = 1000 if args.quick else 2000
    mem = [memory(size, turns) for turns in (1, 5, 20)]
    table(
        "Memory held per open conversation (support turns: 2 tool calls each)",
        ["turns", "chars/turn", "held/conversation", "held/turn", "bookkeeping/turn"],
        [
            (
                m["turns_per_conversation"],
                m["chars_per_turn"],
                f"{m['held_bytes_per_conversation'] / 1024:,.1f} KiB",
                f"{m['held_bytes_per_turn'] / 1024:,.1f} KiB",
                f"{m['bookkeeping_bytes_per_turn']:,} B",
            )
            for m in mem
        ],
    )
    hot = hot_path(2000 if args.quick else 20000)
    table(
        "submit() on the agent's thread",
        ["run", "p50", "p99"],
        [
            (
                "a turn of a conversation",
                f"{hot['turn']['p50_us']} µs",
                f"{hot['turn']['p99_us']} µs",
            ),
            ("a run, no conversation", f"{hot['run']['p50_us']} µs", f"{hot['run']['p99_us']} µs"),
        ],
    )
    counts = [1000, 10_000] if args.quick else [1000, 10_000, 100_000]
    timers = tracker_costs(counts, 20_000 if args.quick else 100_000)
    table(
        "The worker's conversation bookkeeping (one heap of timers)",
        ["open", "a turn", "a new conversation", "per conversation due"],
        [
            (
                f"{t['open']:,}",
                f"{t['turn_us']} µs",
                f"{t['new_conversation_us']} µs",
                f"{t['due_us']} µs",
            )
            for t in timers
        ],
    )
    idle = idle_worker(10_000 if args.quick else 50_000, 1.0 if args.quick else 3.0)
    e2e = end_to_end(200 if args.quick else 1000, 1.0 if args.quick else 2.0)
    table(
        "The worker",
        ["case", "figure"],
        [
            (
                f"{idle['open']:,} open, quiet conversations",
                f"{idle['worker_cpu_ms_per_s']} ms CPU per second",
            ),
            (
                f"{e2e['conversations']:,} conversations going quiet over {e2e['spread_s']} s",
                f"{e2e['worker_cpu_us_per_conversation']} µs CPU per conversation scored "
                "(2 turns recorded, its timer, one score)",
            ),
            (
                "the same code scorer on single runs (the baseline)",
                f"{e2e['worker_cpu_us_per_run_score']} µs CPU per run score",
            ),
        ],
    )
    console.print(
        "The timers are entries of one heap on the worker, which sleeps until the earliest "
        "one: an open, quiet conversation costs no wake-up until it is due."
    )
    record.write(
        {"memory": mem, "submit": hot, "timers": timers, "idle_worker": idle, "end_to_end": e2e},
        json_path=args.json,
    )


if __name__ == "__main__":
    main()
