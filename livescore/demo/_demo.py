"""``livescore demo``: a LangChain agent scored live, its traces and scores in the terminal."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from livescore.evals._cli import add_judge_arguments, judge_from_arguments, judge_model_string
from livescore.judges import Judge, JudgeConfigError
from livescore.otel import attributes as A
from livescore.runs import Run, Step, extract_tool_results
from livescore.scoring import Scorer

from ._local_judge import LOCAL_JUDGE_INSTALL, LocalJudgeServer, local_judge_status

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ("add_demo_arguments", "run_demo", "run_demo_command")

JUDGE_MODEL_ENV = "LIVESCORE_JUDGE_MODEL"
AGENT_MODEL_ENV = "LIVESCORE_AGENT_MODEL"

EXIT_OK = 0
EXIT_USAGE = 2

SEARCH_FOR = (
    (A.GEN_AI_OPERATION_NAME, "= evaluation  (every score span)"),
    (A.GEN_AI_EVALUATION_NAME, "= hallucination | keyword-coverage"),
    (A.GEN_AI_EVALUATION_SCORE_VALUE, "the score"),
    (A.GEN_AI_EVALUATION_SCORE_LABEL, "none / low / mixed / high / severe (hallucination)"),
    (A.GEN_AI_EVALUATION_EXPLANATION, "the judge's reason"),
    (A.LIVESCORE_RUN_ID, "the scored run"),
    (A.GEN_AI_AGENT_NAME, "= parcelly-support  (on the invoke_agent span)"),
)


class DemoError(Exception):
    """A configuration problem: printed, then exit code 2."""


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``livescore demo`` options to ``parser``."""
    judge = parser.add_argument_group("judge (the model that checks the answers)")
    add_judge_arguments(judge)
    judge.add_argument(
        "--local-judge",
        action="store_true",
        help="start llama.cpp's server with SmolLM2-135M as an offline judge "
        f"({LOCAL_JUDGE_INSTALL}); shows the wiring, its verdicts are not trustworthy",
    )
    agent = parser.add_argument_group("agent")
    agent.add_argument(
        "--agent-model",
        help="the agent's chat model 'openai/<model>' (needs langchain-openai; default: "
        f"${AGENT_MODEL_ENV}, else a scripted model that calls the tools for real)",
    )
    agent.add_argument(
        "--question",
        action="append",
        metavar="TEXT",
        help="ask this instead of the built-in questions (repeatable)",
    )
    export = parser.add_argument_group("export")
    export.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="also send the spans to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:6006 for "
        "Arize Phoenix; /v1/traces is added when the URL has no path)",
    )
    export.add_argument(
        "--console-spans", action="store_true", help="also print every span as JSON"
    )


def run_demo_command(args: argparse.Namespace) -> int:
    """Run the demo from parsed arguments (the ``livescore demo`` handler)."""
    return _run(args, _console(), ())


def run_demo(
    argv: Sequence[str] | None = None,
    *,
    console: Console | None = None,
    span_exporters: Sequence[SpanExporter] = (),
) -> int:
    """Run the demo; returns the exit code.

    Args:
        argv: Command-line arguments (see ``livescore demo --help``).
        console: Where to print; the terminal by default.
        span_exporters: More exporters to send the demo's spans to (tests, notebooks).

    Example:
        >>> run_demo(["--question", "Which countries does Parcelly deliver to?"])  # doctest: +SKIP
        0
    """
    parser = argparse.ArgumentParser(prog="livescore demo")
    add_demo_arguments(parser)
    return _run(parser.parse_args(argv), console or _console(), span_exporters)


def _console() -> Console:
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "120"))
    return Console(width=width, highlight=False)


# -- judge --------------------------------------------------------------------------------


@dataclass(slots=True)
class _JudgeChoice:
    judge: Judge | None
    description: str
    notes: list[str] = field(default_factory=list)
    server: LocalJudgeServer | None = None


