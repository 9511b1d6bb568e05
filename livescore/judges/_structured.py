"""Structured output: how an answer is asked for, which rung a server accepts, how it is read.

The ladder goes from the strongest guarantee to the weakest: strict ``json_schema``, then
``json_object`` with the schema spelled out in the prompt, then plain prompting. What a
server accepted is remembered per base URL and model, for every judge in the process. The
answer is always parsed and validated locally, whatever the rung.

Nothing here does I/O or imports an HTTP client.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

from livescore._redaction import split_credentials
from livescore.judges._protocol import ModelT

__all__ = (
    "LADDER",
    "Answer",
    "Message",
    "SchemaForms",
    "StructuredOutputMode",
    "describe_problem",
    "forget_server",
    "next_rung",
    "parse_object",
    "read_answer",
    "rejects_format",
    "remember_mode",
    "remembered_mode",
    "schema_forms",
    "structured_request",
)

StructuredOutputMode = Literal["json_schema", "json_object", "prompt"]
"""How a structured answer is requested, from the strongest guarantee to the weakest."""

LADDER: tuple[StructuredOutputMode, ...] = ("json_schema", "json_object", "prompt")

Message = dict[str, str]
"""One chat message: ``{"role": ..., "content": ...}``."""

_MAX_PROBLEM = 1500

# What each server accepted, keyed by base URL and model (a gateway routes models to different
# backends): shared by every judge in the process, so a llama.cpp server that refused
# ``json_schema`` once is not asked again by the next scorer.
_SERVER_MODES: dict[tuple[str, str], StructuredOutputMode] = {}
_SERVER_MODES_LOCK = threading.Lock()

_OTHER_PARAMETER = re.compile(
    r"temperature|max_tokens|max_completion_tokens|context length|context_length|"
    r"maximum context|model|messages",
    re.IGNORECASE,
)
_UNSUPPORTED_FORMAT = re.compile(r"response_format|json_schema|schema|structured", re.IGNORECASE)


def forget_server(base_url: str) -> None:
    """Forget which structured-output rung the server at ``base_url`` accepted, and whether
    it gives logprobs
    (:meth:`OpenAIJudge.forget_server <livescore.judges.OpenAIJudge.forget_server>`).

    Example:
        >>> forget_server("http://127.0.0.1:8080/v1")
    """
    from livescore.judges._classify import forget_logprobs

    url = split_credentials(base_url.rstrip("/"))[0]
    with _SERVER_MODES_LOCK:
        for key in [k for k in _SERVER_MODES if k[0] == url]:
            del _SERVER_MODES[key]
    forget_logprobs(url)


def remembered_mode(base_url: str, model: str) -> StructuredOutputMode:
    """The rung to start from: what this server accepted before, else the strongest."""
    with _SERVER_MODES_LOCK:
        return _SERVER_MODES.get((base_url, model), "json_schema")


def remember_mode(base_url: str, model: str, mode: StructuredOutputMode) -> None:
    with _SERVER_MODES_LOCK:
        _SERVER_MODES[(base_url, model)] = mode


def next_rung(mode: StructuredOutputMode) -> StructuredOutputMode | None:
    index = LADDER.index(mode)
    return LADDER[index + 1] if index + 1 < len(LADDER) else None


def rejects_format(status: int, excerpt: str) -> bool:
    """Whether an HTTP error means "this ``response_format`` is not supported here".

    400/422 are how most servers refuse an unknown ``response_format``, often tersely; a 400
    that names another parameter is about that parameter. llama.cpp answers 500, which only
    counts when it names the format (otherwise it is a server error, and retried).
    """
    names_format = bool(_UNSUPPORTED_FORMAT.search(excerpt))
    if status in (400, 422):
        return names_format or not _OTHER_PARAMETER.search(excerpt)
    return status >= 500 and names_format


# -- schema forms ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaForms:
    """Everything a request needs of one answer schema, computed once per model class.

    Building a JSON schema from a pydantic model, making it strict and serialising it cost
    a noticeable share of a score's CPU, which a live worker shares with the agent.
    """

    name: str
    json_schema: dict[str, Any]
    key: str  # canonical JSON text, for the request cache
    compact: str  # for the prompt of the weaker rungs
    strict_schema: dict[str, Any]
    strict: bool


@functools.lru_cache(maxsize=256)
def schema_forms(schema: type[BaseModel]) -> SchemaForms:
    json_schema = schema.model_json_schema()
    strict_schema, strict = _strict_schema(json_schema)
    return SchemaForms(
        name=_schema_name(schema),
        json_schema=json_schema,
        key=json.dumps(json_schema, sort_keys=True),
        compact=json.dumps(json_schema, separators=(",", ":")),
        strict_schema=strict_schema,
        strict=strict,
    )


def structured_request(
    messages: list[Message], mode: StructuredOutputMode, forms: SchemaForms
) -> tuple[list[Message], dict[str, Any] | None]:
    """The messages and ``response_format`` that ask for ``forms`` on rung ``mode``."""
    if mode == "json_schema":
        return messages, {
            "type": "json_schema",
            "json_schema": {
                "name": forms.name,
                "schema": forms.strict_schema,
                "strict": forms.strict,
            },
        }
    # Weaker rungs: the schema is spelled out in the system prompt, since the server does
    # not enforce it (llama.cpp's ``json_object`` does take a ``schema``, so send it too).
    instructions = (
        "\n\nAnswer with one JSON object and nothing else (no prose, no code fences). "
        f"It must match this JSON Schema:\n{forms.compact}"
    )
    system, *rest = messages
    with_schema = [{"role": "system", "content": system["content"] + instructions}, *rest]
    if mode == "json_object":
        return with_schema, {"type": "json_object", "schema": forms.json_schema}
    return with_schema, None


def _schema_name(schema: type[BaseModel]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]
    return name or "answer"


def _strict_schema(json_schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema in OpenAI's strict form; ``False`` when it cannot be made strict.

    Strict mode wants every object closed (``additionalProperties: false``), every property
    required (an optional field is then sent as ``null``) and no ``default`` keywords;
    pydantic still validates what comes back against the original model.
    """
    result = copy.deepcopy(json_schema)
    strict = True

    def visit(node: Any) -> None:
        nonlocal strict
        if isinstance(node, dict):
            if node.get("type") == "object" or "properties" in node:
                extra = node.get("additionalProperties")
                if extra not in (None, False):
                    strict = False  # a dict[str, X] cannot be strict
                if "properties" in node:
                    node["additionalProperties"] = False
                    node["required"] = list(node["properties"])
                elif extra is None:
                    strict = False
            if "$ref" in node and len(node) > 1:
                for key in [k for k in node if k != "$ref"]:
                    del node[key]  # strict mode refuses siblings of $ref
            node.pop("default", None)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(result)
    return (result if strict else json_schema), strict


