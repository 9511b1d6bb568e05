"""What the conversation scorers share: the transcript the judge reads, turn numbers on items,
the turns at fault, and the user digest that knowledge retention and completeness both use.

A conversation scorer's items (facts the user gave, the user's intentions, the agent's
replies, claims) each start with the turn they come from: ``"[turn 2] The order is 48213."``.
Code writes that prefix where code makes the items; the judge is asked to where it extracts
them. The turns at fault are read back from it, named in the reason ("turns 2 and 5") and
recorded as ``livescore.conversation.turns_at_fault``.

The user digest (the facts the user gave and what the user asked for, in one judge request)
is the first step of both the knowledge-retention and the completeness scorers, sent as the
same request: when both score one conversation with the same judge, the conversation's
:class:`~livescore.scoring.RunMemo` asks it once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from livescore.otel import attributes as A
from livescore.runs import Conversation, Run, get_assistant_message, get_user_message
from livescore.scorers._claims import Claims, clean_items
from livescore.scorers._prompting import block, data_rule, quote
from livescore.scoring import NotScorable, PromptStep, StepContext

__all__ = (
    "CONVERSATION_TAGS",
    "DIGEST_SYSTEM",
    "Transcript",
    "UserDigest",
    "assistant_replies",
    "conversation_block",
    "conversation_of",
    "digest_prompt",
    "digest_step",
    "item_turn",
    "listing",
    "needs_user_messages",
    "note_truncation",
    "record_turns",
    "render_transcript",
    "reply_items",
    "role_block",
    "strip_turn",
    "turn_item",
    "turns_phrase",
    "user_messages",
)

CONVERSATION_TAGS = (
    "conversation",
    "turn",
    "user",
    "assistant",
    "role",
    "window",
    "reply",
    "replies",
    "facts",
    "fact",
    "intentions",
    "intention",
)
"""The tags of the conversation prompts' data blocks (neutralised in data by ``quote``)."""

REPLY_EXCERPT = 160
"""Characters of a reply in its item (the transcript the judge reads holds it whole)."""

_TURN_PREFIX = re.compile(r"^\s*\[turn (\d+)\]\s*", re.IGNORECASE)


def conversation_of(ctx: StepContext) -> Conversation:
    """The conversation a step scores (a conversation scorer's steps always have one)."""
    conversation = ctx.conversation
    if conversation is None:  # a conversation scorer's pipeline always sets it
        raise NotScorable("this scorer judges conversations, and was given a single run")
    return conversation


def _text(read: Any, run: Run) -> str:
    try:
        text = read(run)
    except TypeError:
        return ""
    return text or ""


def user_messages(conversation: Conversation) -> list[tuple[int, str]]:
    """``(turn, the user's message)`` for every turn with one."""
    found = [(n, _text(get_user_message, run)) for n, run in conversation.turns()]
    return [(n, text) for n, text in found if text.strip()]


def assistant_replies(conversation: Conversation) -> list[tuple[int, str]]:
    """``(turn, the agent's reply)`` for every turn with one."""
    found = [(n, _text(get_assistant_message, run)) for n, run in conversation.turns()]
    return [(n, text) for n, text in found if text.strip()]


def reply_items(ctx: StepContext) -> list[str]:
    """The agent's replies as items, one per turn (``"[turn N] ..."``, cut to
    :data:`REPLY_EXCERPT` characters)."""
    return [
        turn_item(n, text if len(text) <= REPLY_EXCERPT else text[:REPLY_EXCERPT] + "…")
        for n, text in assistant_replies(conversation_of(ctx))
    ]


def turn_item(turn: int, text: str) -> str:
    """An item of turn ``turn``: ``"[turn 3] text"``.

    Example:
        >>> turn_item(3, "The order is 48213.")
        '[turn 3] The order is 48213.'
    """
    return f"[turn {turn}] {text}"


