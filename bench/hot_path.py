"""Benchmark 1: what each observability option adds to every agent run, on the agent's thread.

The same LangChain ``create_agent`` agent (a scripted chat model, two tool calls, then the
answer) runs N times per configuration, in one process:

- no callbacks (the baseline);
- livescore: ``LiveScoringHandler`` at 100 % sampling, with a hallucination scorer (three
  judge calls per score) whose judge answers after 1 s, plus keyword coverage; the same
  with a 0.1 s judge (the same scoring work, done sooner: in burst mode more of it falls
  inside the timed runs); keyword coverage alone (no judge client in the process); and the
  handler alone, handing its runs to a sink that keeps them (capture and its own spans);
- OpenInference's ``LangChainInstrumentor`` on an SDK ``TracerProvider`` with a
  ``BatchSpanProcessor`` to an exporter that drops everything;
- Langfuse's LangChain ``CallbackHandler`` (its OTel pipeline, exporting to the same kind of
  exporter; its API endpoint is a dead local port, so nothing leaves the machine).

Two modes:

- **Burst mode**, two scenarios: a model that answers at once (CPU-bound runs back to back:
  the worst case, where everything in the process competes for the GIL), and a model that
  takes 20 ms per turn (the agent waits on I/O, as every real agent does). Configurations run
  in interleaved blocks (their order rotates each round) so that drift on a shared machine
  spreads evenly; ``gc.collect()`` runs before each block. livescore's scores are finished
  (flushed) after each block, **outside** the timed runs: the per-run CPU figure holds only
  what ran during the runs, and the CPU spent finishing the scores is reported apart.
- **Steady state**: runs arrive at a fixed rate (5 per second, the model answering in 20 ms),
  in windows of 10 s (3 per configuration, interleaved; 1 window of 4 s with ``--quick``).
  Each window ends by draining the configuration's background work (every score finished,
  spans exported), and process CPU (every thread: the agent's, livescore's worker, the span
  processors') is taken over the whole window, so *CPU per run* is everything the
  configuration cost the process per run. The configurations: the baseline, livescore with
  the 1 s and the 0.1 s judge, OpenInference and Langfuse.

Every run is timed with ``time.perf_counter_ns``.

The same measurement runs on the OpenAI Agents SDK: an ``agents.Agent`` with the same two
tools on the SDK's ``OpenAIChatCompletionsModel``, whose model is a bench server process of
its own (not the judge's) playing the same script: two tool calls, then the answer. Its
configurations: no trace processor (the baseline), livescore's ``LiveScoringProcessor`` as
above (two judge latencies, keyword coverage alone, the processor alone), and OpenInference's
``OpenAIAgentsInstrumentor``. All SDK runs share one event loop, as in a server. The model's
three HTTP round trips per run make these end-to-end figures noisy (milliseconds on a shared
machine), so a last table replays the same run's span tree through the SDK's tracing API
(no model, no HTTP) and reports what each processor adds per run: wall time and CPU time of
the agent's own thread.

The SDK's steady state runs the baseline, livescore with the 1 s judge and OpenInference.

Run: ``python bench/hot_path.py [--quick] [--mode burst|steady] [--runs N] [--rate R]
[--window S] [--windows N] [--runtime langchain|openai-agents] [--json out.json]``; the
figures go to ``bench/results/hot_path.json`` (see ``_common.Results``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    AGENT_ANSWER,
    Results,
    agent_model,
    console,
    judge_model,
    judge_server,
    percentile,
    print_machine,
    table,
)
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from livescore import Run, extract_tool_results
from livescore.judges import OpenAIJudge
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.otel import OTelEmitter
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel

QUESTION = {
    "messages": [
        {"role": "user", "content": "Where is my parcel 4711, and when will it reach the locker?"}
    ]
}
ANSWER = AGENT_ANSWER


@tool
def track_parcel(parcel_id: str) -> dict[str, Any]:
    """Where a parcel is now."""
    return {"parcel": parcel_id, "status": "in transit", "last_scan": "Lyon depot, Monday"}


@tool
def delivery_estimate(parcel_id: str, destination: str) -> str:
    """How long delivery to a destination takes."""
    return f"Delivery of {parcel_id} to a {destination} takes two working days."


TURNS: tuple[Any, ...] = (
    AIMessage(
        "", tool_calls=[{"name": "track_parcel", "args": {"parcel_id": "4711"}, "id": "call_1"}]
    ),
    AIMessage(
        "",
        tool_calls=[
            {
                "name": "delivery_estimate",
                "args": {"parcel_id": "4711", "destination": "locker"},
                "id": "call_2",
            }
        ],
    ),
    ANSWER,
)


def make_agent(runs: int, model_delay: float = 0.0) -> Any:
    """One agent whose scripted model lasts ``runs`` runs (three turns each)."""
    model = ScriptedChatModel(responses=list(TURNS) * runs, delay=model_delay)
    return create_agent(model, tools=[track_parcel, delivery_estimate])


class DropExporter(SpanExporter):
    """Accepts spans and keeps only their count (export cost without I/O)."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def tool_contexts(run: Run, step: Any) -> list[str]:
    return [result.to_context() for result in extract_tool_results(run)]


