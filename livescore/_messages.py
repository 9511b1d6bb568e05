"""Reading text out of messages: a string, a role/content dict, a LangChain-style message
object, an OpenAI-style list of content parts, or a list of messages.

The readers of :mod:`livescore.runs` (``get_user_message``…), the scorer pipeline, the
scorers and the reports read messages through these; nothing here reads a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ("find_message", "message_text")


def message_text(value: Any) -> str:
    """The text of a message, a list of content parts, or a plain value.

    Accepts strings, role/content dicts, LangChain-style message objects (by duck typing: a
    ``content`` attribute) and OpenAI-style content part lists (``{"type": "text", ...}``).
    ``None`` and mappings without text give ``""``.

    Raises:
        TypeError: ``value`` is not text-like (a number, bytes, an arbitrary object).

    Example:
        >>> message_text([{"type": "text", "text": "Hello"}, {"role": "user", "content": "!"}])
        'Hello\\n!'
    """
    text = _text_of(value)
    return "" if text is None else text


def _text_of(value: Any) -> str | None:
    """The text in ``value``; ``None`` when it holds nothing text-like (not the same as "")."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if "content" in value:
            return message_text(value["content"])
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            return str(value["text"])
        return None
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        if not value:
            return ""
        parts = [_text_of(part) for part in value]
        found = [p for p in parts if p is not None]
        return "\n".join(p for p in found if p) if found else None
    content = getattr(value, "content", None)
    if content is not None:
        return message_text(content)
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    raise TypeError(f"cannot read text from {article} {name}")


# LangChain's message types (a message's "type"); a content part's "type" ("text",
# "image_url"…) does not make a list of parts a list of messages.
_MESSAGE_TYPES = frozenset(
    {"human", "ai", "system", "tool", "function", "chat", "user", "assistant", "developer"}
)


def _role(message: Any) -> str | None:
    if isinstance(message, Mapping):
        role = message.get("role")
        kind = message.get("type")
    else:
        role = getattr(message, "role", None)
        kind = getattr(message, "type", None)
    if not role:
        role = kind if isinstance(kind, str) and kind in _MESSAGE_TYPES else None
    if role is None:
        return None
    return {"human": "user", "ai": "assistant"}.get(str(role), str(role))


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes | bytearray)
        and any(_role(m) is not None for m in value)
    )


def find_message(value: Any, role: str) -> str | None:
    """The text of the last message of ``role`` in ``value`` (a message list, or a mapping
    with ``messages``), or ``value``'s own text; ``None`` when it holds no text at all.

    Example:
        >>> find_message([{"role": "user", "content": "Hi"}, {"role": "ai", "content": "Yo"}],
        ...              "user")
        'Hi'
        >>> find_message({"topic": "bears"}, "user") is None
        True
    """
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if _is_message_list(value):
        for message in reversed(value):
            if _role(message) == role:
                return message_text(message)
        return None
    return _text_of(value)
