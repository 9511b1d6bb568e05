"""The framework-neutral record of one agent run.

A :class:`Run` is what every scorer sees: the user's input, the agent's output, optional ground
truth, and the steps the agent took (model turns, tool calls with their results, retrievals).
Integrations (LangChain, plain code) build it; the live dispatcher may ship it to another
process, so it is a plain, JSON-safe record (:meth:`Run.to_dict` / :meth:`Run.from_dict`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ("Run", "RunLike", "Step", "StepKind", "ToolCall", "coerce_run")

StepKind = Literal["model", "tool", "retriever"]
"""What an agent step was: a model turn, a tool call, or a document retrieval."""


@dataclass(slots=True)
class ToolCall:
    """One tool invocation inside a run.

    Attributes:
        name: The tool's name.
        call_id: The id the model gave the call (``tool_call_id``), when known.
        args: The arguments the tool was called with (usually a dict).
        result: What the tool returned; ``None`` when it failed.
        error: The error message when the tool raised; ``None`` on success.
    """

    name: str
    call_id: str | None = None
    args: Any = None
    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the call succeeded (only successful calls count as evidence)."""
        return self.error is None


@dataclass(slots=True)
class Step:
    """One step of an agent run.

    Attributes:
        kind: ``"model"`` for a model turn, ``"tool"`` for a tool call, ``"retriever"`` for a
            document retrieval.
        name: The model, tool or retriever name.
        index: Position of the step in the run, from 0.
        input: What the step received (messages for a model turn, the query for a retriever).
        output: What the step produced (the assistant message for a model turn).
        tool_call: For ``kind == "tool"``: the call, with its result or error.
        tool_calls_requested: For ``kind == "model"``: the tool calls the model asked for.
        documents: For ``kind == "retriever"``: the retrieved documents' text.
        error: The error message when the step failed.
        span_id: Hex id of the span that represents this step, when one is known.
    """

    kind: StepKind
    name: str = ""
    index: int = 0
    input: Any = None
    output: Any = None
    tool_call: ToolCall | None = None
    tool_calls_requested: list[ToolCall] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    error: str | None = None
    span_id: str | None = None


