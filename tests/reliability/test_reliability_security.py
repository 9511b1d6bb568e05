"""Security: the judge's API key never shows up in spans, logs or errors, and
``capture_content="none"`` keeps user text out of everything exported."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import pytest
from _reliability_support import (
    FAST_JUDGE,
    MakeHandler,
    evaluation_spans,
    exported_text,
    flaky_forecast,
    get_weather,
    metric_points,
    question,
    schema_name,
    tool_call,
    tool_contexts,
    weather_agent,
)
from langchain_core.tools import tool
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import NotScorable, Run, ScorerRunError, StepContext, create_scorer
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer, Reply, ReplyLike

KEY = "sk-test-SECRET-123"
SECRET_PARTS = (KEY, "SECRET-123")


def _leaks(text: str) -> list[str]:
    return [part for part in SECRET_PARTS if part in text]


def _echo_key(body: dict[str, Any]) -> ReplyLike:
    # Servers quote what they were sent: an error body that repeats the key.
    return Reply.error(401, f"Incorrect API key provided: {KEY}. Check your key.")


# Each run of the agent meets one of these on its judge requests.
KEY_FAULTS: list[ReplyLike] = [
    Reply.error(401, f"Incorrect API key provided: {KEY}."),
    Reply.error(403, {"error": {"message": f"key {KEY} has no access", "type": "denied"}}),
    Reply.error(500, f"upstream rejected Authorization: Bearer {KEY}"),
    Reply.rate_limited(retry_after=0.01),
    Reply.hang(5),
    Reply.drop(),
    Reply.broken_body(f'{{"error": "bad key {KEY}"'),
    Reply.text(f'{{"claims": "{KEY}"}}'),
    # Echoed where the excerpt is cut (300 characters): masked before the cut, not after.
    Reply.error(500, "x" * 290 + f"key {KEY} rejected"),
    Reply.error(401, "x" * 295 + f"key {KEY} rejected"),
]


def test_the_api_key_never_appears_in_spans_logs_or_errors(
    make_handler: MakeHandler,
    exporter: InMemorySpanExporter,
    metric_reader: InMemoryMetricReader,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, openai's and httpx's included
    errors: list[str] = []
    with OpenAITestServer(KEY_FAULTS, responder=_echo_key) as server:
        options = {**FAST_JUDGE, "max_retries": 1, "api_key": KEY, "base_url": server.base_url}
        scorer = create_hallucination_scorer(
            model="openai/test-model", judge_options=options, get_context=tool_contexts
        )
        handler = make_handler([scorer])
        for _ in range(len(KEY_FAULTS) // 2 + 1):
            weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=30)
        # The same faults met directly: the exceptions and their whole tracebacks.
        direct = create_hallucination_scorer(
            model="openai/test-model", judge_options=options, context=["It is 21°C in Paris."]
        )
        server.enqueue(*KEY_FAULTS)
        for _ in range(len(KEY_FAULTS) // 2):
            try:
                direct.run_sync(Run(input="Weather?", output="It is 21°C in Paris."))
            except ScorerRunError as exc:
                errors += [str(exc), repr(exc), str(exc.result.error)]
                errors.append("".join(traceback.format_exception(exc)))
        errors += [repr(scorer), repr(scorer.judge)]
        authorizations = {h.get("authorization") for h in server.headers}
    # The key was really in use, and the server really echoed it back.
    assert authorizations == {f"Bearer {KEY}"}
    spans = exporter.get_finished_spans()
    assert len(evaluation_spans(spans)) == len(KEY_FAULTS) // 2 + 1
    assert handler.stats().failed >= len(KEY_FAULTS) // 2
    for span in spans:
        assert _leaks(exported_text(span)) == [], span.name
    for attrs, _ in metric_points(metric_reader, "livescore.runs"):
        assert _leaks(str(attrs)) == []
    assert caplog.records, "nothing was logged: the check would prove nothing"
    for record in caplog.records:
        text = record.getMessage()
        if record.exc_info:
            text += "".join(traceback.format_exception(*record.exc_info))
        assert _leaks(text) == [], (record.name, text)
    assert len(errors) == 4 * (len(KEY_FAULTS) // 2) + 2
    for text in errors:
        assert _leaks(text) == [], text


def test_credentials_in_the_base_url_never_appear_in_spans_logs_or_errors(
    make_handler: MakeHandler,
    exporter: InMemorySpanExporter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Before, the HTTP client's INFO line "HTTP Request: POST http://user:<secret>@…" showed
    # them on every judge call: now the client never sees a URL with credentials in it.
    caplog.set_level(logging.DEBUG)
    with OpenAITestServer(responder=lambda body: Reply.server_error()) as server:
        url = server.base_url.replace("http://", f"http://user:{KEY}@")
        scorer = create_hallucination_scorer(
            model="openai/test-model",
            judge_options={**FAST_JUDGE, "max_retries": 1, "base_url": url},
            get_context=tool_contexts,
        )
        handler = make_handler([scorer])
        weather_agent().invoke(question(), config={"callbacks": [handler]})
        assert handler.flush(timeout=30)
        authorizations = {h.get("authorization", "") for h in server.headers}
    assert len(authorizations) == 1
    assert authorizations.pop().startswith("Basic ")  # the credentials were still sent
    assert _leaks(repr(scorer.judge)) == []
    (span,) = evaluation_spans(exporter.get_finished_spans())
    assert (span.attributes or {}).get("error.type") == "server_error"
    assert _leaks(exported_text(span)) == []
    request_lines = [r for r in caplog.records if r.getMessage().startswith("HTTP Request:")]
    assert request_lines, "the HTTP client logged no request: the check would prove nothing"
    for record in caplog.records:
        assert _leaks(record.getMessage()) == [], (record.name, record.getMessage())


# -- content capture ---------------------------------------------------------------------------

USER_TEXT = "Zanzibar-7f3q"  # in the question, and so in the answer and the judge's reason
TOOL_TEXT = "Quokka-19xz"  # only in a tool result
ANSWER = f"It is 21°C in {USER_TEXT}, reports {TOOL_TEXT}."


@tool
def station_report(city: str) -> str:
    """The weather station's report."""
    return f"21°C in {city}, station {TOOL_TEXT}"