# -- configurations ------------------------------------------------------------------------------


@dataclass
class Config:
    """One way of running the agent: callbacks to pass, and hooks around each block."""

    name: str
    callbacks: list[Any] = field(default_factory=list)
    enter: Callable[[], None] = lambda: None
    leave: Callable[[], None] = lambda: None  # outside the timed runs
    close: Callable[[], str] = lambda: ""  # returns what the configuration did
    times_ns: list[int] = field(default_factory=list)
    cpu_s: float = 0.0  # process CPU (all threads) during the timed runs
    cpu_after_s: float = 0.0  # process CPU in `leave` (livescore finishing its scores)
    # Steady state: finish the background work (scores, span export) inside the window.
    drain: Callable[[], None] = lambda: None
    window_s: float = 0.0  # steady state: wall time of the measured windows
    late: int = 0  # steady state: runs that started after their due time


def baseline() -> Config:
    return Config("no callbacks")


@dataclass
class LivescoreParts:
    """livescore's dispatcher (with its scorers and providers), shared by both runtimes."""

    name: str
    dispatcher: LiveDispatcher
    provider: TracerProvider
    leave: Callable[[], None]
    close: Callable[[], str]
    drain: Callable[[], None] = lambda: None  # scores finished and their spans exported


def livescore_parts(base_url: str, latency: float | None, flush_timeout: float) -> LivescoreParts:
    """livescore at 100 %: hallucination (judge answering after ``latency``) and keyword
    coverage; keyword coverage alone when ``latency`` is ``None``."""
    provider = TracerProvider()
    spans = DropExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    scorers = [ScorerConfig(create_keyword_coverage_scorer(), max_concurrency=64)]
    if latency is not None:
        judge = OpenAIJudge(
            judge_model(latency),
            base_url=base_url,
            api_key="bench",
            max_concurrency=64,
            timeout=30,
        )
        hallucination = create_hallucination_scorer(model=judge, get_context=tool_contexts)
        scorers.insert(0, ScorerConfig(hallucination, max_concurrency=64))
    dispatcher = LiveDispatcher(
        scorers,
        emitter=OTelEmitter(tracer_provider=provider, meter_provider=meters),
        max_judge_concurrency=64,
        register_atexit=False,
    )
    name = (
        "livescore, keyword coverage only" if latency is None else f"livescore, {latency:g} s judge"
    )

    def leave() -> None:
        if not dispatcher.flush(timeout=flush_timeout):
            console.print(f"[yellow]{name}: flush timed out")

    def close() -> str:
        dispatcher.shutdown(timeout=flush_timeout)
        provider.shutdown()
        meters.shutdown()
        s = dispatcher.stats()
        return f"{s.scored}/{s.sampled} scores ({s.failed} failed, {s.dropped} dropped)"

    def drain() -> None:
        leave()
        provider.force_flush()

    return LivescoreParts(name, dispatcher, provider, leave, close, drain)


def livescore(base_url: str, latency: float | None, flush_timeout: float) -> Config:
    """livescore's LangChain handler on :func:`livescore_parts`."""
    parts = livescore_parts(base_url, latency, flush_timeout)
    handler = LiveScoringHandler(dispatcher=parts.dispatcher, tracer_provider=parts.provider)
    return Config(parts.name, [handler], leave=parts.leave, close=parts.close, drain=parts.drain)


class KeepRuns:
    """A run sink that keeps the captured runs and scores nothing: isolates the capture."""

    sampled = True  # also the sampling decision it hands out: every run is sampled

    def __init__(self) -> None:
        self.runs = 0

    def sample(self, key: str | None, conversation_id: str | None = None) -> KeepRuns:
        return self

    def submit(self, run: Run, decision: Any = None) -> bool:
        self.runs += 1
        return True

    def drop(self, decision: Any, reason: str) -> None:
        pass

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        pass

    def stats(self) -> int:
        return self.runs


def capture_only() -> Config:
    provider = TracerProvider()
    spans = DropExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    sink = KeepRuns()
    handler = LiveScoringHandler(dispatcher=sink, tracer_provider=provider)

    def close() -> str:
        provider.shutdown()
        return f"{sink.runs:,} runs captured, {spans.count:,} spans"

    return Config("livescore handler, no scoring", [handler], close=close)