@dataclass(slots=True)
class Run:
    """One agent run as scorers see it.

    ``input`` and ``output`` may be plain strings or lists of chat messages (role/content
    dicts or LangChain-style message objects); :func:`livescore.runs.get_user_message` and
    :func:`livescore.runs.get_assistant_message` read the text out of either form.

    Attributes:
        input: What the user asked.
        output: What the agent answered.
        ground_truth: The expected answer or reference material, when known.
        run_id: A unique id; generated when not given.
        trace_id: Hex (32 chars) OpenTelemetry trace id of the run, when it was traced.
        span_id: Hex (16 chars) id of the span that represents the run.
        trace_flags: The W3C trace flags of that span (1 = sampled).
        name: The agent's name, when known.
        steps: The agent's steps, in order.
        error: The error message when the run itself failed.
        metadata: Free-form, JSON-safe extras (tags, user ids, the integration's name).
        response_id: The id of the model response that gave the answer
            (``gen_ai.response.id``, such as ``"chatcmpl-123"``), when the run's span or its
            final model call carries one; its scores' evaluation events name it.

    Example:
        >>> run = Run(input="What is 2+2?", output="4", ground_truth="4")
        >>> run.final_step is None
        True
    """

    input: Any = None
    output: Any = None
    ground_truth: Any = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    trace_id: str | None = None
    span_id: str | None = None
    trace_flags: int = 1
    name: str | None = None
    steps: list[Step] = field(default_factory=list)
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    response_id: str | None = None

    @property
    def final_step(self) -> Step | None:
        """The last model turn: the step a run-level score judges. ``None`` if there is none."""
        for step in reversed(self.steps):
            if step.kind == "model":
                return step
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe copy (non-JSON values become their ``str``), for shipping elsewhere."""
        return {
            "input": _json_safe(self.input),
            "output": _json_safe(self.output),
            "ground_truth": _json_safe(self.ground_truth),
            "run_id": self.run_id,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "trace_flags": self.trace_flags,
            "name": self.name,
            "steps": [_step_to_dict(s) for s in self.steps],
            "error": self.error,
            "metadata": _json_safe(self.metadata),
            "response_id": self.response_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Run:
        """Rebuild a run from :meth:`to_dict` output (or any mapping with the same keys)."""
        kwargs: dict[str, Any] = {
            k: data[k] for k in _RUN_KEYS - {"steps"} if k in data and data[k] is not None
        }
        if "run_id" in kwargs:
            kwargs["run_id"] = str(kwargs["run_id"])
        if not isinstance(kwargs.get("response_id", ""), str):
            del kwargs["response_id"]  # an id is text; anything else is not one
        kwargs["steps"] = [_step_from_dict(s) for s in data.get("steps") or ()]
        return cls(**kwargs)


RunLike = Run | Mapping[str, Any]
"""A :class:`Run` or a mapping with ``input``, ``output``, ``ground_truth``, ``run_id``…"""


def coerce_run(run: RunLike) -> Run:
    """Return ``run`` as a :class:`Run`, accepting the mapping form too.

    Raises:
        TypeError: When ``run`` is neither a ``Run`` nor a mapping.
    """
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        unknown = set(run) - _RUN_KEYS
        if unknown:
            raise TypeError(
                f"unknown run field(s) {sorted(unknown)}; expected some of {sorted(_RUN_KEYS)}"
            )
        return Run.from_dict(run)
    raise TypeError(
        f"a run must be a livescore.Run or a mapping with 'input' and 'output', "
        f"not {type(run).__name__}"
    )


_RUN_KEYS = frozenset(
    {
        "input",
        "output",
        "ground_truth",
        "run_id",
        "trace_id",
        "span_id",
        "trace_flags",
        "name",
        "steps",
        "error",
        "metadata",
        "response_id",
    }
)


def _json_safe(value: Any) -> Any:
    """Convert ``value`` to plain JSON types; message objects become role/content dicts."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return [_json_safe(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return value.decode("utf-8", errors="replace")
    content = getattr(value, "content", None)
    if content is not None:  # a LangChain-style message, read by duck typing
        return {"role": _message_role(value), "content": _json_safe(content)}
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def _message_role(message: Any) -> str:
    role = getattr(message, "role", None)
    if isinstance(role, str):
        return role
    kind = getattr(message, "type", None)
    return {"human": "user", "ai": "assistant"}.get(str(kind), str(kind or "unknown"))


def _tool_call_to_dict(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "call_id": call.call_id,
        "args": _json_safe(call.args),
        "result": _json_safe(call.result),
        "error": call.error,
    }


def _tool_call_from_dict(data: Mapping[str, Any]) -> ToolCall:
    return ToolCall(
        name=str(data.get("name", "")),
        call_id=data.get("call_id"),
        args=data.get("args"),
        result=data.get("result"),
        error=data.get("error"),
    )


def _step_to_dict(step: Step) -> dict[str, Any]:
    return {
        "kind": step.kind,
        "name": step.name,
        "index": step.index,
        "input": _json_safe(step.input),
        "output": _json_safe(step.output),
        "tool_call": _tool_call_to_dict(step.tool_call) if step.tool_call else None,
        "tool_calls_requested": [_tool_call_to_dict(c) for c in step.tool_calls_requested],
        "documents": list(step.documents),
        "error": step.error,
        "span_id": step.span_id,
    }


def _step_from_dict(data: Mapping[str, Any]) -> Step:
    kind = data.get("kind", "model")
    if kind not in ("model", "tool", "retriever"):
        raise ValueError(f"unknown step kind {kind!r}; expected model, tool or retriever")
    tool_call = data.get("tool_call")
    return Step(
        kind=kind,
        name=str(data.get("name", "")),
        index=int(data.get("index", 0)),
        input=data.get("input"),
        output=data.get("output"),
        tool_call=_tool_call_from_dict(tool_call) if tool_call else None,
        tool_calls_requested=[
            _tool_call_from_dict(c) for c in data.get("tool_calls_requested") or ()
        ],
        documents=[str(d) for d in data.get("documents") or ()],
        error=data.get("error"),
        span_id=data.get("span_id"),
    )
