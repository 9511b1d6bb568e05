"""Live scoring of a hand-written agent: a tool loop on the plain ``openai`` client.

No agent framework: the agent calls ``chat.completions.create`` with two tools, runs the
tools the model asks for, and loops until the model answers. ``livescore.live.record_run``
wraps each run: it records the question, each model turn, each tool call with its arguments
and result, and the answer, and hands the run to a background dispatcher at the end of the
block. Scores are ``evaluation <scorer>`` spans under the run's ``invoke_agent`` span, next
to an ``execute_tool`` span per tool call: keyword coverage (code) always, hallucination (an
LLM judge checking the answer against the run's tool results) with ``--model``.

    python examples/plain_openai_agent.py                  # spans printed to the console
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 \\
        python examples/plain_openai_agent.py              # spans sent over OTLP/HTTP
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 python examples/plain_openai_agent.py \\
        --agent-model <model> --model openai/<judge-model>  # a real model and judge

Without ``OPENAI_BASE_URL`` the example starts ``livescore.testing.OpenAITestServer`` on
127.0.0.1 to play the agent's model: it really asks for the tools and answers from their
results (plus one claim no tool supports, about the weekend).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from openai import OpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)

from livescore import (
    LiveDispatcher,
    OTelEmitter,
    Run,
    ScorerConfig,
    Step,
    extract_tool_results,
    record_run,
)
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer, Reply

OPENING_HOURS = {"museum": "Tuesday to Sunday, 10:00-18:00", "library": "Monday to Friday, 9-20"}
PRICES = {"museum": "12 EUR, free for under-18s", "library": "free"}

QUESTIONS = [
    "When is the museum open?",
    "How much does a museum ticket cost?",
    "When is the library open?",
]

SYSTEM_PROMPT = "You are a town guide. Answer from the tools' results only."


def opening_hours(place: str) -> str:
    """Opening hours of a place in town (museum, library)."""
    return OPENING_HOURS.get(place.lower(), f"unknown place {place!r}")


def ticket_price(place: str) -> str:
    """Ticket price of a place in town (museum, library)."""
    return PRICES.get(place.lower(), f"unknown place {place!r}")


TOOLS: dict[str, Callable[..., str]] = {
    "opening_hours": opening_hours,
    "ticket_price": ticket_price,
}
TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": (fn.__doc__ or "").strip(),
            "parameters": {
                "type": "object",
                "properties": {"place": {"type": "string"}},
                "required": ["place"],
            },
        },
    }
    for name, fn in TOOLS.items()
]


def answer(
    client: OpenAI, model: str, question: str, dispatcher: LiveDispatcher, **options: Any
) -> str:
    """The agent: a tool loop on the plain openai client, recorded for live scoring."""
    with record_run(dispatcher, input=question, name="town-guide", **options) as run:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": question},
        ]
        for _ in range(5):  # a bounded loop: a model that never answers is a failed run
            completion = client.chat.completions.create(
                model=model,
                messages=messages,
                tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
            )
            message = completion.choices[0].message.model_dump(exclude_none=True)
            run.model_turn(list(messages), message, name=model)
            messages.append(message)
            if not message.get("tool_calls"):
                run.output = message.get("content") or ""
                return str(run.output)
            for call in message["tool_calls"]:
                name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
                result = TOOLS[name](**args)
                run.tool_call(name, args, result, call_id=call["id"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        raise RuntimeError("the model kept asking for tools")


def scripted_turn(body: dict[str, Any]) -> Reply:
    """The test server's model: ask for the right tool, then answer from its result."""
    messages = body["messages"]
    question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    place = "museum" if "museum" in question.lower() else "library"
    if messages[-1]["role"] != "tool":
        tool = "ticket_price" if "cost" in question.lower() else "opening_hours"
        return Reply.tool_calls((tool, {"place": place}), ids=[f"call_{uuid.uuid4().hex[:8]}"])
    text = f"The {place}: {messages[-1]['content']}."
    if place == "library":
        text += " It also opens on Saturday mornings."  # no tool said so
    return Reply.text(text)


@contextlib.contextmanager
def model_endpoint() -> Iterator[tuple[str, str]]:
    """``(base_url, api_key)``: OPENAI_BASE_URL when set, else a scripted local server."""
    base_url = os.environ.get("OPENAI_BASE_URL")
    if base_url:
        yield base_url, os.environ.get("OPENAI_API_KEY", "local")
        return
    with OpenAITestServer(responder=scripted_turn) as server:
        yield server.base_url, "scripted"


def tool_results(run: Run, step: Step | None) -> list[str]:
    """Ground truth for the judge: what the tools returned in this run."""
    return [result.to_context() for result in extract_tool_results(run)]


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
    parser.add_argument(
        "--agent-model",
        default=os.environ.get("LIVESCORE_AGENT_MODEL", "gpt-4o-mini"),
        help="the agent's model on OPENAI_BASE_URL (ignored by the scripted server)",
    )
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

    scorers = [ScorerConfig(create_keyword_coverage_scorer(), sampling=args.rate)]
    if args.model:
        model = args.model if "/" in args.model else f"openai/{args.model}"
        judge = create_hallucination_scorer(model=model, get_context=tool_results)
        scorers.append(ScorerConfig(judge, sampling=args.rate))
    else:
        print("No judge model (--model): only keyword coverage is scored.", file=sys.stderr)

    dispatcher = LiveDispatcher(scorers, emitter=OTelEmitter(tracer_provider=provider))
    with (
        model_endpoint() as (base_url, api_key),
        OpenAI(base_url=base_url, api_key=api_key) as client,
    ):
        for question in QUESTIONS:
            reply = answer(client, args.agent_model, question, dispatcher, tracer_provider=provider)
            print(f"Q: {question}\nA: {reply}", file=sys.stderr)

    dispatcher.flush(timeout=60)  # the agent never waited; this waits for the scores
    dispatcher.shutdown()
    provider.shutdown()
    stats = dispatcher.stats()
    print(
        json.dumps(
            {k: getattr(stats, k) for k in ("sampled", "scored", "failed", "skipped", "dropped")}
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
