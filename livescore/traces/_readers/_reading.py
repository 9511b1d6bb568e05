"""The contract every convention reader keeps: a span in, a :class:`SpanReading` out.

A reader knows one way instrumentations describe agents (the OpenTelemetry GenAI
conventions, OpenInference, OpenLLMetry's ``traceloop.*`` attributes, the Vercel AI SDK's
``ai.*``…). It says whether a span speaks its convention (:attr:`Reader.speaks`, cheap: the
receiver asks it of every span) and reads what the span says into plain values
(:attr:`Reader.read`, once per span when its trace is assembled). Every value read carries
where it was found (:class:`Sourced`), so ``livescore traces inspect`` can say which span and
attribute each field of a run came from, and how trustworthy it is (:data:`Quality`), so
the assembler can prefer the user's own words and the whole answer over a framework's
built prompt, a Python repr or a value the instrumentation cut short.

Readers never raise on odd values: a value of the wrong type reads as absent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from livescore.runs import ToolCall
from livescore.traces._span import SpanRecord

__all__ = ("Message", "Quality", "Reader", "Sourced", "SpanKind", "SpanReading")

SpanKind = Literal["agent", "model", "tool", "retriever"]
"""What a span is: an agent run, a model call, a tool call, a retrieval."""

Message = dict[str, Any]
"""A chat message as a :class:`~livescore.Run` holds it: ``{"role", "content"}`` (plus
``tool_calls`` / ``tool_call_id`` where they apply)."""

Quality = Literal["whole", "built", "repr", "truncated"]
"""How far a value can be trusted as the run's text, best first:

- ``whole``: the user's own words, the whole answer;
- ``built``: text a framework built around them (a prompt template, an agent's configuration);
- ``repr``: a programming language's rendering of an object (``StopEvent(result=…)``);
- ``truncated``: cut short by the instrumentation.

The assembler takes the best value any span offers, and marks a run whose text is only
available truncated.
"""

_RANK: dict[str, int] = {"whole": 0, "built": 1, "repr": 2, "truncated": 3}

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Sourced(Generic[T]):
    """A value read from a span, with where it was found.

    Attributes:
        value: What was read: a text, a list of messages, an id.
        source: The attribute or event it came from (``input.value``,
            ``event gen_ai.choice``, ``llm.output_messages.0.message.content``).
        quality: How far it can be trusted as the run's text (:data:`Quality`).

    Example:
        >>> Sourced("Hi", "input.value").better_than(Sourced("Hi", "x", quality="repr"))
        True
    """

    value: T
    source: str
    quality: Quality = "whole"

    def better_than(self, other: Sourced[Any] | None) -> bool:
        """Whether this value is to be preferred to ``other`` (``None`` always loses)."""
        return other is None or _RANK[self.quality] < _RANK[other.quality]


@dataclass(slots=True)
class SpanReading:
    """What one span says, in plain values, whichever convention it speaks.

    Attributes:
        convention: The reader's name (``genai``, ``openinference``…); ``unknown`` when no
            reader speaks the span.
        kind: What the span is, or ``None`` (a plain span: an app's own, a framework's step).
        input: What the span was asked: the user's text, or a list of messages (a model
            span's whole request; an agent span's user turn).
        output: What it answered: a text, or a list of messages (a model span's response,
            with the tool calls it asked for).
        tool_call: The call a tool span made (name, id, arguments, result, error); its
            source names where the result was read.
        documents: The documents a retriever span returned.
        conversation_id: The conversation (session, thread) the span belongs to.
        agent_name: The agent's name, for an agent span.
        model: The model a model span called.
        content_setting: For a span whose instrumentation captured no content: the setting
            that turns content capture on (``TRACELOOP_TRACE_CONTENT=true``), for the skip
            reason.
    """

    convention: str
    kind: SpanKind | None = None
    input: Sourced[Any] | None = None
    output: Sourced[Any] | None = None
    tool_call: Sourced[ToolCall] | None = None
    documents: list[str] = field(default_factory=list)
    conversation_id: Sourced[str] | None = None
    agent_name: str | None = None
    model: str | None = None
    content_setting: str | None = None


@dataclass(frozen=True, slots=True)
class Reader:
    """One convention: its name, how to tell its spans, how to read one.

    Attributes:
        name: Short and stable (it is written into run metadata): ``genai``, ``traceloop``.
        speaks: Whether a span speaks this convention. Cheap (a few attribute lookups):
            the receiver asks it of every span it holds.
        read: What the span says. Called only on spans :attr:`speaks` accepted.
        reads: The attribute names (or their prefixes) the reader looks at: an attribute
            outside them that holds text is named in a skip reason, as content livescore
            does not read.
    """

    name: str
    speaks: Callable[[SpanRecord], bool]
    read: Callable[[SpanRecord], SpanReading]
    reads: tuple[str, ...] = ()