def _choose_judge(args: argparse.Namespace, console: Console) -> _JudgeChoice:
    try:
        judge = judge_from_arguments(args)
    except JudgeConfigError as exc:
        raise DemoError(str(exc)) from exc
    if judge is not None:
        where = getattr(judge, "base_url", None) or "the configured endpoint"
        return _JudgeChoice(judge, f"{judge.model} at {where}")
    if args.local_judge:
        return _start_local_judge(args, console)
    ready, _ = local_judge_status()
    endpoint = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")
    notes = [
        "[bold yellow]Hallucination scoring is disabled:[/bold yellow] no judge model is "
        "configured. Only keyword coverage (a code scorer) runs; no hallucination score is "
        "made up.",
        "To enable it, point the demo at any OpenAI-compatible endpoint: set OPENAI_API_KEY "
        "(and OPENAI_BASE_URL for vLLM, llama.cpp, Ollama…) and pass --model openai/<model> "
        f"or set {JUDGE_MODEL_ENV}.",
    ]
    if endpoint:
        notes.append(
            "An endpoint is configured (OPENAI_BASE_URL / OPENAI_API_KEY) but no model name: "
            "add --model openai/<model>."
        )
    if ready:
        notes.append(
            "A local judge is installed: add --local-judge to run fully offline (SmolLM2-135M: "
            "for seeing the wiring, not for trustworthy verdicts)."
        )
    else:
        notes.append(
            f"Or install an offline judge with {escape(LOCAL_JUDGE_INSTALL)} (compiles "
            "llama.cpp, several minutes) and add --local-judge."
        )
    return _JudgeChoice(None, "none (hallucination scoring disabled)", notes)


def _start_local_judge(args: argparse.Namespace, console: Console) -> _JudgeChoice:
    from livescore.judges import OpenAIJudge

    ready, detail = local_judge_status()
    if not ready:
        return _JudgeChoice(
            None,
            "none (hallucination scoring disabled)",
            [
                f"[bold yellow]--local-judge: the local judge is {escape(detail)}.[/bold yellow] "
                f"Install it with {escape(LOCAL_JUDGE_INSTALL)} (compiles llama.cpp, several "
                "minutes). Hallucination scoring is disabled for this run; keyword coverage "
                "still runs.",
            ],
        )
    server = LocalJudgeServer(detail)
    with console.status("starting the local judge (llama.cpp, SmolLM2-135M)…"):
        try:
            base_url = server.start()
        except RuntimeError as exc:
            raise DemoError(str(exc)) from exc
    judge = OpenAIJudge(
        "smollm2-135m",
        base_url=base_url,
        api_key="local",
        timeout=max(args.judge_timeout, 120.0),
        max_concurrency=1,
        # llama.cpp's server takes json_object with a schema and rejects json_schema.
        structured_output="json_object",
    )
    return _JudgeChoice(
        judge,
        f"local llama.cpp server at {base_url} with SmolLM2-135M",
        [
            "[bold yellow]The local judge is a 135M-parameter model:[/bold yellow] it shows "
            "the wiring end to end, offline, but its verdicts are close to chance. Use a "
            "capable model (--model) for scores you can trust."
        ],
        server,
    )


# -- scorers, agent, telemetry ------------------------------------------------------------


def tool_results_context(run: Run, step: Step | None) -> list[str]:
    """The hallucination scorer's ground truth in the demo: the run's tool results."""
    return [result.to_context() for result in extract_tool_results(run)]


def _scorers(judge: Judge | None, mode: str) -> list[Scorer]:
    from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer

    scorers = [create_keyword_coverage_scorer()]
    if judge is not None:
        scorers.insert(
            0,
            create_hallucination_scorer(
                model=judge,
                get_context=tool_results_context,
                mode=mode,  # type: ignore[arg-type]
            ),
        )
    return scorers


