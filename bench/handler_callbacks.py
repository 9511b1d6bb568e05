"""Benchmark: what each LangChain callback of ``LiveScoringHandler`` costs, on its own.

``bench/hot_path.py`` times whole agent runs, where LangChain's own work dwarfs the
handler's; this one isolates the handler. It records the callbacks a real ``create_agent``
run fires (one tool call, then the answer: 14 events), then replays them straight into the
handler many times, each replay with fresh run ids, and times:

- every callback on its own (``perf_counter_ns`` around the call; the timer's own cost,
  measured here too, is subtracted), as the median per kind of callback;
- whole replays (14 callbacks, no per-call timer), as ns per callback and µs per run.

Two cases: the run is **sampled** (recorded, built and handed to a sink that keeps nothing)
and **not sampled** (only the sampling decision and the bookkeeping that ends the run).
The handler runs with ``emit_run_spans="never"`` and no OpenTelemetry SDK, so the figures
are the handler's own code, not a span pipeline's. Each figure is the best of several
rounds (the least disturbed on a shared machine); compare figures between runs on the same
machine only.

Run: ``python bench/handler_callbacks.py [--quick] [--runs N] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import Results, console, print_machine, table
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from livescore import Run
from livescore.live import DispatchStats, SamplingDecision, ScorerConfig
from livescore.scorers import create_keyword_coverage_scorer
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel

QUESTION = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}]}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temp_c": 21, "sky": "sunny"}


class _Recorder(BaseCallbackHandler):
    """Records every callback LangChain fires, with its arguments."""

    run_inline = True

    def __init__(self) -> None:
        self.events: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            events = object.__getattribute__(self, "events")

            def record(*args: Any, **kwargs: Any) -> None:
                events.append((name, args, kwargs))

            return record
        return object.__getattribute__(self, name)


def record_agent_run() -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """The callbacks of one real agent run: a tool call, then the answer."""
    call = AIMessage(
        "", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]
    )
    model = ScriptedChatModel(responses=[call, "It is 21°C and sunny in Paris."])
    recorder = _Recorder()
    create_agent(model, tools=[get_weather]).invoke(QUESTION, config={"callbacks": [recorder]})
    return recorder.events


class NullSink:
    """A run sink that samples every run (or none) and keeps nothing it is handed."""

    def __init__(self, sampled: bool) -> None:
        scorers = (ScorerConfig(create_keyword_coverage_scorer()),) if sampled else ()
        self._scorers = scorers
        self.submitted = 0

    def sample(self, key: str | None, conversation_id: str | None = None) -> SamplingDecision:
        return SamplingDecision(key, self._scorers)

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        self.submitted += 1
        return True

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        pass

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        pass

    def stats(self) -> DispatchStats:
        return DispatchStats()


Event = tuple[Any, tuple[Any, ...], dict[str, Any]]


def replays(
    handler: LiveScoringHandler,
    events: Sequence[tuple[str, tuple[Any, ...], dict[str, Any]]],
    count: int,
) -> list[list[Event]]:
    """``count`` copies of the run's events, bound to ``handler``, each with fresh run ids."""
    out = []
    for _ in range(count):
        fresh: dict[uuid.UUID, uuid.UUID] = defaultdict(uuid.uuid4)
        run: list[Event] = []
        for name, args, kwargs in events:
            kw = dict(kwargs)
            kw["run_id"] = fresh[kw["run_id"]]
            if kw.get("parent_run_id") is not None:
                kw["parent_run_id"] = fresh[kw["parent_run_id"]]
            run.append((getattr(handler, name), args, kw))
        out.append(run)
    return out


def timer_overhead_ns(samples: int = 20000) -> float:
    clock = time.perf_counter_ns
    costs = []
    for _ in range(samples):
        start = clock()
        costs.append(clock() - start)
    return statistics.median(costs)


def measure(
    events: Sequence[tuple[str, tuple[Any, ...], dict[str, Any]]],
    sampled: bool,
    runs: int,
    rounds: int,
) -> dict[str, Any]:
    clock = time.perf_counter_ns
    overhead = timer_overhead_ns()
    names = [name for name, _, _ in events]
    best_per_kind: dict[str, float] = {}
    best_run_ns = float("inf")
    for _ in range(rounds):
        sink = NullSink(sampled)
        handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
        # Per callback, each call timed on its own.
        per_kind: dict[str, list[int]] = defaultdict(list)
        batch = replays(handler, events, runs)
        gc.collect()
        gc.disable()
        try:
            for run in batch:
                for i, (method, args, kwargs) in enumerate(run):
                    start = clock()
                    method(*args, **kwargs)
                    per_kind[names[i]].append(clock() - start)
        finally:
            gc.enable()
        for name, costs in per_kind.items():
            cost = statistics.median(costs) - overhead
            best_per_kind[name] = min(best_per_kind.get(name, float("inf")), cost)
        # Whole runs, no per-call timer.
        batch = replays(handler, events, runs)
        gc.collect()
        gc.disable()
        try:
            start = clock()
            for run in batch:
                for method, args, kwargs in run:
                    method(*args, **kwargs)
            elapsed = clock() - start
        finally:
            gc.enable()
        best_run_ns = min(best_run_ns, elapsed / runs)
        expected = 2 * runs if sampled else 0
        if sink.submitted != expected or handler.open_runs or handler.callback_errors:
            raise RuntimeError(
                f"the handler did not record the runs: {sink.submitted} submitted of "
                f"{expected}, {handler.open_runs} open, {handler.callback_errors} errors"
            )
    return {
        "per_callback_ns": best_per_kind,
        "per_run_us": best_run_ns / 1e3,
        "per_callback_avg_ns": best_run_ns / len(events),
        "timer_overhead_ns": overhead,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a few seconds)")
    parser.add_argument("--runs", type=int, help="replayed runs per round")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    record = Results("handler_callbacks", quick=args.quick, partial=args.runs is not None)
    runs = args.runs or (2000 if args.quick else 10000)
    rounds = 3 if args.quick else 7
    print_machine("Handler callbacks: the cost of each LangChain callback, on its own")
    events = record_agent_run()
    kinds = list(dict.fromkeys(name for name, _, _ in events))
    results = {}
    for sampled in (True, False):
        label = "sampled" if sampled else "not sampled"
        results[label] = measure(events, sampled, runs, rounds)
    rows = []
    for kind in kinds:
        count = sum(1 for name, _, _ in events if name == kind)
        rows.append(
            [
                kind,
                count,
                *(f"{results[label]['per_callback_ns'][kind]:,.0f}" for label in results),
            ]
        )
    for what, key, fmt in (
        ("average per callback (ns)", "per_callback_avg_ns", "{:,.0f}"),
        ("per run of 14 callbacks (µs)", "per_run_us", "{:,.2f}"),
    ):
        rows.append([what, len(events), *(fmt.format(results[label][key]) for label in results)])
    table(
        f"LiveScoringHandler, median ns per callback (best of {rounds} rounds × {runs:,} runs)",
        ["callback", "per run", "sampled", "not sampled"],
        rows,
    )
    console.print(
        f"timer overhead subtracted: {results['sampled']['timer_overhead_ns']:.0f} ns per "
        "call. The agent run's callbacks are replayed straight into the handler "
        "(emit_run_spans='never', a sink that keeps nothing): the handler's own code only."
    )
    # The bottom rows time whole replays without a per-call timer.
    record.write({"runs": runs, "rounds": rounds, **results}, json_path=args.json)
    return results


if __name__ == "__main__":
    main()