def openinference() -> Config:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    provider = TracerProvider()
    spans = DropExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    instrumentor = LangChainInstrumentor()

    def close() -> str:
        provider.shutdown()
        return f"{spans.count:,} spans"

    return Config(
        "OpenInference",
        enter=lambda: instrumentor.instrument(tracer_provider=provider),
        leave=lambda: instrumentor.uninstrument(),
        close=close,
        drain=lambda: provider.force_flush(),
    )


def langfuse(project: str) -> Config | None:
    try:
        from langfuse import Langfuse
        from langfuse.langchain import CallbackHandler
    except ImportError:
        console.print("[yellow]Langfuse is not installed (pip install langfuse): column skipped")
        return None
    logging.getLogger("langfuse").setLevel(logging.ERROR)  # it warns about the dead endpoint
    provider = TracerProvider()
    spans = DropExporter()
    public_key = f"pk-lf-bench-{project}"  # one client per scenario
    client = Langfuse(
        public_key=public_key,
        secret_key="sk-lf-bench",
        base_url="http://127.0.0.1:9",  # nothing listens there
        tracer_provider=provider,  # its own provider, not the global one
        span_exporter=spans,  # behind its BatchSpanProcessor: no network
    )
    handler = CallbackHandler(public_key=public_key)

    def close() -> str:
        client.flush()
        provider.shutdown()
        return f"{spans.count:,} spans"

    return Config("Langfuse", [handler], close=close, drain=client.flush)


# -- the measurement -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """How the agent behaves: how long its model takes per turn, and how many runs."""

    name: str
    model_delay: float
    runs: int
    block: int
    warmup: int


def run_block(agent: Any, config: Config, runs: int, timed: bool) -> None:
    config.enter()
    callbacks = {"callbacks": config.callbacks}
    gc.collect()
    cpu = time.process_time()
    try:
        for _ in range(runs):
            start = time.perf_counter_ns()
            agent.invoke(QUESTION, config=callbacks)
            elapsed = time.perf_counter_ns() - start
            if timed:
                config.times_ns.append(elapsed)
    finally:
        after = time.process_time()
        config.leave()
        if timed:
            config.cpu_s += after - cpu
            config.cpu_after_s += time.process_time() - after