def item_turn(item: str) -> int | None:
    """The turn an item names (``None`` when it names none).

    Example:
        >>> item_turn("[turn 12] Lyon."), item_turn("Lyon.")
        (12, None)
    """
    match = _TURN_PREFIX.match(item)
    return int(match.group(1)) if match else None


def strip_turn(item: str) -> str:
    """The item without its turn prefix.

    Example:
        >>> strip_turn("[turn 2] The parcel left Lyon.")
        'The parcel left Lyon.'
    """
    return _TURN_PREFIX.sub("", item, count=1)


def listing(items: Iterable[str]) -> str:
    """Items for a reason: joined with ``"; "``, one full stop at the end.

    Example:
        >>> listing(["Send it to the office.", "Say when it comes"])
        'Send it to the office; Say when it comes.'
    """
    return "; ".join(item.strip().rstrip(".") for item in items) + "."


def turns_phrase(turns: Iterable[int]) -> str:
    """Turns in words, for a reason.

    Example:
        >>> turns_phrase([5, 2]), turns_phrase([3]), turns_phrase([1, 4, 7])
        ('turns 2 and 5', 'turn 3', 'turns 1, 4 and 7')
    """
    ordered = sorted(set(turns))
    if not ordered:
        return "no turn"
    if len(ordered) == 1:
        return f"turn {ordered[0]}"
    return "turns " + ", ".join(str(t) for t in ordered[:-1]) + f" and {ordered[-1]}"


def record_turns(ctx: StepContext, at_fault: Iterable[int | None], judged: int) -> list[int]:
    """Record the turns at fault (flags and span attributes); returns them, sorted."""
    faults = sorted({t for t in at_fault if t is not None})
    ctx.flags["turns_at_fault"] = faults
    ctx.flags["items_judged"] = judged
    ctx.attributes[A.LIVESCORE_CONVERSATION_ITEMS] = judged
    if faults:
        ctx.attributes[A.LIVESCORE_TURNS_AT_FAULT] = ",".join(str(t) for t in faults)
    return faults


@dataclass(frozen=True, slots=True)
class Transcript:
    """A conversation as the judge reads it.

    Attributes:
        block: The ``<conversation>`` block: one ``<turn index="n">`` per turn, the user's
            message and the agent's reply in it (quoted).
        truncated: Whether messages were cut to fit the limit.
    """

    block: str
    truncated: bool