def _agent_chat_model(args: argparse.Namespace) -> tuple[Any, str]:
    spec = args.agent_model or os.environ.get(AGENT_MODEL_ENV)
    if not spec:
        return None, "scripted (no LLM configured): it calls the tools and answers from them"
    provider, _, name = judge_model_string(spec).partition("/")
    if provider.lower() != "openai" or not name.strip():
        raise DemoError(f"--agent-model must look like 'openai/<model>', not {spec!r}")
    try:
        from langchain_openai import ChatOpenAI  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise DemoError(
            "--agent-model needs LangChain's OpenAI chat model: pip install langchain-openai"
        ) from exc
    base_url = os.environ.get("OPENAI_BASE_URL")
    api_key = os.environ.get("OPENAI_API_KEY") or ("local" if base_url else None)
    if api_key is None:
        raise DemoError(
            "--agent-model needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    model = ChatOpenAI(model=name.strip(), base_url=base_url, api_key=api_key, temperature=0)
    return model, f"{name.strip()} (OpenAI-compatible)"


def _traces_url(endpoint: str) -> str:
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DemoError(f"--otlp-endpoint must be an http(s) URL, not {endpoint!r}")
    if parts.path in ("", "/"):
        return endpoint.rstrip("/") + "/v1/traces"
    return endpoint


@dataclass(slots=True)
class _Telemetry:
    provider: Any
    memory: Any
    otlp_url: str | None


def _telemetry(args: argparse.Namespace, extra: Sequence[SpanExporter]) -> _Telemetry:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # Its own provider (not the global one): the demo is a guest in whatever process runs it.
    provider = TracerProvider(resource=Resource.create({"service.name": "livescore-demo"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    for exporter in extra:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    otlp_url = None
    if args.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        otlp_url = _traces_url(args.otlp_endpoint)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_url)))
    if args.console_spans:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    return _Telemetry(provider, memory, otlp_url)


def _missing_requirements() -> list[str]:
    problems = []
    if importlib.util.find_spec("livescore_langchain") is None or (
        importlib.util.find_spec("langchain") is None
    ):
        problems.append(
            "the demo runs a LangChain agent: pip install 'livescore[langchain]' langchain"
        )
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        problems.append(
            "the demo exports spans with the OpenTelemetry SDK: pip install 'livescore[sdk]'"
        )
    return problems


# -- the run ------------------------------------------------------------------------------


def _tool_calls_of(messages: Sequence[Any]) -> dict[str, tuple[Any, Any]]:
    calls: dict[str, tuple[Any, Any]] = {}
    for message in messages:
        for call in getattr(message, "tool_calls", None) or ():
            calls[str(call.get("id"))] = (call.get("args"), None)
    for message in messages:
        call_id = getattr(message, "tool_call_id", None)
        if call_id is not None:
            args = calls.get(str(call_id), (None, None))[0]
            calls[str(call_id)] = (args, getattr(message, "content", None))
    return calls


def _final_answer(output: Any) -> str:
    messages = output.get("messages", []) if isinstance(output, dict) else []
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai" and not getattr(message, "tool_calls", None):
            content = message.content
            return content if isinstance(content, str) else str(content)
    return ""


def _run(args: argparse.Namespace, console: Console, span_exporters: Sequence[SpanExporter]) -> int:
    problems = _missing_requirements()
    if problems:
        for problem in problems:
            console.print(f"[red]error:[/red] {escape(problem)}")
        return EXIT_USAGE
    try:
        return _demo(args, console, span_exporters)
    except DemoError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE


def _demo(
    args: argparse.Namespace, console: Console, span_exporters: Sequence[SpanExporter]
) -> int:
    from livescore_langchain import LiveScoringHandler

    from ._agent import AGENT_NAME, QUESTIONS, UNSUPPORTED_CLAIM, build_agent
    from ._view import build_run_views, render_run

    chat_model, agent_description = _agent_chat_model(args)
    telemetry = _telemetry(args, span_exporters)
    choice = _choose_judge(args, console)
    try:
        scorers = _scorers(choice.judge, args.mode)
        questions = list(args.question or (q.text for q in QUESTIONS))
        _print_header(console, agent_description, choice, scorers)
        if chat_model is None and not args.question:
            flagged = next(i for i, q in enumerate(QUESTIONS, 1) if q.adds_unsupported_claim)
            console.print(
                f"The scripted model adds a deliberately unsupported claim to answer {flagged} "
                f"([italic]{escape(UNSUPPORTED_CLAIM)}[/italic]): no document says so, so the "
                "hallucination scorer should flag it."
                + ("" if choice.judge else " (With a judge configured, it would.)")
            )
        agent = build_agent(chat_model)
        handler = LiveScoringHandler(
            scorers=scorers, tracer_provider=telemetry.provider, name=AGENT_NAME
        )
        flush_timeout = args.judge_timeout * 4 + 30
        rows: list[tuple[str, dict[str, str]]] = []
        seen = 0
        try:
            for index, question in enumerate(questions, start=1):
                console.rule(f"[bold]Question {index}")
                try:
                    output = agent.invoke(
                        {"messages": [{"role": "user", "content": question}]},
                        config={"callbacks": [handler]},
                    )
                except Exception as exc:  # a real model can fail; the demo goes on
                    console.print(f"[red]the agent failed:[/red] {escape(str(exc))}")
                    continue
                answer = _final_answer(output)
                with console.status("scoring (live, off the agent's path)…"):
                    flushed = handler.flush(timeout=flush_timeout)
                if not flushed:
                    console.print("[yellow]scoring did not finish in time[/yellow]")
                spans = telemetry.memory.get_finished_spans()
                new, seen = spans[seen:], len(spans)
                views = build_run_views(new, _tool_calls_of(output.get("messages", [])))
                for view in views:
                    console.print(render_run(index, view, question, answer))
                    rows.append((question, _row(view)))
        finally:
            handler.shutdown(timeout=flush_timeout)
        _print_summary(console, rows, scorers)
        _print_stats(console, handler.stats())
        _print_export(console, telemetry)
    finally:
        telemetry.provider.force_flush()
        telemetry.provider.shutdown()
        if choice.server is not None:
            choice.server.stop()
    return EXIT_OK


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


def _print_header(
    console: Console, agent: str, choice: _JudgeChoice, scorers: Sequence[Scorer]
) -> None:
    console.print(
        Panel.fit(
            "A LangChain agent ([bold]create_agent[/bold], tools [bold]search_docs[/bold] over "
            "12 help-centre pages and [bold]get_order_status[/bold]) answers questions about "
            "Parcelly, a fictional parcel-locker service. livescore scores every run live, off "
            "the agent's path, and each score becomes an OpenTelemetry evaluation span under "
            "the run's span. What is shown below is read back from the exported spans.\n\n"
            f"[bold]agent model[/bold]  {escape(agent)}\n"
            f"[bold]judge[/bold]        {escape(choice.description)}\n"
            f"[bold]scorers[/bold]      {', '.join(s.id for s in scorers)}",
            title="livescore demo",
        )
    )
    for note in choice.notes:
        console.print(note)


def _print_summary(
    console: Console, rows: Sequence[tuple[str, dict[str, str]]], scorers: Sequence[Scorer]
) -> None:
    table = Table(title="Scores per run", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("question")
    for scorer in scorers:
        table.add_column(scorer.id)
    for index, (question, row) in enumerate(rows, start=1):
        table.add_row(str(index), escape(question), *(escape(row.get(s.id, "–")) for s in scorers))
    console.print(table)


def _print_stats(console: Console, stats: Any) -> None:
    console.print(
        "[bold]live dispatcher[/bold]  "
        f"sampled {stats.sampled} · scored {stats.scored} · failed {stats.failed} · "
        f"skipped {stats.skipped} · dropped {stats.dropped}  "
        "[dim](one per run and scorer)[/dim]"
    )
    if stats.failed_by_type:
        console.print(f"  failed by type: {escape(str(dict(stats.failed_by_type)))}")
    if stats.dropped_by_reason:
        console.print(f"  dropped by reason: {escape(str(dict(stats.dropped_by_reason)))}")


def _print_export(console: Console, telemetry: _Telemetry) -> None:
    table = Table(title="Attributes to search for in your dashboard", title_justify="left")
    table.add_column("attribute")
    table.add_column("value")
    for name, meaning in SEARCH_FOR:
        table.add_row(name, escape(meaning))
    if telemetry.otlp_url:
        where = escape(telemetry.otlp_url)
        console.print(f"Spans were also sent to [bold]{where}[/bold] (OTLP/HTTP).")
        console.print(table)
    else:
        console.print(
            "To see these spans in a dashboard, add --otlp-endpoint URL (Arize Phoenix: "
            "http://127.0.0.1:6006)."
        )