# -- reading answers ---------------------------------------------------------------------------


class Answer(NamedTuple):
    """The first choice of a chat completion: its text, why it stopped, a refusal."""

    text: str
    finish_reason: str | None = None
    refusal: str | None = None


def read_answer(completion: Mapping[str, Any]) -> Answer:
    """The first choice's text from a chat completion body (an empty answer if it has none)."""
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return Answer("")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        return Answer("")
    content, refusal, finish = (
        message.get("content"),
        message.get("refusal"),
        choice.get("finish_reason"),
    )
    return Answer(
        content if isinstance(content, str) else "",
        finish if isinstance(finish, str) else None,
        refusal if isinstance(refusal, str) else None,
    )


def _strip_fences(text: str) -> str:
    # Reasoning models served locally (DeepSeek-R1, Qwen3) put their thinking before the JSON.
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL).strip()
    match = re.match(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```\s*$", text, re.DOTALL)
    if match:
        return match.group(1).strip()
    return text


def parse_object(answer: Answer, schema: type[ModelT]) -> ModelT:
    """The answer's JSON object, validated against ``schema``.

    Raises:
        ValueError: The answer is empty, refused, not JSON, or breaks the schema
            (pydantic's ``ValidationError`` is a ``ValueError``).
    """
    text = answer.text
    if not text.strip():
        if answer.refusal:
            raise ValueError(f"the model refused to answer: {answer.refusal}")
        raise ValueError("the answer was empty")
    body = _strip_fences(text)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        # Some models wrap the object in prose: take the outermost braces as a last resort.
        start, end = body.find("{"), body.rfind("}")
        data = None
        if 0 <= start < end:
            with contextlib.suppress(json.JSONDecodeError):
                data = json.loads(body[start : end + 1])
        if data is None:
            cut = " (the answer was cut at max_tokens)" if answer.finish_reason == "length" else ""
            raise ValueError(f"the answer is not valid JSON{cut}: {exc}") from None
    return schema.model_validate(data)


def describe_problem(exc: ValueError) -> str:
    """What was wrong with an answer, in a few lines a model (and a person) can act on."""
    if isinstance(exc, ValidationError):
        lines = []
        for error in exc.errors()[:10]:
            where = ".".join(str(p) for p in error["loc"]) or "(root)"
            lines.append(f"{where}: {error['msg']}")
        text = "the answer does not match the schema: " + "; ".join(lines)
    else:
        text = str(exc)
    return text[:_MAX_PROBLEM]