def render_transcript(
    conversation: Conversation,
    max_chars: int,
    *,
    turns: Sequence[int] | None = None,
    assistant: bool = True,
) -> Transcript:
    """The ``<conversation>`` block of ``conversation`` (the turns ``turns`` only, if given),
    within about ``max_chars``: each message is cut to an equal share of it when the whole
    does not fit (at least 200 characters each).

    Example:
        >>> from livescore import Run
        >>> conversation = Conversation("c", [Run(input="Hi", output="Hello!")])
        >>> print(render_transcript(conversation, 1000).block)
        <conversation>
        <turn index="1">
        <user>Hi</user>
        <assistant>Hello!</assistant>
        </turn>
        </conversation>
    """
    wanted = set(turns) if turns is not None else None
    rows: list[tuple[int, str, str]] = []
    for number, run in conversation.turns():
        if wanted is not None and number not in wanted:
            continue
        rows.append(
            (
                number,
                _text(get_user_message, run),
                _text(get_assistant_message, run) if assistant else "",
            )
        )
    total = sum(len(u) + len(a) for _, u, a in rows)
    cap = None
    if total > max_chars and rows:
        cap = max(200, max_chars // (2 * len(rows)))
    truncated = False

    def cut(text: str) -> str:
        nonlocal truncated
        if cap is not None and len(text) > cap:
            truncated = True
            return text[:cap] + " […]"
        return text

    parts = []
    for number, user, reply in rows:
        lines = [f'<turn index="{number}">', f"<user>{quote(cut(user))}</user>"]
        if assistant:
            lines.append(f"<assistant>{quote(cut(reply))}</assistant>")
        lines.append("</turn>")
        parts.append("\n".join(lines))
    return Transcript("<conversation>\n" + "\n".join(parts) + "\n</conversation>", truncated)


def note_truncation(ctx: StepContext, transcript: Transcript) -> None:
    """Record that the transcript the judge read was cut."""
    if transcript.truncated:
        ctx.flags["transcript_truncated"] = True


# -- the user digest (knowledge retention and completeness) -------------------------------------


class UserDigest(BaseModel):
    """What the user said across a conversation: ``facts``, the facts the user gave about
    themselves, their situation or their request (names, numbers, dates, preferences,
    constraints); ``intentions``, each thing the user asked the assistant to do, find out
    or answer. Every item starts with the turn it comes from, in brackets, as in
    ``"[turn 2] The user's order number is 48213."``; blanks are dropped."""

    facts: Claims
    intentions: Claims


_DIGEST_TAGS = ("conversation", "turn", "user")

DIGEST_SYSTEM = f"""\
You read the user's side of a conversation between a user and an AI assistant, and list \
two things, for a review of the assistant's memory and follow-through.

1. "facts": every fact the user gave that the assistant may need later: names, numbers \
(order numbers, amounts, dates), places, preferences, constraints, and what the user \
already did or said they cannot do. One fact per item, standing alone (no "it", "that").
2. "intentions": everything the user asked the assistant to do, find out or answer \
(questions count, follow-up requests count; "thanks" and greetings do not). One per item, \
standing alone.

Start every item with the number of the turn it comes from, in brackets: "[turn 2] ...". \
Keep the user's own wording and precision. An empty list is fine when there is nothing of \
a kind.

{data_rule(_DIGEST_TAGS)}

Answer with JSON only: {{"facts": ["[turn 1] ..."], "intentions": ["[turn 1] ..."]}}"""


def digest_prompt(conversation: Conversation, max_chars: int) -> str:
    """The user-digest request for ``conversation`` (the user's messages only)."""
    transcript = render_transcript(conversation, max_chars, assistant=False)
    return (
        "List the facts the user gave and everything the user asked for, in the user's "
        "messages of the conversation below, each starting with its turn.\n\n"
        f"{transcript.block}\n\n"
        'Answer with JSON only: {"facts": [...], "intentions": [...]}.'
    )


def _numbered(items: list[str]) -> list[str]:
    return clean_items(items)


def needs_user_messages(nothing: str) -> Callable[[StepContext], bool]:
    """A check before any judge call: a conversation without user messages is not
    scorable (``nothing`` says why)."""

    def no_user_text(ctx: StepContext) -> bool:
        if not user_messages(conversation_of(ctx)):
            raise NotScorable(nothing)
        return False

    return no_user_text


def digest_step(
    key: str, max_chars: int, *, skip_if: Callable[[StepContext], bool]
) -> PromptStep[UserDigest]:
    """The digest as a scorer's preprocess step, its items under ``key`` (``"facts"`` or
    ``"intentions"``); ``skip_if`` runs before the call (see :func:`needs_user_messages`)."""

    def parse(answer: UserDigest, ctx: StepContext) -> dict[str, Any]:
        # The request is shared; each scorer keeps the part it judges.
        return {key: _numbered(getattr(answer, key))}

    return PromptStep(
        description="List the facts the user gave and what the user asked for",
        output_schema=UserDigest,
        system=DIGEST_SYSTEM,
        create_prompt=lambda ctx: digest_prompt(conversation_of(ctx), max_chars),
        skip_if=skip_if,
        parse=parse,
    )


def conversation_block(ctx: StepContext, max_chars: int) -> str:
    """The whole conversation's ``<conversation>`` block, rendered once per score."""
    rendered: Transcript | None = ctx.state.get("transcript")
    if rendered is None:
        rendered = ctx.state["transcript"] = render_transcript(conversation_of(ctx), max_chars)
        note_truncation(ctx, rendered)
    return rendered.block


def role_block(role: str) -> str:
    """The ``<role>`` block."""
    return block("role", role)
