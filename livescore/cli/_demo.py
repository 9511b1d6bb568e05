"""``livescore demo``: its options, turned into :class:`livescore.demo.DemoOptions`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from livescore.cli._common import EXIT_USAGE, add_command, make_console
from livescore.cli._export import emit_signals
from livescore.cli._judge_options import (
    JUDGE_MODEL_ENV,
    JudgeOptions,
    add_judge_arguments,
    judge_model_string,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter
    from rich.console import Console

    from livescore.demo import LocalJudgeServer

__all__ = ("AGENT_MODEL_ENV", "add_demo_parser", "run_demo_command")

AGENT_MODEL_ENV = "LIVESCORE_AGENT_MODEL"
"""Environment variable read when ``--agent-model`` is not given."""


_DESCRIPTION = (
    "Run a small agent with real tools over a handful of questions, with live\n"
    "hallucination and keyword-coverage scoring attached, and show each run's trace\n"
    "with its tool calls and evaluation spans as they were exported.\n\n"
    "exit codes:\n"
    "  0    ran: the questions were answered and scored, and everything sent to\n"
    "       --otlp-endpoint, --phoenix or --langfuse got there\n"
    "  1    the judge failed (its local process died, or every judge score failed);\n"
    "       the agent failed on every question; or spans or scores were not\n"
    "       delivered (one line says how many, where, and why)\n"
    "  2    usage error: a bad option, an unknown --runtime, a missing integration\n"
    "       or SDK (the message says what to install)\n"
    "  130  interrupted (Ctrl-C)"
)


def add_demo_parser(sub: Any) -> None:
    """Add the ``demo`` sub-command to ``sub`` (the parser's sub-parsers)."""
    p = add_command(
        sub,
        "demo",
        help="watch an agent being scored live (the README's main command)",
        description=_DESCRIPTION,
    )
    judge = p.add_argument_group("judge (the model that checks the answers)")
    add_judge_arguments(judge)
    judge.add_argument(
        "--local-judge",
        action="store_true",
        help="judge offline: Qwen2.5-Coder-1.5B on llama.cpp's server, in logprob mode "
        "(installed once into $LIVESCORE_CACHE or ~/.cache/livescore: a 1.1 GB download and "
        "llama.cpp compiled, several minutes); real verdicts, far from a frontier model's",
    )
    _add_agent_arguments(p.add_argument_group("agent"))
    export = p.add_argument_group("export")
    export.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="also send the spans, and the scores' gen_ai.evaluation.result events, to this "
        "OTLP/HTTP endpoint (e.g. a Collector at http://127.0.0.1:4318; /v1/traces and "
        "/v1/logs are added when the URL has no path; for Arize Phoenix, which has no logs "
        "endpoint, use --phoenix)",
    )
    export.add_argument(
        "--phoenix",
        metavar="URL",
        nargs="?",
        const="",
        help="send the spans to Arize Phoenix at URL and each score as a span annotation (its "
        "score badges); URL defaults to $PHOENIX_COLLECTOR_ENDPOINT, else "
        "http://localhost:6006 ($PHOENIX_API_KEY is sent when set)",
    )
    export.add_argument(
        "--langfuse",
        action="store_true",
        help="also send each score to Langfuse as a score on the run's trace "
        "($LANGFUSE_PUBLIC_KEY, $LANGFUSE_SECRET_KEY, $LANGFUSE_BASE_URL; send the spans "
        "there with --otlp-endpoint)",
    )
    export.add_argument(
        "--emit",
        metavar="SIGNALS",
        type=emit_signals,
        help="spans,events (the default) or spans: whether each score is also a "
        "gen_ai.evaluation.result event (sent to --otlp-endpoint's /v1/logs); the demo shows "
        "the score spans, so they are always emitted",
    )
    export.add_argument(
        "--console-spans", action="store_true", help="also print every span as JSON"
    )
    p.set_defaults(handler=run_demo_command)


def _add_agent_arguments(agent: Any) -> None:
    agent.add_argument(
        "--runtime",
        default="langchain",
        help="whose agent runs: an installed integration's demo agent (default: langchain)",
    )
    agent.add_argument(
        "--agent-model",
        help="the agent's chat model 'openai/<model>' (default: "
        f"${AGENT_MODEL_ENV}, else a scripted model that calls the tools for real)",
    )
    agent.add_argument(
        "--question",
        action="append",
        metavar="TEXT",
        help="ask this instead of the built-in questions (repeatable)",
    )


def run_demo_command(
    args: argparse.Namespace,
    *,
    console: Console | None = None,
    span_exporters: Sequence[SpanExporter] = (),
    local_judge_server: LocalJudgeServer | None = None,
) -> int:
    """Run the demo from parsed arguments; returns the exit code.

    ``console``, ``span_exporters`` and ``local_judge_server`` are for embedding and tests
    (see :func:`livescore.demo.run_demo`).
    """
    from rich.markup import escape

    from livescore.demo import DemoConfigError, DemoOptions, run_demo

    console = console or make_console()
    judge_options = JudgeOptions.from_args(args)
    agent_model = args.agent_model or os.environ.get(AGENT_MODEL_ENV) or None
    options = DemoOptions(
        model=judge_options.resolve(),
        local_judge=args.local_judge,
        judge_timeout=judge_options.timeout,
        judge_mode=judge_options.judge_mode,
        runtime=args.runtime,
        agent_model=judge_model_string(agent_model) if agent_model else None,
        questions=tuple(args.question or ()),
        otlp_endpoint=args.otlp_endpoint,
        phoenix=args.phoenix,
        langfuse=args.langfuse,
        console_spans=args.console_spans,
        emit=args.emit or ("spans", "events"),
        endpoint_configured=bool(
            args.base_url or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")
        ),
        judge_help=f"pass --model openai/<model> or set {JUDGE_MODEL_ENV}",
    )
    try:
        return run_demo(
            options,
            console=console,
            span_exporters=span_exporters,
            local_judge_server=local_judge_server,
        )
    except DemoConfigError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
