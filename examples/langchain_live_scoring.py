"""Live scoring of a LangChain agent, exported as OpenTelemetry spans.

A ``create_agent`` agent with two real tools answers a few questions. A
:class:`~livescore_langchain.LiveScoringHandler` rides along in ``callbacks``: it records
each run, and scores it off the agent's path with keyword coverage (code) and, when a judge
is configured, hallucination (an LLM judge checking the answer against the tool results of
that very run). Every score is an ``evaluation <scorer>`` span under the run's
``invoke_agent`` span.

    python examples/langchain_live_scoring.py                  # spans printed to the console
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 \\
        python examples/langchain_live_scoring.py              # spans sent over OTLP/HTTP
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 \\
        python examples/langchain_live_scoring.py --model openai/<judge-model>   # + hallucination

Without ``--agent-model`` a scripted chat model plays the agent's model: it really calls the
tools and answers from their results (plus one claim no tool supports, about the weekend).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)

from livescore import ScorerConfig, get_run_context
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore_langchain import LiveScoringHandler

OPENING_HOURS = {"museum": "Tuesday to Sunday, 10:00-18:00", "library": "Monday to Friday, 9-20"}
PRICES = {"museum": "12 EUR, free for under-18s", "library": "free"}

QUESTIONS = [
    "When is the museum open?",
    "How much does a museum ticket cost?",
    "When is the library open?",
]


@tool
def opening_hours(place: str) -> str:
    """Opening hours of a place in town (museum, library)."""
    return OPENING_HOURS.get(place.lower(), f"unknown place {place!r}")


@tool
def ticket_price(place: str) -> str:
    """Ticket price of a place in town (museum, library)."""
    return PRICES.get(place.lower(), f"unknown place {place!r}")


def scripted_turn(messages: list[BaseMessage]) -> AIMessage:
    """Call the right tool for the question, then answer from what it returned."""
    question = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
    place = "museum" if "museum" in question.lower() else "library"
    if not isinstance(messages[-1], ToolMessage):
        name = "ticket_price" if "cost" in question.lower() else "opening_hours"
        return AIMessage("", tool_calls=[{"name": name, "args": {"place": place}, "id": "c1"}])
    answer = f"The {place}: {messages[-1].content}."
    if place == "library":
        answer += " It also opens on Saturday mornings."  # no tool said so
    return AIMessage(answer)


def build_agent(agent_model: str | None) -> Any:
    """The town-guide agent, with a real chat model when ``agent_model`` is given."""
    if agent_model:
        from langchain_openai import ChatOpenAI  # pip install langchain-openai

        model: Any = ChatOpenAI(model=agent_model.removeprefix("openai/"), temperature=0)
    else:
        from livescore_langchain.testing import ScriptedChatModel

        model = ScriptedChatModel(responses=[scripted_turn] * (2 * len(QUESTIONS)))
    return create_agent(model, tools=[opening_hours, ticket_price], name="town-guide")


def span_exporter() -> SpanExporter:
    """OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, else JSON on the console."""
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()  # reads OTEL_EXPORTER_OTLP_ENDPOINT itself
    return ConsoleSpanExporter()


def sample_rate(text: str) -> float:
    """An argparse type: a share of runs, from 0 to 1 (else a one-line usage error)."""
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"a share of runs lies from 0 to 1, not {text}")
    return rate


def main(argv: list[str] | None = None, *, exporter: SpanExporter | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default=os.environ.get("LIVESCORE_JUDGE_MODEL"),
        help="hallucination judge 'openai/<model>' (default: $LIVESCORE_JUDGE_MODEL)",
    )
    parser.add_argument("--agent-model", default=os.environ.get("LIVESCORE_AGENT_MODEL"))
    parser.add_argument(
        "--rate", type=sample_rate, default=1.0, help="share of runs to score, 0 to 1"
    )
    args = parser.parse_args(argv)

    provider = TracerProvider()
    exporter = exporter or span_exporter()
    processor = (
        SimpleSpanProcessor(exporter)
        if isinstance(exporter, ConsoleSpanExporter)
        else BatchSpanProcessor(exporter)
    )
    provider.add_span_processor(processor)

    scorers: list[ScorerConfig] = [
        ScorerConfig(create_keyword_coverage_scorer(), sampling=args.rate)
    ]
    if args.model:
        model = args.model if "/" in args.model else f"openai/{args.model}"
        judge = create_hallucination_scorer(model=model, get_context=get_run_context)
        scorers.append(ScorerConfig(judge, sampling=args.rate))
    else:
        print("No judge model (--model): only keyword coverage is scored.", file=sys.stderr)

    handler = LiveScoringHandler(scorers=scorers, name="town-guide", tracer_provider=provider)
    agent = build_agent(args.agent_model)
    for question in QUESTIONS:
        result = agent.invoke(
            {"messages": [{"role": "user", "content": question}]},
            config={"callbacks": [handler]},
        )
        print(f"Q: {question}\nA: {result['messages'][-1].content}", file=sys.stderr)

    handler.flush(timeout=60)  # the agent never waited; this waits for the scores
    handler.shutdown()
    provider.shutdown()
    stats = handler.stats()
    print(
        json.dumps(
            {k: getattr(stats, k) for k in ("sampled", "scored", "failed", "skipped", "dropped")}
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
