"""From spans to runs: which span is a run, what the run holds, and the bounded buffer of
open traces that the span processor and the OTLP receiver share.

A run is the outermost agent span of a trace (``invoke_agent``, an OpenInference ``AGENT``
span) with everything beneath it; a trace with no agent span is one run when its root
span carries an input and an output (a lone ``chat`` span, a LangChain ``CHAIN`` root).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore import _attributes as A
from livescore._messages import message_text
from livescore.runs import NO_INPUT_METADATA_KEY, NOT_SCORABLE_METADATA_KEY, Run, Step, ToolCall
from livescore.traces._otlp import LogEvent
from livescore.traces._readers import Message, Sourced, SpanReading, convention_of, read_span
from livescore.traces._readers._parse import answer_text, error_of, requested_calls, user_turn
from livescore.traces._readers.genai import ANSWER_TOOLS
from livescore.traces._span import SpanEvent, SpanRecord

__all__ = (
    "NO_CONTENT_REASON",
    "AssembledRun",
    "AssemblyLimits",
    "AssemblyStats",
    "FieldSource",
    "TraceAssembler",
    "assemble_run",
    "assemble_runs",
    "build_run",
    "runs_from_spans",
)

_log = logging.getLogger("livescore.traces")

NO_CONTENT_REASON = (
    "the trace records no {what} for this run (its instrumentation captured no message "
    "content): there is no text to score"
)
"""Why a run assembled from content-less spans is skipped (``{what}``: input, output…)."""

INTEGRATION = "otel"


# -- one run -------------------------------------------------------------------------------------


def _order(span: SpanRecord) -> tuple[int, int]:
    return (span.start_ns, span.end_ns)


@dataclass(frozen=True, slots=True)
class FieldSource:
    """Where one field of an assembled run came from.

    Attributes:
        span_name: The span's name.
        span_id: Its id.
        attribute: The attribute or event read (``input.value``, ``event gen_ai.choice``).
        convention: The reader that read it (``genai``, ``openinference``…).
        quality: How far the value can be trusted (``whole``, ``built``, ``repr``,
            ``truncated``).
    """

    span_name: str
    span_id: str
    attribute: str
    convention: str
    quality: str = "whole"

    def __str__(self) -> str:
        note = "" if self.quality == "whole" else f" ({self.quality})"
        return f"span {self.span_name!r} {self.attribute} [{self.convention}]{note}"


@dataclass(slots=True)
class AssembledRun:
    """A run and where each of its fields came from (what ``livescore traces inspect`` shows).

    Attributes:
        run: The run.
        sources: ``input``, ``output``, ``conversation_id`` and ``tool <name>`` (one per
            tool step) mapped to where each came from.
    """

    run: Run
    sources: dict[str, FieldSource] = field(default_factory=dict)


def build_run(root: SpanRecord, spans: Iterable[SpanRecord]) -> Run:
    """The :class:`~livescore.Run` that ``root`` (a run's span) and its descendants describe.

    ``spans`` may hold the whole trace, in any order: only ``root``'s descendants count.
    The run's ``trace_id`` / ``span_id`` are ``root``'s, so its scores nest under it.

    Example:
        >>> root = SpanRecord("1" * 32, "2" * 16, None, "invoke_agent", 0, 9, {
        ...     "gen_ai.operation.name": "invoke_agent",
        ...     "gen_ai.input.messages": '[{"role": "user", "content": "2+2?"}]',
        ...     "gen_ai.output.messages": '[{"role": "assistant", "content": "4"}]'})
        >>> run = build_run(root, [root])
        >>> run.input, run.output, run.span_id
        ([{'role': 'user', 'content': '2+2?'}], '4', '2222222222222222')
    """
    return assemble_run(root, spans).run


class _TraceIndex:
    """One trace's spans by id and by parent: built once per trace, so that finding each
    run's descendants and ancestors costs what that run holds, not the whole trace again
    (a trace of thousands of sibling runs stays linear)."""

    __slots__ = ("by_id", "children")

    def __init__(self, spans: Iterable[SpanRecord]) -> None:
        self.by_id: dict[str, SpanRecord] = {}
        self.children: dict[str, list[SpanRecord]] = {}
        for span in spans:
            self.by_id[span.span_id] = span
            if span.parent_span_id is not None and span.parent_span_id != span.span_id:
                self.children.setdefault(span.parent_span_id, []).append(span)


def _descendants(root: SpanRecord, index: _TraceIndex) -> list[SpanRecord]:
    descendants: list[SpanRecord] = []
    stack = [root.span_id]
    seen = {root.span_id}
    while stack:
        for child in index.children.get(stack.pop(), ()):
            if child.span_id not in seen:  # a malformed trace may loop
                seen.add(child.span_id)
                descendants.append(child)
                stack.append(child.span_id)
    descendants.sort(key=_order)
    return descendants


class _Best:
    """The best value offered for one field of the run, and where it came from."""

    __slots__ = ("source", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.source: FieldSource | None = None

    def offer(
        self, span: SpanRecord, reading: SpanReading, found: Sourced[Any] | None, value: Any
    ) -> None:
        if found is None or not _has_text(value):
            return
        if self.source is None or found.better_than(_as_sourced(self.source)):
            self.value = value
            self.source = FieldSource(
                span.name, span.span_id, found.source, reading.convention, found.quality
            )

    def take(self, other: _Best) -> None:
        """``other``'s value, where it is better than this one."""
        if other.source is not None and (
            self.source is None or _as_sourced(other.source).better_than(_as_sourced(self.source))
        ):
            self.value, self.source = other.value, other.source


def _as_sourced(source: FieldSource) -> Sourced[None]:
    return Sourced(None, source.attribute, source.quality)  # type: ignore[arg-type]


class _Walk:
    """The steps of one run, read span by span in start order, and what they say about its
    input and output (the first model call's request, the last answer)."""

    def __init__(self, readings: dict[str, SpanReading], sources: dict[str, FieldSource]):
        self.readings = readings
        self.sources = sources
        self.steps: list[Step] = []
        self.pending: list[ToolCall] = []  # calls models asked for, not yet matched to a span
        self.ran: set[str] = set()  # ids of the calls a tool span ran
        # Tool spans that recorded no content, by call id: a tool-role message may hold it.
        self.unfilled: dict[str, Step] = {}
        self.redacted_tools = 0
        self.first_request = _Best()  # the first model call's first user message
        self.answer = _Best()  # a final_answer tool's result, else the last model answer
        self.answer_response_id: str | None = None
        self.answer_from_tool = False  # a final_answer tool handed the answer over
        self.inner_input = _Best()  # an inner agent span's input

    def visit(self, span: SpanRecord) -> None:
        reading = self.readings[span.span_id]
        if reading.kind == "model":
            self._model(span, reading)
        elif reading.kind == "tool" and reading.tool_call is not None:
            self._tool(span, reading, reading.tool_call)
        elif reading.kind == "retriever":
            self.steps.append(
                Step(
                    kind="retriever",
                    name=span.name,
                    input=_text_of(reading.input),
                    documents=reading.documents,
                    error=error_of(span),
                    span_id=span.span_id,
                )
            )
        elif reading.kind == "agent" and reading.input is not None:
            self.inner_input.offer(span, reading, reading.input, _run_input_of(reading.input))

    def _model(self, span: SpanRecord, reading: SpanReading) -> None:
        messages = _messages_of(reading.input)
        if messages and self.first_request.source is None:
            self.first_request.offer(span, reading, reading.input, _first_user_message(messages))
        out = _messages_of(reading.output)
        text = answer_text(out) if out else _text_of(reading.output)
        requested = requested_calls(out)
        # Tool results the model was sent (a tool-role message): the only record of a tool
        # call where the instrumentation makes no tool span (raw SDK loops), or where its
        # tool span recorded nothing (content in log records, capture off for tools).
        for step in _answered_calls(messages, self.ran, self.pending):
            empty = (
                self.unfilled.pop(step.tool_call.call_id or "", None) if step.tool_call else None
            )
            if empty is not None and empty.tool_call is not None:
                if empty.tool_call.args is None:
                    empty.input = empty.tool_call.args = step.input
                    self.redacted_tools -= 1
                empty.output = empty.tool_call.result = step.output
                step = empty
            else:
                self.steps.append(step)
            self.sources[f"tool {step.name}"] = FieldSource(
                span.name, span.span_id, "a tool-role message in its input", reading.convention
            )
        self.pending.extend(requested)
        self.steps.append(
            Step(
                kind="model",
                name=reading.model or span.name,
                input=messages,
                output=text,
                tool_calls_requested=requested,
                error=error_of(span),
                span_id=span.span_id,
            )
        )
        if text and reading.output is not None and not self.answer_from_tool:
            # The last answer wins: start over, so an earlier one cannot outrank it.
            self.answer = _Best()
            self.answer.offer(span, reading, reading.output, text)
            self.answer_response_id = _response_id(span)

    def _tool(self, span: SpanRecord, reading: SpanReading, found: Sourced[ToolCall]) -> None:
        call = found.value
        if call.call_id is None:
            call.call_id = _match(self.pending, call)
        else:
            asked = next((c for c in self.pending if c.call_id == call.call_id), None)
            if asked is not None:
                self.pending.remove(asked)
                if not isinstance(call.args, dict) and isinstance(asked.args, dict):
                    # The tool span holds less than the model asked for (LangChain's
                    # records a one-argument tool's bare value): the model's call says it.
                    call.args = asked.args
        no_result = call.result is None and call.error is None
        if call.call_id and not no_result:
            self.ran.add(call.call_id)
        if call.name in ANSWER_TOOLS:
            if call.ok and call.result is not None:
                text = message_text(call.result) or str(call.result)
                self.answer = _Best()
                self.answer.offer(span, reading, Sourced(text, "tool result"), text)
                self.answer_from_tool = True
            return
        if call.args is None and no_result:
            self.redacted_tools += 1
        step = Step(
            kind="tool",
            name=call.name,
            input=call.args,
            output=call.result,
            tool_call=call,
            error=call.error,
            span_id=span.span_id,
        )
        self.steps.append(step)
        if no_result and call.call_id:
            self.unfilled[call.call_id] = step
        self.sources[f"tool {call.name}"] = FieldSource(
            span.name, span.span_id, found.source, reading.convention
        )


def assemble_run(
    root: SpanRecord,
    spans: Iterable[SpanRecord],
    readings: Mapping[str, SpanReading] | None = None,
    *,
    index: _TraceIndex | None = None,
) -> AssembledRun:
    """:func:`build_run` with where each field came from (``readings``: the spans already
    read, by span id, so that a trace's spans are read once; ``index``: the trace's spans
    by id and parent, built once for all its runs)."""
    if index is None:
        index = _TraceIndex(spans)
    descendants = _descendants(root, index)
    known: Mapping[str, SpanReading] = readings or {}
    readings = {
        span.span_id: known.get(span.span_id) or read_span(span) for span in (root, *descendants)
    }
    root_reading = readings[root.span_id]
    sources: dict[str, FieldSource] = {}
    walk = _Walk(readings, sources)
    for span in descendants:
        walk.visit(span)
    for position, step in enumerate(walk.steps):
        step.index = position

    # The run span's own values first, then an inner agent's, then the model calls': each
    # replaced only by a better one (the user's own words over a built prompt, a repr…).
    run_input = _Best()
    run_input.offer(root, root_reading, root_reading.input, _run_input_of(root_reading.input))
    if run_input.source is None:
        run_input = walk.inner_input
    run_input.take(walk.first_request)
    output = _Best()
    output.offer(root, root_reading, root_reading.output, _answer_of(root_reading.output))
    output.take(walk.answer)

    conversation = _conversation(root, descendants, index, {**known, **readings})
    metadata = _root_metadata(root, root_reading, conversation)
    if conversation is not None:
        sources["conversation_id"] = conversation[1]
    for name, best in (("input", run_input), ("output", output)):
        if best.source is not None:
            sources[name] = best.source
            if best.source.quality == "truncated":
                metadata[f"{name}_truncated"] = True
    error = error_of(root)
    missing = [name for name, best in (("input", run_input), ("output", output)) if not best.value]
    if error is None and missing:
        # No output: nothing to judge, every scorer skips. No input alone: the scorers that
        # need it skip with this reason; those that judge the output against the context
        # (hallucination) still score.
        key = NOT_SCORABLE_METADATA_KEY if "output" in missing else NO_INPUT_METADATA_KEY
        metadata[key] = _missing_reason(
            missing, [root, *descendants], readings, walk.redacted_tools
        )
    run = Run(
        input=run_input.value,
        output=output.value,
        run_id=root.span_id,
        trace_id=root.trace_id,
        span_id=root.span_id,
        trace_flags=root.trace_flags,
        name=root_reading.agent_name or root.name,
        steps=walk.steps,
        error=error,
        metadata=metadata,
        conversation_id=conversation[0] if conversation is not None else None,
        # The evaluated completion: the run span's own, else the model call that answered.
        response_id=_response_id(root) or walk.answer_response_id,
    )
    return AssembledRun(run, sources)


def _root_metadata(
    root: SpanRecord, reading: SpanReading, conversation: tuple[str, FieldSource] | None
) -> dict[str, Any]:
    """The run's metadata that its spans state: where it came from and whose it is."""
    metadata: dict[str, Any] = {
        "integration": INTEGRATION,
        "convention": reading.convention,
        "span_name": root.name,
    }
    if root.service_name:
        metadata["service_name"] = root.service_name
    if conversation is not None:
        metadata["conversation_id"] = conversation[0]
    user = root.attributes.get("user.id")
    if isinstance(user, str) and user:
        metadata["user_id"] = user
    return metadata


def _messages_of(found: Sourced[Any] | None) -> list[Message] | None:
    if found is None or not isinstance(found.value, list):
        return None
    return [m for m in found.value if isinstance(m, dict)] or None


def _text_of(found: Sourced[Any] | None) -> str | None:
    if found is None:
        return None
    return found.value if isinstance(found.value, str) else None


def _run_input_of(found: Sourced[Any] | None) -> Any:
    """A run span's input: its text, or the user's turn of its messages."""
    if found is None:
        return None
    messages = _messages_of(found)
    if messages is not None:
        return user_turn(messages) or messages
    return found.value


def _answer_of(found: Sourced[Any] | None) -> str | None:
    messages = _messages_of(found)
    return answer_text(messages) if messages is not None else _text_of(found)


def _first_user_message(messages: Any) -> Any:
    """What a run's first model call says the user asked: the first user message's text."""
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and message.get("role") in ("user", "human"):
            content = message.get("content")
            if isinstance(content, str) and content.strip():
                return content
    return None


def _conversation(
    root: SpanRecord,
    descendants: Sequence[SpanRecord],
    index: _TraceIndex,
    readings: Mapping[str, SpanReading],
) -> tuple[str, FieldSource] | None:
    """The run's conversation id and where it was read: its span's, a descendant's, else
    that of the nearest span around it (the OpenAI Agents SDK's trace above each
    ``Runner.run``, an app's own session span)."""
    for span in (root, *descendants):
        reading = readings[span.span_id]
        if reading.conversation_id is not None:
            return _conversation_of(span, reading, reading.conversation_id)
    by_id = index.by_id
    parent = by_id.get(root.parent_span_id or "")
    seen = {root.span_id}
    while parent is not None and parent.span_id not in seen:  # a malformed trace may loop
        seen.add(parent.span_id)
        reading = readings.get(parent.span_id) or read_span(parent)
        if reading.conversation_id is not None:
            return _conversation_of(parent, reading, reading.conversation_id)
        parent = by_id.get(parent.parent_span_id or "")
    return None


def _conversation_of(
    span: SpanRecord, reading: SpanReading, found: Sourced[str]
) -> tuple[str, FieldSource]:
    return found.value, FieldSource(span.name, span.span_id, found.source, reading.convention)


def _answered_calls(
    messages: list[Message] | None, ran: set[str], asked_before: Sequence[ToolCall] = ()
) -> list[Step]:
    """Tool steps for the tool-role messages a model was sent whose calls no tool span ran.

    The call's name and arguments come from the assistant message that asked for it, else
    from an earlier model turn's output (``asked_before``): some instrumentations (OpenLIT)
    leave the assistant's tool-call turn out of the next call's input messages.
    """
    found: list[Step] = []
    if not messages:
        return found
    earlier = {c.call_id: c for c in asked_before if c.call_id}
    requested: dict[str, dict[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            if call.get("id"):
                requested[str(call["id"])] = call
        call_id = message.get("tool_call_id")
        if message.get("role") != "tool" or not call_id or call_id in ran:
            continue
        ran.add(str(call_id))
        asked = requested.get(str(call_id), {})
        before = earlier.get(str(call_id))
        result = message.get("content")
        tool = ToolCall(
            name=str(
                asked.get("name")
                or message.get("name")
                or (before.name if before is not None else None)
                or "tool"
            ),
            call_id=str(call_id),
            args=asked.get("arguments") if asked or before is None else before.args,
            result=result,
        )
        found.append(
            Step(kind="tool", name=tool.name, input=tool.args, output=result, tool_call=tool)
        )
    return found


def _missing_reason(
    missing: list[str],
    spans: Sequence[SpanRecord],
    readings: dict[str, SpanReading],
    redacted_tools: int,
) -> str:
    """Why a run has no input or output, saying where livescore looked."""
    what = " or ".join(missing)
    unread = next((u for u in (_unread_content(spans, m) for m in missing) if u), None)
    if unread is not None:
        span, key = unread
        return (
            f"no {what} found: span {span.name!r} holds text in attribute {key!r}, which "
            "livescore does not read for this instrumentation (see docs/any-agent.md, "
            '"My agent is not scored")'
        )
    conventions = sorted({r.convention for r in readings.values()} - {"unknown"})
    if not conventions:
        return (
            f"no {what} found: no span of this run speaks a convention livescore reads "
            "(see docs/any-agent.md for the instrumentations it reads)"
        )
    settings = sorted(
        {r.content_setting for r in readings.values() if r.content_setting is not None}
    )
    where = ", ".join(conventions)
    hint = f"; turn content capture on: {'; '.join(settings)}" if settings else ""
    tools = " (nor tool arguments or results)" if redacted_tools else ""
    return NO_CONTENT_REASON.format(what=what + tools) + f" [read as {where}{hint}]"


def _unread_content(spans: Sequence[SpanRecord], side: str) -> tuple[SpanRecord, str] | None:
    """A text attribute that looks like the run's ``side`` but that no reader reads."""
    words = (
        ("input", "prompt", "query", "question", "message", "task")
        if side == "input"
        else ("output", "completion", "response", "answer", "result")
    )
    for span in spans:
        reader = convention_of(span)
        known = reader.reads if reader is not None else ()
        for key, value in span.attributes.items():
            if (
                isinstance(value, str)
                and len(value.strip()) > 1
                and any(word in key.lower() for word in words)
                and not key.startswith(known)
                and not key.endswith(("mime_type", ".type", ".id", ".name", ".count"))
            ):
                return span, key
    return None


def _response_id(span: SpanRecord) -> str | None:
    value = span.attributes.get(A.GEN_AI_RESPONSE_ID)
    return value if isinstance(value, str) and value else None


def _match(pending: list[ToolCall], call: ToolCall) -> str | None:
    """The id of the requested call a tool span ran: same name (and arguments, if any)."""
    fallback = None
    for index, requested in enumerate(pending):
        if requested.name == call.name:
            if requested.args == call.args:
                return pending.pop(index).call_id
            if fallback is None:
                fallback = index
    return pending.pop(fallback).call_id if fallback is not None else None


def _has_text(value: Any) -> bool:
    if value is None:
        return False
    try:
        return bool(message_text(value).strip())
    except TypeError:
        return True


def _outermost_runs(
    spans: dict[str, SpanRecord], readings: Mapping[str, SpanReading]
) -> list[SpanRecord]:
    """The spans of ``spans`` that are runs (see the module docstring), in start order."""
    kinds = {span_id: readings[span_id].kind for span_id in spans}
    candidates = [s for s in spans.values() if kinds[s.span_id] == "agent"]
    if not candidates:
        # No agent span: a root is a run when it holds an input and an output (a lone
        # chat span, a LangChain CHAIN) or when model calls happen beneath it (an app's own
        # span around a raw SDK tool loop).
        under_model: set[str] = set()
        for span_id, kind in kinds.items():
            if kind != "model":
                continue
            parent, hops = spans[span_id].parent_span_id, 0
            while (
                parent is not None
                and parent in spans
                and parent not in under_model  # its ancestors are marked already
                and hops < len(spans)
            ):
                under_model.add(parent)
                parent = spans[parent].parent_span_id
                hops += 1
        roots = [
            s
            for s in spans.values()
            if (s.parent_span_id is None or s.parent_span_id not in spans)
            and (s.span_id in under_model or _has_run_io(readings[s.span_id]))
        ]
        return sorted(roots, key=_order)
    ids = {s.span_id for s in candidates}
    # Whether a span has an agent span above it, remembered for every span walked past: each
    # parent link is followed once in all, however many candidates share it.
    under_agent: dict[str, bool] = {}
    runs = []
    for span in candidates:
        path: list[str] = []
        parent = span.parent_span_id
        nested = False
        while parent is not None and parent in spans and len(path) < len(spans):
            known = under_agent.get(parent)
            if known is not None:
                nested = known or parent in ids
                break
            if parent in ids:
                nested = True
                break
            path.append(parent)
            parent = spans[parent].parent_span_id
        for span_id in path:  # each is below what the walk found (or at the top)
            under_agent[span_id] = nested
        if not nested:
            runs.append(span)
    return sorted(runs, key=_order)


def _has_run_io(reading: SpanReading) -> bool:
    """Whether a span carries both a run's input and its output (a root that may be a run)."""
    return reading.input is not None and reading.output is not None


def runs_from_spans(spans: Iterable[SpanRecord]) -> list[Run]:
    """Every run in a set of ended spans (of one or many traces), in start order.

    Example:
        >>> runs_from_spans([])
        []
    """
    return [assembled.run for assembled in assemble_runs(spans)]


def assemble_runs(spans: Iterable[SpanRecord]) -> list[AssembledRun]:
    """:func:`runs_from_spans` with where each field of each run came from."""
    traces: dict[str, dict[str, SpanRecord]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, {})[span.span_id] = span
    assembled: list[AssembledRun] = []
    for trace in traces.values():
        assembled.extend(assemble_trace(trace))
    return assembled


def assemble_trace(
    spans: Mapping[str, SpanRecord], readings: Mapping[str, SpanReading] | None = None
) -> list[AssembledRun]:
    """The runs of one trace's spans (by span id), each span read once (``readings``: the
    spans already read, by span id)."""
    if readings is None:
        readings = {span_id: read_span(span) for span_id, span in spans.items()}
    index = _TraceIndex(spans.values())
    return [
        assemble_run(root, spans.values(), readings, index=index)
        for root in _outermost_runs(dict(spans), readings)
    ]


def _missing_parent(spans: Mapping[str, SpanRecord]) -> bool:
    """Whether a span names a parent in this process's view of the trace that never came."""
    return any(
        span.parent_span_id is not None
        and not span.parent_is_remote
        and span.parent_span_id not in spans
        for span in spans.values()
    )


# -- the bounded buffer of open traces --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AssemblyLimits:
    """How much of the open traces is held at most.

    Attributes:
        max_traces: Open traces held at once; past it the oldest is evicted.
        max_spans_per_trace: Spans held for one trace, log events joined to them counted
            too; a trace past it is evicted.
        max_bytes: The estimated bytes of every held span and log event together; past it
            the oldest traces are evicted.
        max_trace_age: Seconds after a trace's first span at which it is evicted unfinished.
        quiet_period: Seconds without a new span (or log event) after which a trace counts
            as finished (the receiver's rule; the span processor finishes a trace when its
            root ends).
        late_span_grace: With ``finish_on_root``: seconds a trace waits after its root
            ends for children that end after it (async work the root did not await), so
            the run is scored with them; a flush does not wait for it (0: finished as its
            root arrives; ``LiveScoringSpanProcessor`` waits 0.5 s).
    """

    max_traces: int = 10_000
    max_spans_per_trace: int = 5_000
    max_bytes: int = 256 * 1024 * 1024
    max_trace_age: float = 600.0
    quiet_period: float = 5.0
    late_span_grace: float = 0.0

    def __post_init__(self) -> None:
        for name in ("max_traces", "max_spans_per_trace", "max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        for name in ("max_trace_age", "quiet_period", "late_span_grace"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"{name} must be >= 0 seconds, not {value!r}")


@dataclass(slots=True)
class AssemblyStats:
    """What became of the spans and traces a :class:`TraceAssembler` was given.

    Every span received ends as exactly one of: part of a finished trace, dropped (a trace
    not sampled, or one already evicted), evicted with its trace, or still held. So does
    every log event (a log record of a span, :class:`~livescore.traces.LogEvent`): joined to
    its span in a finished trace, dropped, evicted with its trace, or still held.

    Attributes:
        spans_received: Spans given to the assembler.
        spans_held: Spans held right now (in open traces).
        bytes_held: Their estimated size.
        traces_open: Traces held right now.
        traces_finished: Traces assembled (their root ended, or they went quiet).
        runs_assembled: Runs built from finished traces.
        traces_without_run: Finished traces in which no span is a run.
        spans_finished: Spans of finished traces.
        spans_dropped: Spans not kept, by reason (``not_sampled``, ``evicted_trace``).
        traces_evicted: Traces evicted unfinished, by reason (``max_traces``, ``max_bytes``,
            ``max_spans_per_trace``, ``max_trace_age``).
        spans_evicted: Spans thrown away with evicted traces.
        events_received: Log events given to the assembler.
        events_held: Log events held right now (in open traces; their bytes are in
            ``bytes_held``).
        events_joined: Log events of finished traces, added to their span's events.
        events_dropped: Log events not kept, by reason (``not_sampled``, ``late``,
            ``evicted_trace``, ``no_span``: their trace finished without their span).
        events_evicted: Log events thrown away with evicted traces.
        traces_partial: Finished traces some span of which names a parent the trace never
            held (and not as a remote parent): spans went elsewhere (another receiver
            behind a balancer without trace-id affinity) or never came. Their runs are
            assembled from what arrived.
        traces_finished_early: Traces finished before they went quiet, to make room, by
            reason (``max_traces``, ``max_bytes``): with ``finish_early``, what is held is
            assembled and scored instead of evicted (also counted in ``traces_finished``).
    """

    spans_received: int = 0
    spans_held: int = 0
    bytes_held: int = 0
    traces_open: int = 0
    traces_finished: int = 0
    runs_assembled: int = 0
    traces_without_run: int = 0
    spans_finished: int = 0
    spans_dropped: dict[str, int] = field(default_factory=dict)
    traces_evicted: dict[str, int] = field(default_factory=dict)
    spans_evicted: int = 0
    events_received: int = 0
    events_held: int = 0
    events_joined: int = 0
    events_dropped: dict[str, int] = field(default_factory=dict)
    events_evicted: int = 0
    traces_finished_early: dict[str, int] = field(default_factory=dict)
    traces_partial: int = 0

    def copy(self) -> AssemblyStats:
        """A snapshot."""
        return AssemblyStats(
            self.spans_received,
            self.spans_held,
            self.bytes_held,
            self.traces_open,
            self.traces_finished,
            self.runs_assembled,
            self.traces_without_run,
            self.spans_finished,
            dict(self.spans_dropped),
            dict(self.traces_evicted),
            self.spans_evicted,
            self.events_received,
            self.events_held,
            self.events_joined,
            dict(self.events_dropped),
            self.events_evicted,
            dict(self.traces_finished_early),
            self.traces_partial,
        )


class _Trace:
    __slots__ = (
        "bytes",
        "event_count",
        "events",
        "first",
        "last",
        "looks_like_agent",
        "rooted",
        "spans",
    )

    def __init__(self, now: float) -> None:
        self.spans: dict[str, SpanRecord] = {}
        # Log events by span id: joined to their span when the trace finishes (a log record
        # may arrive before its span or after it).
        self.events: dict[str, list[SpanEvent]] = {}
        self.event_count = 0
        self.bytes = 0
        self.first = now
        self.last = now
        self.looks_like_agent = False
        self.rooted: float | None = None  # when its root ended (finish_on_root)


EvictHook = Callable[[str, str, bool], None]
"""``on_evict(trace_id, reason, looked_like_an_agent_trace)``."""

FinishHook = Callable[[Sequence[SpanRecord]], None]
"""``on_finish(spans)``: a finished trace's spans (log events joined), after its runs were
assembled."""


class TraceAssembler:
    """Holds the spans of open traces, within :class:`AssemblyLimits`, and turns each
    finished trace into runs.

    It takes log events too (:class:`~livescore.traces.LogEvent`: an instrumentation's
    log records, which hold the messages when content is captured in events): held with
    their trace, under the same bounds, and added to their span's events when the trace
    finishes, whichever arrived first.

    Not thread-safe: one thread (or a lock) owns it. Each method takes ``now`` (monotonic
    seconds) so that its caller's clock, not a hidden one, decides when a trace is quiet.

    Args:
        limits: The bounds.
        finish_on_root: Finish a trace as soon as its root span arrives (in process, a
            root ends after everything beneath it); otherwise only when it goes quiet.
        keep_trace: Called once per new trace id: ``False`` drops its spans on arrival (a
            trace no scorer samples costs no memory).
        on_evict: Told about every trace evicted unfinished.
        on_finish: Told about every finished trace (``livescore collect --explain``).
        finish_early: Past ``max_traces`` or ``max_bytes``, finish the oldest trace now (its
            runs assembled from what it holds; its later spans dropped as ``late``) instead
            of evicting it: a receiver that answered 200 for its spans keeps its word.

    Example:
        >>> assembler = TraceAssembler(AssemblyLimits(quiet_period=0), finish_on_root=True)
        >>> root = SpanRecord("1" * 32, "2" * 16, None, "chat", 0, 9, {
        ...     "gen_ai.operation.name": "chat",
        ...     "gen_ai.input.messages": '[{"role": "user", "content": "Hi"}]',
        ...     "gen_ai.output.messages": '[{"role": "assistant", "content": "Hello"}]'})
        >>> [run.output for run in assembler.add([root], now=0.0)]
        ['Hello']
    """

    def __init__(
        self,
        limits: AssemblyLimits | None = None,
        *,
        finish_on_root: bool = False,
        keep_trace: Callable[[str], bool] | None = None,
        on_evict: EvictHook | None = None,
        on_finish: FinishHook | None = None,
        finish_early: bool = False,
    ) -> None:
        self.limits = limits or AssemblyLimits()
        self.finish_on_root = finish_on_root
        self.finish_early = finish_early
        self._early: list[Run] = []  # runs of traces finished early, for add() to return
        self._keep = keep_trace
        self._on_evict = on_evict
        self._on_finish = on_finish
        self._traces: OrderedDict[str, _Trace] = OrderedDict()  # oldest first
        # Traces already finished, evicted or refused: their late spans are dropped instead
        # of opening a new trace (bounded: the oldest are forgotten).
        self._closed: OrderedDict[str, str] = OrderedDict()
        self._stats = AssemblyStats()
        self._said: set[str] = set()

    def stats(self) -> AssemblyStats:
        """A snapshot of the counts."""
        stats = self._stats.copy()
        stats.traces_open = len(self._traces)
        return stats

    @property
    def bytes_held(self) -> int:
        """The estimated bytes of the spans held now."""
        return self._stats.bytes_held

    def add(self, spans: Iterable[SpanRecord | LogEvent], now: float | None = None) -> list[Run]:
        """Take ended spans and log events, in the order they came; returns the runs of
        traces they finished (``finish_on_root``)."""
        now = time.monotonic() if now is None else now
        limits = self.limits
        stats = self._stats
        runs: list[Run] = []
        for span in spans:
            if isinstance(span, LogEvent):
                self._add_event(span, now)
                continue
            stats.spans_received += 1
            trace_id = span.trace_id
            trace = self._open(trace_id, now, self._drop_span)
            if trace is None:
                continue
            if span.span_id in trace.spans:
                self._drop_span("duplicate")
                continue
            size = span.size
            trace.spans[span.span_id] = span
            trace.bytes += size
            trace.last = now
            stats.spans_held += 1
            stats.bytes_held += size
            if not trace.looks_like_agent and convention_of(span) is not None:
                trace.looks_like_agent = True
            if len(trace.spans) + trace.event_count > limits.max_spans_per_trace:
                self._evict(trace_id, "max_spans_per_trace")
                continue
            self._within_bytes()
            if self.finish_on_root and span.is_root and trace_id in self._traces:
                if limits.late_span_grace > 0:
                    # Finished after the grace (children ending just after their root are
                    # part of the run); a rooted trace is finished, never evicted, for room.
                    trace.rooted = now
                else:
                    runs.extend(self._finish(trace_id))
        if self._early:
            runs.extend(self._early)
            self._early = []
        return runs

    def collect(self, now: float | None = None) -> list[Run]:
        """Finish the traces quiet for ``quiet_period``; evict those past ``max_trace_age``."""
        now = time.monotonic() if now is None else now
        limits = self.limits
        quiet: list[str] = []
        old: list[str] = []
        for trace_id, trace in self._traces.items():
            if trace.rooted is not None:  # waiting out its grace: finished, never evicted
                if now - trace.rooted >= limits.late_span_grace:
                    quiet.append(trace_id)
            elif now - trace.last >= limits.quiet_period:
                quiet.append(trace_id)
            elif now - trace.first >= limits.max_trace_age:
                old.append(trace_id)
        for trace_id in old:
            self._evict(trace_id, "max_trace_age")
        runs: list[Run] = []
        for trace_id in quiet:
            runs.extend(self._finish(trace_id))
        return runs

    def finish_rooted(self) -> list[Run]:
        """Finish every trace whose root has ended now, without its grace (a flush)."""
        runs: list[Run] = []
        for trace_id in [t for t, trace in self._traces.items() if trace.rooted is not None]:
            runs.extend(self._finish(trace_id))
        return runs

    def drain(self) -> list[Run]:
        """Finish every open trace now (at shutdown: what is held is all there will be)."""
        runs: list[Run] = []
        for trace_id in list(self._traces):
            runs.extend(self._finish(trace_id))
        return runs

    @staticmethod
    def looks_like_agent(span: SpanRecord) -> bool:
        """Whether ``span`` speaks a convention livescore reads (the test :meth:`add` makes
        of a trace, for ``on_evict``'s ``looked_like_an_agent_trace``)."""
        return convention_of(span) is not None

    def open_traces(self) -> list[str]:
        """The ids of the traces held now, oldest first."""
        return list(self._traces)

    def holds(self, trace_id: str) -> bool:
        """Whether the trace ``trace_id`` is held (open) now."""
        return trace_id in self._traces

    def evict(self, trace_id: str, reason: str) -> None:
        """Let an open trace go unfinished (counted under ``reason``, ``on_evict`` told);
        nothing for one not held."""
        if trace_id in self._traces:
            self._evict(trace_id, reason)

    def next_deadline(self) -> float | None:
        """The monotonic time at which :meth:`collect` next has work, ``None`` if never."""
        if not self._traces:
            return None
        limits = self.limits
        return min(
            min(t.last + limits.quiet_period, t.first + limits.max_trace_age)
            if t.rooted is None
            else t.rooted + limits.late_span_grace
            for t in self._traces.values()
        )

    # -- internals ------------------------------------------------------------------------

    def _open(self, trace_id: str, now: float, drop: Callable[[str], None]) -> _Trace | None:
        """The open trace ``trace_id``, opened if new; ``None`` (the item dropped with
        ``drop``) when it is closed or not sampled."""
        trace = self._traces.get(trace_id)
        if trace is not None:
            return trace
        closed = self._closed.get(trace_id)
        if closed is not None:
            # A finished trace stays finished: a late span of it is not a new one.
            drop("late" if closed == "finished" else closed)
            return None
        if self._keep is not None and not self._keep(trace_id):
            self._close(trace_id, "not_sampled")
            drop("not_sampled")
            return None
        trace = self._traces[trace_id] = _Trace(now)
        if len(self._traces) > self.limits.max_traces:
            self._make_room(next(iter(self._traces)), "max_traces")
        return trace

    def _add_event(self, item: LogEvent, now: float) -> None:
        stats = self._stats
        stats.events_received += 1
        trace_id = item.trace_id
        trace = self._open(trace_id, now, self._drop_event)
        if trace is None:
            return
        size = item.size
        trace.events.setdefault(item.span_id, []).append(item.event)
        trace.event_count += 1
        trace.bytes += size
        trace.last = now
        stats.events_held += 1
        stats.bytes_held += size
        if not trace.looks_like_agent and item.event.name.startswith("gen_ai."):
            trace.looks_like_agent = True
        if len(trace.spans) + trace.event_count > self.limits.max_spans_per_trace:
            self._evict(trace_id, "max_spans_per_trace")
            return
        self._within_bytes()

    def _within_bytes(self) -> None:
        while self._stats.bytes_held > self.limits.max_bytes and self._traces:
            self._make_room(next(iter(self._traces)), "max_bytes")

    def _make_room(self, trace_id: str, reason: str) -> None:
        """Let the oldest trace go for room: finished early (``finish_early``) or evicted;
        one whose root has ended (waiting for late children) is finished."""
        if self._traces[trace_id].rooted is not None:
            self._early.extend(self._finish(trace_id))
            return
        if not self.finish_early:
            self._evict(trace_id, reason)
            return
        early = self._stats.traces_finished_early
        early[reason] = early.get(reason, 0) + 1
        if f"early:{reason}" not in self._said:
            self._said.add(f"early:{reason}")
            _log.warning(
                "livescore: a trace was finished before it went quiet, to make room (%s); "
                "its later spans are dropped as late (logged once per reason; see "
                "stats().traces_finished_early)",
                reason,
            )
        self._early.extend(self._finish(trace_id))

    def _drop_span(self, reason: str) -> None:
        dropped = self._stats.spans_dropped
        dropped[reason] = dropped.get(reason, 0) + 1

    def _drop_event(self, reason: str, count: int = 1) -> None:
        dropped = self._stats.events_dropped
        dropped[reason] = dropped.get(reason, 0) + count

    def _close(self, trace_id: str, how: str) -> None:
        self._closed[trace_id] = how
        self._closed.move_to_end(trace_id)
        while len(self._closed) > 4 * self.limits.max_traces:
            self._closed.popitem(last=False)

    def _release(self, trace_id: str) -> _Trace:
        trace = self._traces.pop(trace_id)
        self._stats.spans_held -= len(trace.spans)
        self._stats.events_held -= trace.event_count
        self._stats.bytes_held -= trace.bytes
        return trace

    def _evict(self, trace_id: str, reason: str) -> None:
        trace = self._release(trace_id)
        self._close(trace_id, "evicted_trace")
        stats = self._stats
        stats.traces_evicted[reason] = stats.traces_evicted.get(reason, 0) + 1
        stats.spans_evicted += len(trace.spans)
        stats.events_evicted += trace.event_count
        if reason not in self._said:
            self._said.add(reason)
            _log.warning(
                "livescore: a trace was evicted unfinished (%s; %d span(s)); its runs are not "
                "scored (logged once per reason; see stats().traces_evicted)",
                reason,
                len(trace.spans),
            )
        if self._on_evict is not None:
            try:
                self._on_evict(trace_id, reason, trace.looks_like_agent)
            except Exception:
                _log.exception("livescore: the eviction hook raised")

    def _finish(self, trace_id: str) -> list[Run]:
        trace = self._release(trace_id)
        self._close(trace_id, "finished")
        stats = self._stats
        stats.traces_finished += 1
        stats.spans_finished += len(trace.spans)
        if not self.finish_on_root and _missing_parent(trace.spans):
            self._partial(trace_id)
        self._join_events(trace)
        try:
            runs = [assembled.run for assembled in assemble_trace(trace.spans)]
        except Exception:
            # A bug in assembly costs this trace, counted, never the caller.
            _log.exception("livescore: could not assemble a run from trace %s", trace_id)
            runs = []
        if not runs:
            stats.traces_without_run += 1
        stats.runs_assembled += len(runs)
        if self._on_finish is not None:
            try:
                self._on_finish(list(trace.spans.values()))
            except Exception:
                _log.exception("livescore: the finish hook raised")
        return runs

    def _partial(self, trace_id: str) -> None:
        self._stats.traces_partial += 1
        if "partial" not in self._said:
            self._said.add("partial")
            _log.warning(
                "livescore: trace %s finished with spans whose parent never arrived; its runs "
                "are scored from what did (spans sent to another receiver? put a trace-id "
                "load balancer in front of several receivers; logged once, see "
                "stats().traces_partial)",
                trace_id,
            )

    def _join_events(self, trace: _Trace) -> None:
        """Add each held log event to its span's events (after the span's own)."""
        for span_id, events in trace.events.items():
            span = trace.spans.get(span_id)
            if span is None:
                self._drop_event("no_span", len(events))
                continue
            trace.spans[span_id] = dataclasses.replace(span, events=(*span.events, *events))
            self._stats.events_joined += len(events)