def measure(scenario: Scenario, base_url: str) -> dict[str, Any]:
    configs = [
        baseline(),
        livescore(base_url, 1.0, flush_timeout=60.0),
        livescore(base_url, 0.1, flush_timeout=60.0),
        livescore(base_url, None, flush_timeout=60.0),
        capture_only(),
        openinference(),
    ]
    lf = langfuse(scenario.name.split()[0])
    if lf is not None:
        configs.append(lf)
    rounds = max(1, scenario.runs // scenario.block)
    agent = make_agent(
        len(configs) * (scenario.warmup + rounds * scenario.block), scenario.model_delay
    )
    console.print(
        f"[bold]{scenario.name}[/]: {len(configs)} configurations × {rounds} blocks of "
        f"{scenario.block} runs (+{scenario.warmup} warm-up runs each), interleaved"
    )
    for config in configs:
        run_block(agent, config, scenario.warmup, timed=False)
    for r in range(rounds):
        order = configs[r % len(configs) :] + configs[: r % len(configs)]
        for config in order:
            run_block(agent, config, scenario.block, timed=True)
    notes = {c.name: c.close() for c in configs}
    return report(scenario, configs, notes)


def report(scenario: Scenario, configs: Sequence[Config], notes: dict[str, str]) -> dict[str, Any]:
    base = configs[0]
    base_p50 = percentile(base.times_ns, 50) / 1e3
    base_p99 = percentile(base.times_ns, 99) / 1e3
    base_cpu = base.cpu_s / len(base.times_ns) * 1e6
    ours = configs[1]
    ours_added = percentile(ours.times_ns, 50) / 1e3 - base_p50
    rows = []
    results: dict[str, Any] = {}
    for config in configs:
        n = len(config.times_ns)
        p50 = percentile(config.times_ns, 50) / 1e3
        p99 = percentile(config.times_ns, 99) / 1e3
        added50, added99 = p50 - base_p50, p99 - base_p99
        cpu = config.cpu_s / n * 1e6 - base_cpu
        after = config.cpu_after_s / n * 1e6
        is_base = config is base
        vs_ours = added50 / ours_added if ours_added > 0 else float("nan")
        note = notes.get(config.name, "")
        if after >= 1:
            note += f"; +{after:,.0f} µs CPU/run after the runs"
        rows.append(
            [
                config.name,
                n,
                f"{p50 / 1e3:.2f}",
                f"{p99 / 1e3:.2f}",
                "—" if is_base else f"{added50:+,.0f}",
                "—" if is_base else f"{added99:+,.0f}",
                "—" if is_base else f"{cpu:+,.0f}",
                "—" if is_base or vs_ours != vs_ours else f"{vs_ours:.2f}×",
                note.lstrip("; "),
            ]
        )
        results[config.name] = {
            "runs": n,
            "p50_us": p50,
            "p99_us": p99,
            "added_p50_us": added50,
            "added_p99_us": added99,
            "added_cpu_per_run_us": cpu,
            "cpu_after_per_run_us": after,
            "note": note,
        }
    table(
        f"Burst mode, {scenario.name}: per-run latency on the agent's thread "
        "(scores finished after each block, outside the timed runs)",
        [
            "configuration",
            "runs",
            "p50 ms",
            "p99 ms",
            "added p50 µs",
            "added p99 µs",
            "added CPU/run µs",
            "added vs livescore",
            "work done",
        ],
        rows,
    )
    return results


# -- steady state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Steady:
    """Runs arriving at a fixed rate, in blocks long enough that every score finishes inside
    the measured window (each block ends by draining the configuration's background work)."""

    name: str
    rate: float  # runs per second
    seconds: float  # length of one block
    rounds: int  # blocks per configuration, interleaved with the other configurations
    model_delay: float
    warmup: int = 5  # runs per configuration before the first block, not measured

    @property
    def runs_per_block(self) -> int:
        return max(1, round(self.seconds * self.rate))


def steady_window(config: Config, runs: int, rate: float, run_one: Callable[[], None]) -> None:
    """One measured window: ``runs`` runs due every ``1 / rate`` s, then the drain. Process
    CPU (every thread) is taken around the whole window, so the scores' CPU is in it."""
    config.enter()
    gc.collect()
    interval = 1.0 / rate
    cpu = time.process_time()
    started = time.perf_counter()
    try:
        for i in range(runs):
            wait = started + i * interval - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            elif i:
                config.late += 1
            t0 = time.perf_counter_ns()
            run_one()
            config.times_ns.append(time.perf_counter_ns() - t0)
        config.drain()
    finally:
        config.cpu_s += time.process_time() - cpu
        config.window_s += time.perf_counter() - started
        config.leave()


def steady_measure(steady: Steady, base_url: str) -> dict[str, Any]:
    """LangChain in steady state: the agent of :func:`measure`, runs arriving at a fixed rate."""
    configs = [
        baseline(),
        livescore(base_url, 1.0, flush_timeout=60.0),
        livescore(base_url, 0.1, flush_timeout=60.0),
        openinference(),
    ]
    lf = langfuse("steady")
    if lf is not None:
        configs.append(lf)
    per_block = steady.runs_per_block
    agent = make_agent(
        len(configs) * (steady.warmup + steady.rounds * per_block), steady.model_delay
    )
    steady_banner(steady, configs)
    for config in configs:
        run_block(agent, config, steady.warmup, timed=False)
        config.drain()
    for r in range(steady.rounds):
        for config in configs[r % len(configs) :] + configs[: r % len(configs)]:
            callbacks = {"callbacks": config.callbacks}
            steady_window(
                config,
                per_block,
                steady.rate,
                lambda callbacks=callbacks: agent.invoke(QUESTION, config=callbacks),
            )
    notes = {c.name: c.close() for c in configs}
    return steady_report(steady, configs, notes)


def steady_banner(steady: Steady, configs: Sequence[Config]) -> None:
    console.print(
        f"[bold]{steady.name}[/]: {len(configs)} configurations × {steady.rounds} windows of "
        f"{steady.seconds:g} s ({steady.runs_per_block} runs due every "
        f"{1000 / steady.rate:.0f} ms, then the drain), interleaved"
    )


def steady_report(
    steady: Steady, configs: Sequence[Config], notes: dict[str, str]
) -> dict[str, Any]:
    base = configs[0]
    base_p50 = percentile(base.times_ns, 50) / 1e3
    base_p99 = percentile(base.times_ns, 99) / 1e3
    base_cpu = base.cpu_s / len(base.times_ns) * 1e6
    rows = []
    results: dict[str, Any] = {}
    for config in configs:
        n = len(config.times_ns)
        p50 = percentile(config.times_ns, 50) / 1e3
        p99 = percentile(config.times_ns, 99) / 1e3
        cpu = config.cpu_s / n * 1e6
        share = config.cpu_s / config.window_s if config.window_s else float("nan")
        is_base = config is base
        note = notes.get(config.name, "")
        if config.late:
            late = f"{config.late} run{'s' if config.late != 1 else ''} started late"
            note += f"; {late} (the previous run overran its slot)"
        rows.append(
            [
                config.name,
                n,
                f"{p50 / 1e3:.2f}",
                f"{p99 / 1e3:.2f}",
                "—" if is_base else f"{p50 - base_p50:+,.0f}",
                "—" if is_base else f"{p99 - base_p99:+,.0f}",
                f"{cpu:,.0f}",
                "—" if is_base else f"{cpu - base_cpu:+,.0f}",
                f"{share:.1%}",
                note.lstrip("; "),
            ]
        )
        results[config.name] = {
            "runs": n,
            "p50_us": p50,
            "p99_us": p99,
            "added_p50_us": p50 - base_p50,
            "added_p99_us": p99 - base_p99,
            "cpu_per_run_us": cpu,
            "added_cpu_per_run_us": cpu - base_cpu,
            "cpu_share_of_one_core": share,
            "window_s": config.window_s,
            "late_runs": config.late,
            "note": note.lstrip("; "),
        }
    table(
        f"Steady state, {steady.name}: per run",
        [
            "configuration",
            "runs",
            "p50 ms",
            "p99 ms",
            "added p50 µs",
            "added p99 µs",
            "CPU/run µs (all threads)",
            "added CPU/run µs",
            "CPU, share of a core",
            "work done",
        ],
        rows,
    )
    return {
        "rate_per_s": steady.rate,
        "window_s": steady.seconds,
        "windows": steady.rounds,
        "model_delay_s": steady.model_delay,
        "rows": results,
    }


# -- the same measurement on the OpenAI Agents SDK ------------------------------------------------


def make_sdk_agent(base_url: str, model_delay: float) -> tuple[Any, Any]:
    """The SDK agent with the same two tools; its model is the bench server's script."""
    from agents import Agent, OpenAIChatCompletionsModel, function_tool
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    tools = [function_tool(track_parcel.func), function_tool(delivery_estimate.func)]
    model = OpenAIChatCompletionsModel(agent_model(model_delay), client)
    agent = Agent(name="parcel-agent", instructions="Track parcels.", tools=tools, model=model)
    return agent, client


def sdk_processors(processors: list[Any]) -> Callable[[], None]:
    from agents import set_trace_processors

    return lambda: set_trace_processors(list(processors))


def sdk_baseline() -> Config:
    return Config("no trace processor", enter=sdk_processors([]))


def sdk_livescore(base_url: str, latency: float | None, flush_timeout: float) -> Config:
    """livescore's processor at 100 %, with the same scorers as the LangChain rows."""
    from livescore_openai_agents import LiveScoringProcessor

    parts = livescore_parts(base_url, latency, flush_timeout)  # the same scorers and judge
    processor = LiveScoringProcessor(dispatcher=parts.dispatcher, tracer_provider=parts.provider)

    def leave() -> None:
        sdk_processors([])()
        parts.leave()

    return Config(
        parts.name,
        enter=sdk_processors([processor]),
        leave=leave,
        close=parts.close,
        drain=parts.drain,
    )


def sdk_capture_only() -> Config:
    from livescore_openai_agents import LiveScoringProcessor

    provider = TracerProvider()
    spans = DropExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    sink = KeepRuns()
    processor = LiveScoringProcessor(dispatcher=sink, tracer_provider=provider)  # type: ignore[arg-type]

    def close() -> str:
        provider.shutdown()
        return f"{sink.runs:,} runs captured, {spans.count:,} spans"

    return Config(
        "livescore processor, no scoring",
        enter=sdk_processors([processor]),
        leave=sdk_processors([]),
        close=close,
    )


def sdk_openinference() -> Config:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider = TracerProvider()
    spans = DropExporter()
    provider.add_span_processor(BatchSpanProcessor(spans))
    instrumentor = OpenAIAgentsInstrumentor()

    def close() -> str:
        provider.shutdown()
        return f"{spans.count:,} spans"

    return Config(
        "OpenInference",
        enter=lambda: instrumentor.instrument(tracer_provider=provider),
        leave=lambda: instrumentor.uninstrument(),
        close=close,
        drain=lambda: provider.force_flush(),
    )


def sdk_run_block(
    loop: asyncio.AbstractEventLoop, agent: Any, config: Config, runs: int, timed: bool
) -> None:
    from agents import Runner

    async def block() -> None:
        for _ in range(runs):
            start = time.perf_counter_ns()
            result = await Runner.run(agent, QUESTION["messages"][0]["content"])
            elapsed = time.perf_counter_ns() - start
            if result.final_output != ANSWER:
                raise RuntimeError(f"the agent answered {result.final_output!r}")
            if timed:
                config.times_ns.append(elapsed)

    config.enter()
    gc.collect()
    cpu = time.process_time()
    try:
        loop.run_until_complete(block())
    finally:
        after = time.process_time()
        config.leave()
        if timed:
            config.cpu_s += after - cpu
            config.cpu_after_s += time.process_time() - after


def sdk_measure(scenario: Scenario, judge_url: str, model_url: str) -> dict[str, Any]:
    """The SDK agent end to end; its model is served by its own process (``model_url``), so
    the judge's load never slows the agent's model replies."""
    configs = [
        sdk_baseline(),
        sdk_livescore(judge_url, 1.0, flush_timeout=60.0),
        sdk_livescore(judge_url, 0.1, flush_timeout=60.0),
        sdk_livescore(judge_url, None, flush_timeout=60.0),
        sdk_capture_only(),
        sdk_openinference(),
    ]
    rounds = max(1, scenario.runs // scenario.block)
    loop = asyncio.new_event_loop()
    agent, client = make_sdk_agent(model_url, scenario.model_delay)
    console.print(
        f"[bold]{scenario.name}[/]: {len(configs)} configurations × {rounds} blocks of "
        f"{scenario.block} runs (+{scenario.warmup} warm-up runs each), interleaved"
    )
    try:
        for config in configs:
            sdk_run_block(loop, agent, config, scenario.warmup, timed=False)
        for r in range(rounds):
            order = configs[r % len(configs) :] + configs[: r % len(configs)]
            for config in order:
                sdk_run_block(loop, agent, config, scenario.block, timed=True)
    finally:
        sdk_processors([])()
        loop.run_until_complete(client.close())
        loop.close()
    notes = {c.name: c.close() for c in configs}
    return report(scenario, configs, notes)


def sdk_steady_measure(steady: Steady, judge_url: str, model_url: str) -> dict[str, Any]:
    """The SDK agent in steady state: runs due at a fixed rate on one event loop, each
    window drained (scores finished, spans exported) inside its CPU measurement."""
    from agents import Runner

    configs = [
        sdk_baseline(),
        sdk_livescore(judge_url, 1.0, flush_timeout=60.0),
        sdk_openinference(),
    ]
    loop = asyncio.new_event_loop()
    agent, client = make_sdk_agent(model_url, steady.model_delay)
    per_block = steady.runs_per_block
    interval = 1.0 / steady.rate

    def window(config: Config) -> None:
        async def runs() -> None:
            started = time.perf_counter()
            for i in range(per_block):
                wait = started + i * interval - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                elif i:
                    config.late += 1
                t0 = time.perf_counter_ns()
                result = await Runner.run(agent, QUESTION["messages"][0]["content"])
                config.times_ns.append(time.perf_counter_ns() - t0)
                if result.final_output != ANSWER:
                    raise RuntimeError(f"the agent answered {result.final_output!r}")

        config.enter()
        gc.collect()
        cpu = time.process_time()
        started = time.perf_counter()
        try:
            loop.run_until_complete(runs())
            config.drain()
        finally:
            config.cpu_s += time.process_time() - cpu
            config.window_s += time.perf_counter() - started
            config.leave()

    steady_banner(steady, configs)
    try:
        for config in configs:
            sdk_run_block(loop, agent, config, steady.warmup, timed=False)
            config.drain()
        for r in range(steady.rounds):
            for config in configs[r % len(configs) :] + configs[: r % len(configs)]:
                window(config)
    finally:
        sdk_processors([])()
        loop.run_until_complete(client.close())
        loop.close()
    notes = {c.name: c.close() for c in configs}
    return steady_report(steady, configs, notes)


# The span tree of one run of the SDK agent above, as its model and tools fill it.
REPLAY_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Track parcels."},
    QUESTION["messages"][0],
]
REPLAY_TURNS: tuple[tuple[dict[str, Any], tuple[str, str, Any] | None], ...] = (
    (
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "track_parcel", "arguments": '{"parcel_id": "4711"}'},
                }
            ],
        },
        ("track_parcel", '{"parcel_id": "4711"}', {"parcel": "4711", "status": "in transit"}),
    ),
    (
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {
                        "name": "delivery_estimate",
                        "arguments": '{"parcel_id": "4711", "destination": "locker"}',
                    },
                }
            ],
        },
        (
            "delivery_estimate",
            '{"parcel_id": "4711", "destination": "locker"}',
            "Delivery of 4711 to a locker takes two working days.",
        ),
    ),
    ({"role": "assistant", "content": ANSWER}, None),
)