def _quoting_judge(body: dict[str, Any]) -> ReplyLike:
    claims = [f"It is 21°C in {USER_TEXT}.", f"{TOOL_TEXT} reports it."]
    verdicts = [{"statement": c, "verdict": "yes", "reason": f"{TOOL_TEXT} says"} for c in claims]
    if schema_name(body) == "OneCallAnswer":
        return {"claims": claims, "verdicts": verdicts, "reason": f"{USER_TEXT} is not backed."}
    return Reply.server_error()


def _user_text_scorers(server: OpenAITestServer) -> list[Any]:
    def skip(ctx: StepContext) -> float:
        raise NotScorable(f"cannot judge {ctx.output_text}")

    def fail(ctx: StepContext) -> float:
        raise ValueError(f"bad output: {ctx.output_text}")

    return [
        create_hallucination_scorer(
            model=server.judge(**FAST_JUDGE), get_context=tool_contexts, judge_mode="one_call"
        ),
        create_keyword_coverage_scorer(),  # its reason names the missing user keywords
        create_scorer(id="skipper", description="skips", generate_score=skip),
        create_scorer(id="failer", description="fails", generate_score=fail),
    ]


def _run_with_capture(
    capture: str, make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> list[str]:
    with OpenAITestServer(responder=_quoting_judge) as server:
        handler = make_handler(_user_text_scorers(server), capture_content=capture)
        agent = weather_agent(
            turns=[
                tool_call("station_report", city=USER_TEXT),
                tool_call("flaky_forecast", call_id="call_2", city=USER_TEXT),
                ANSWER,
            ],
            tools=[station_report, get_weather, flaky_forecast],
        )
        agent.invoke(
            question(f"Weather and forecast for {USER_TEXT} in Celsius?"),
            config={"callbacks": [handler]},
        )
        assert handler.flush(timeout=30)
    statuses = {
        str((s.attributes or {}).get("livescore.status"))
        for s in evaluation_spans(exporter.get_finished_spans())
    }
    assert statuses == {"scored", "skipped", "failed"}
    return [exported_text(s) for s in exporter.get_finished_spans()]


def test_full_capture_does_carry_user_text_so_the_none_check_can_fail(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    blob = "".join(_run_with_capture("full", make_handler, exporter))
    assert USER_TEXT in blob
    assert TOOL_TEXT in blob


def test_capture_none_keeps_user_text_out_of_every_attribute_and_event(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    _run_with_capture("none", make_handler, exporter)
    for span in exporter.get_finished_spans():
        parts = [span.name, dict(span.attributes or {})]
        for event in span.events:
            parts += [event.name, dict(event.attributes or {})]
        text = str(parts)
        assert USER_TEXT not in text, text
        assert TOOL_TEXT not in text, text
    for span in evaluation_spans(exporter.get_finished_spans()):
        description = span.status.description or ""
        assert USER_TEXT not in description, description


def test_capture_none_keeps_user_text_out_of_the_handlers_own_span_statuses(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    _run_with_capture("none", make_handler, exporter)
    for span in exporter.get_finished_spans():
        assert USER_TEXT not in (span.status.description or ""), span.name