def replay_sdk_run() -> None:
    """One agent run's worth of SDK tracing calls (no model, no HTTP): what every trace
    processor sees of a run, and nothing else."""
    from agents.tracing import (
        agent_span,
        function_span,
        generation_span,
        task_span,
        trace,
        turn_span,
    )

    messages = list(REPLAY_MESSAGES)
    usage = {"requests": 1, "input_tokens": 120, "output_tokens": 20, "total_tokens": 140}
    tools = ["track_parcel", "delivery_estimate"]
    with (
        trace("Agent workflow"),
        task_span(name="Agent workflow"),
        agent_span(name="parcel-agent", tools=tools),
    ):
        for number, (reply, call) in enumerate(REPLAY_TURNS, start=1):
            with turn_span(turn=number, agent_name="parcel-agent"):
                with generation_span(model="bench-agent") as generation:
                    generation.span_data.input = list(messages)
                    generation.span_data.output = [reply]
                    generation.span_data.usage = usage
                messages.append(reply)
                if call is not None:
                    name, arguments, result = call
                    with function_span(name=name) as function:
                        function.span_data.input = arguments
                        function.span_data.output = result
                    messages.append({"role": "tool", "content": str(result)})


def sdk_callbacks(runs: int, block: int) -> dict[str, Any]:
    """What each trace processor costs the agent's thread per run, without the noise of a
    model: the run's span tree replayed through the SDK's tracing API."""
    from livescore_openai_agents import LiveScoringProcessor

    def keep(emit: str) -> Config:
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(DropExporter()))
        sink = KeepRuns()
        processor = LiveScoringProcessor(
            dispatcher=sink,  # type: ignore[arg-type]
            tracer_provider=provider,
            emit_run_spans=emit,  # type: ignore[arg-type]
        )
        name = "livescore processor" + (", own spans" if emit == "auto" else ", capture only")

        def close() -> str:
            provider.shutdown()
            return f"{sink.runs:,} runs captured"

        return Config(
            name, enter=sdk_processors([processor]), leave=sdk_processors([]), close=close
        )

    def scored() -> Config:
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(DropExporter()))
        dispatcher = LiveDispatcher(
            [create_keyword_coverage_scorer()],
            emitter=OTelEmitter(tracer_provider=provider),
            register_atexit=False,
        )
        processor = LiveScoringProcessor(dispatcher=dispatcher, tracer_provider=provider)

        def leave() -> None:
            sdk_processors([])()
            dispatcher.flush(timeout=60)

        def close() -> str:
            dispatcher.shutdown(timeout=60)
            provider.shutdown()
            return f"{dispatcher.stats().scored:,} scores"

        return Config(
            "livescore, keyword coverage",
            enter=sdk_processors([processor]),
            leave=leave,
            close=close,
        )

    configs = [sdk_baseline(), keep("never"), keep("auto"), scored(), sdk_openinference()]
    cpu_ns: dict[str, list[int]] = {c.name: [] for c in configs}

    def run_block(config: Config, n: int, timed: bool) -> None:
        config.enter()
        gc.collect()
        cpu = time.thread_time_ns()
        for _ in range(n):
            start = time.perf_counter_ns()
            replay_sdk_run()
            if timed:
                config.times_ns.append(time.perf_counter_ns() - start)
        if timed:
            cpu_ns[config.name].append((time.thread_time_ns() - cpu) // n)
        config.leave()

    rounds = max(1, runs // block)
    console.print(
        f"[bold]OpenAI Agents SDK, trace processors alone[/]: {len(configs)} configurations × "
        f"{rounds} blocks of {block} replayed runs, interleaved"
    )
    for config in configs:
        run_block(config, block, timed=False)
    for r in range(rounds):
        for config in configs[r % len(configs) :] + configs[: r % len(configs)]:
            run_block(config, block, timed=True)
    notes = {c.name: c.close() for c in configs}
    base = configs[0]
    base_p50 = percentile(base.times_ns, 50) / 1e3
    base_cpu = percentile(cpu_ns[base.name], 50) / 1e3
    rows, results = [], {}
    for config in configs:
        p50 = percentile(config.times_ns, 50) / 1e3
        p99 = percentile(config.times_ns, 99) / 1e3
        cpu = percentile(cpu_ns[config.name], 50) / 1e3
        is_base = config is base
        rows.append(
            [
                config.name,
                len(config.times_ns),
                f"{p50:,.0f}",
                f"{p99:,.0f}",
                "—" if is_base else f"{p50 - base_p50:+,.0f}",
                f"{cpu:,.0f}",
                "—" if is_base else f"{cpu - base_cpu:+,.0f}",
                notes[config.name],
            ]
        )
        results[config.name] = {
            "p50_us": p50,
            "p99_us": p99,
            "added_p50_us": p50 - base_p50,
            "thread_cpu_per_run_us": cpu,
            "added_thread_cpu_per_run_us": cpu - base_cpu,
        }
    table(
        "OpenAI Agents SDK, trace processors alone: per run, on the agent's thread",
        [
            "configuration",
            "runs",
            "p50 µs",
            "p99 µs",
            "added p50 µs",
            "thread CPU/run µs",
            "added CPU µs",
            "work done",
        ],
        rows,
    )
    return results


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (about 2 minutes)")
    parser.add_argument(
        "--mode",
        choices=("all", "burst", "steady"),
        default="all",
        help="burst (back-to-back blocks, scores finished outside the timed runs), steady "
        "(runs at a fixed rate, scores finished inside the measured window), or both",
    )
    parser.add_argument("--runs", type=int, help="burst mode: timed runs per configuration")
    parser.add_argument("--rate", type=float, help="steady state: runs per second (default 5)")
    parser.add_argument("--window", type=float, help="steady state: seconds per window")
    parser.add_argument("--windows", type=int, help="steady state: windows per configuration")
    parser.add_argument(
        "--runtime",
        choices=("all", "langchain", "openai-agents"),
        default="all",
        help="which agent runtime to measure (default: both)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    quick = args.quick
    custom = (args.runs, args.rate, args.window, args.windows)
    record = Results(
        "hot_path",
        quick=quick,
        partial=args.mode != "all" or args.runtime != "all" or custom != (None,) * 4,
    )
    instant_runs = args.runs or (40 if quick else 200)
    scenarios = [
        Scenario(
            "instant model (CPU-bound runs back to back)",
            0.0,
            instant_runs,
            block=40 if quick else 50,
            warmup=5 if quick else 20,
        ),
        Scenario(
            "model answers in 20 ms (the agent waits on I/O)",
            0.02,
            10 if quick else 50,
            block=10 if quick else 25,
            warmup=2 if quick else 5,
        ),
    ]
    steady = Steady(
        "model answers in 20 ms",
        rate=args.rate or 5.0,
        seconds=args.window or (4.0 if quick else 10.0),
        rounds=args.windows or (1 if quick else 3),
        model_delay=0.02,
        warmup=3 if quick else 5,
    )
    burst = args.mode in ("all", "burst")
    steady_on = args.mode in ("all", "steady")
    langchain = args.runtime in ("all", "langchain")
    sdk = args.runtime in ("all", "openai-agents")
    print_machine("Hot path: time each observability option adds to an agent run")
    started = time.perf_counter()
    results: dict[str, Any] = {"burst": {}, "steady": {}, "replay": {}}
    with judge_server() as base_url:
        if langchain and burst:
            for key, scenario in zip(("instant", "io"), scenarios, strict=True):
                title = f"LangChain, {scenario.name}"
                results["burst"][f"langchain/{key}"] = {
                    "title": title,
                    "runs": scenario.runs,
                    "rows": measure(dataclasses.replace(scenario, name=title), base_url),
                }
        if langchain and steady_on:
            title = f"LangChain, {steady.name}"
            results["steady"]["langchain"] = {
                "title": title,
                **steady_measure(dataclasses.replace(steady, name=title), base_url),
            }
        if sdk:
            with judge_server() as model_url:  # the SDK agent's model, in its own process
                if burst:
                    for key, scenario in zip(("instant", "io"), scenarios, strict=True):
                        title = f"OpenAI Agents SDK, {scenario.name}"
                        results["burst"][f"openai-agents/{key}"] = {
                            "title": title,
                            "runs": scenario.runs,
                            "rows": sdk_measure(
                                dataclasses.replace(scenario, name=title), base_url, model_url
                            ),
                        }
                if steady_on:
                    title = f"OpenAI Agents SDK, {steady.name}"
                    results["steady"]["openai-agents"] = {
                        "title": title,
                        **sdk_steady_measure(
                            dataclasses.replace(steady, name=title), base_url, model_url
                        ),
                    }
            if burst:
                results["replay"]["openai-agents"] = {
                    "title": "OpenAI Agents SDK, trace processors alone",
                    "rows": sdk_callbacks(runs=400 if quick else 3000, block=100 if quick else 250),
                }
    console.print(
        "added = configuration minus the baseline at the same percentile. Burst mode: CPU = "
        "process CPU time (every thread) during the timed runs, per run; the scores are "
        "finished after each block, outside the timed runs (their CPU is the 'after the runs' "
        "note). Steady state: runs arrive at a fixed rate and each window ends once every "
        "score is finished and exported, so CPU/run is all the process's CPU (agent and "
        "worker threads) over the window, divided by its runs."
    )
    console.print(f"wall time {time.perf_counter() - started:.0f} s")
    record.write(results, json_path=args.json)
    return results


if __name__ == "__main__":
    main()
