"""What the conversation scorers share: the transcript, the turn each item names and the
turns at fault, the user digest, and the pieces of their prompts and reasons."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, create_model

from livescore.otel import attributes as A
from livescore.runs import Conversation, Run, get_assistant_message, get_user_message
from livescore.scorers._claims import Claims, clean_items
from livescore.scorers._judged import fmt
from livescore.scorers._prompting import (
    CONVERSATION_TAGS,
    data_rule,
    item_blocks,
    one_per_item,
    quote,
)
from livescore.scorers._verdicts import StatementVerdict
from livescore.scoring import NotScorable, PromptStep, StepContext

if TYPE_CHECKING:  # _judge_spec imports this module
    from livescore.scorers._judge_spec import JudgePrompts, Shown

__all__ = (
    "answer_schemas",
    "because",
    "clip",
    "conversation_block",
    "conversation_of",
    "digest_step",
    "every",
    "example",
    "faults",
    "item_turn",
    "judge_prompts",
    "listing",
    "message",
    "messages",
    "needs_user_messages",
    "record_turns",
    "reply_items",
    "strip_turn",
    "turn_attributes",
    "turn_block",
    "turn_item",
    "turns_phrase",
)

REPLY_EXCERPT = 160
"""Characters of a reply in its item (the transcript the judge reads holds it whole)."""

_TURN_PREFIX = re.compile(r"^\s*\[turn (\d+)\]\s*", re.IGNORECASE)


def conversation_of(ctx: StepContext) -> Conversation:
    """The conversation a step scores (a conversation scorer's steps always have one)."""
    conversation = ctx.conversation
    if conversation is None:
        raise NotScorable("this scorer judges conversations, and was given a single run")
    return conversation


def message(run: Run, role: Literal["user", "assistant"]) -> str:
    """The user's message or the agent's reply in ``run`` (``""`` where it has none)."""
    read = get_user_message if role == "user" else get_assistant_message
    try:
        return read(run) or ""
    except TypeError:
        return ""


def messages(
    conversation: Conversation, role: Literal["user", "assistant"]
) -> list[tuple[int, str]]:
    """``(turn, the user's message or the agent's reply)`` for every turn with one."""
    found = [(n, message(run, role)) for n, run in conversation.turns()]
    return [(n, text) for n, text in found if text.strip()]


def clip(text: str, cap: int, mark: str = " […]") -> str:
    """``text`` cut to ``cap`` characters, ``mark`` after a cut.

    Example:
        >>> clip("The parcel left Lyon.", 10), clip("Lyon.", 10)
        ('The parcel […]', 'Lyon.')
    """
    return text if len(text) <= cap else text[:cap] + mark


def reply_items(ctx: StepContext) -> list[str]:
    """The agent's replies as items, ``"[turn N] ..."`` cut to :data:`REPLY_EXCERPT`."""
    return [
        turn_item(n, clip(text, REPLY_EXCERPT, "…"))
        for n, text in messages(conversation_of(ctx), "assistant")
    ]


def turn_item(turn: int, text: str) -> str:
    """An item of turn ``turn``: ``"[turn 3] text"``."""
    return f"[turn {turn}] {text}"


def item_turn(item: str) -> int | None:
    """The turn an item names (``None`` when it names none).

    Example:
        >>> item = turn_item(12, "Lyon.")
        >>> item, item_turn(item), strip_turn(item), item_turn("Lyon.")
        ('[turn 12] Lyon.', 12, 'Lyon.', None)
    """
    match = _TURN_PREFIX.match(item)
    return int(match.group(1)) if match else None


def strip_turn(item: str) -> str:
    """The item without its turn prefix."""
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


def render_transcript(
    conversation: Conversation, max_chars: int, *, assistant: bool = True
) -> tuple[str, bool]:
    """The ``<conversation>`` block of ``conversation`` (the user's messages only, without
    ``assistant``) within about ``max_chars``, and whether messages were cut to fit: each
    to an equal share when the whole does not fit (at least 200 characters each).

    Example:
        >>> from livescore import Run
        >>> conversation = Conversation("c", [Run(input="Hi", output="Hello!")])
        >>> print(render_transcript(conversation, 1000)[0])
        <conversation>
        <turn index="1">
        <user>Hi</user>
        <assistant>Hello!</assistant>
        </turn>
        </conversation>
    """
    rows = [
        (number, message(run, "user"), message(run, "assistant") if assistant else "")
        for number, run in conversation.turns()
    ]
    total = sum(len(user) + len(reply) for _, user, reply in rows)
    cap = max(200, max_chars // (2 * len(rows))) if rows and total > max_chars else total
    turns = "\n".join(
        turn_block(number, quote(clip(user, cap)), quote(clip(reply, cap)) if assistant else None)
        for number, user, reply in rows
    )
    truncated = any(len(text) > cap for _, user, reply in rows for text in (user, reply))
    return f"<conversation>\n{turns}\n</conversation>", truncated


def turn_block(number: int, user: str, reply: str | None = None) -> str:
    """One ``<turn>`` of a transcript, its messages quoted (the user's only, without ``reply``)."""
    lines = [f'<turn index="{number}">', f"<user>{user}</user>"]
    if reply is not None:
        lines.append(f"<assistant>{reply}</assistant>")
    return "\n".join([*lines, "</turn>"])


# -- the user digest (knowledge retention and completeness) -------------------------------------


class UserDigest(BaseModel):
    """What the user said across a conversation: ``facts``, the facts the user gave about
    themselves, their situation or their request (names, numbers, dates, preferences,
    constraints); ``intentions``, each thing the user asked the assistant to do, find out
    or answer. Every item starts with the turn it comes from, in brackets, as in
    ``"[turn 2] The user's order number is 48213."``; blanks are dropped."""

    facts: Claims
    intentions: Claims


_DIGEST_SYSTEM = f"""\
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

{data_rule(("conversation", "turn", "user"))}

Answer with JSON only: {{"facts": ["[turn 1] ..."], "intentions": ["[turn 1] ..."]}}"""


def needs_user_messages(nothing: str) -> Callable[[StepContext], bool]:
    """A check before any call: no user message, not scorable (``nothing`` says why)."""

    def no_user_text(ctx: StepContext) -> bool:
        if not messages(conversation_of(ctx), "user"):
            raise NotScorable(nothing)
        return False

    return no_user_text


def digest_step(
    key: str, max_chars: int, *, skip_if: Callable[[StepContext], bool]
) -> PromptStep[UserDigest]:
    """The digest as a scorer's preprocess step, its items under ``key`` (``"facts"`` or
    ``"intentions"``); ``skip_if`` runs before the call (see :func:`needs_user_messages`)."""

    def prompt(ctx: StepContext) -> str:
        transcript, _ = render_transcript(conversation_of(ctx), max_chars, assistant=False)
        return (
            "List the facts the user gave and everything the user asked for, in the user's "
            f"messages of the conversation below, each starting with its turn.\n\n{transcript}"
            '\n\nAnswer with JSON only: {"facts": [...], "intentions": [...]}.'
        )

    def parse(answer: UserDigest, ctx: StepContext) -> dict[str, Any]:
        # The request is shared; each scorer keeps the part it judges.
        return {key: clean_items(getattr(answer, key))}

    return PromptStep(
        description="List the facts the user gave and what the user asked for",
        output_schema=UserDigest,
        system=_DIGEST_SYSTEM,
        create_prompt=prompt,
        skip_if=skip_if,
        parse=parse,
    )


def conversation_block(ctx: StepContext, max_chars: int) -> str:
    """The whole conversation's ``<conversation>`` block, rendered once per score."""
    rendered: str | None = ctx.state.get("transcript")
    if rendered is None:
        rendered, truncated = render_transcript(conversation_of(ctx), max_chars)
        ctx.state["transcript"] = rendered
        if truncated:
            ctx.flags["transcript_truncated"] = True
    return rendered


# -- what the judge scorers' prompts and reasons share -------------------------------------------

VERDICT_DATA_RULE = data_rule((*CONVERSATION_TAGS, "verdicts", "verdict"))
"""The data rule of the conversation judges' system prompts (the hallucination one aside)."""


def answer_schemas(
    name: str,
    doc: str,
    spellings: Mapping[str, tuple[str, ...]],
    one_call: str,
    described: str,
    *,
    listed: str = "",
    turn: bool = False,
) -> tuple[type[StatementVerdict], type[BaseModel], type[BaseModel]]:
    """A ``"yes"`` / ``"no"`` :class:`StatementVerdict` (``name``, ``doc``, ``spellings``, a
    ``turn`` where ``turn``), its verdict answer (``<name>s``) and the one-call answer
    (``one_call``, ``described``: the ``listed`` items first, where the judge lists them)."""
    fields: dict[str, Any] = {"verdict": (Literal["yes", "no"], ...)}
    if turn:
        fields["turn"] = (int | None, None)
    verdict = create_model(name, __base__=StatementVerdict, __doc__=doc, **fields)
    verdict.spellings = spellings
    each: Any = list.__class_getitem__(verdict)
    shape = '"reason", "turn"}]' if turn else '"reason"}, ...]'
    verdicts = create_model(
        f"{name}s",
        __doc__=f'The verdict answer: ``{{"verdicts": [{{"statement", "verdict", {shape}}}``.',
        verdicts=(each, ...),
    )
    items: dict[str, Any] = {listed: (Claims, ...)} if listed else {}
    answer = create_model(
        one_call, __doc__=described, **items, verdicts=(each, ...), reason=(str, ...)
    )
    return verdict, verdicts, answer


def example(word: str, turn: str = "") -> str:
    """One verdict, as a system prompt's JSON example shows it."""
    last = f', "turn": {turn}' if turn else ""
    return f'{{"statement": "...", "verdict": "{word}", "reason": "..."{last}}}'


def judge_prompts(
    blocks: Callable[[StepContext], Sequence[str]],
    schemas: tuple[type[BaseModel], type[BaseModel]],
    *,
    check: str,
    noun: str,
    plural: str,
    task: str,
    rules: str,
    statement: str,
    words: str,
    explain: str,
    ask: str,
    one_call_ask: str,
    found: str,
    scale: tuple[str, str],
    reason_ask: str,
    attribute: str,
    listing: str = "",
    turn: str = "",
    per: str = "",
    examples: tuple[str, str] = (example("yes"), example("yes")),
    reason: str = "one short sentence",
    one_call_task: str = "",
    one_call_blocks: Callable[[StepContext], Sequence[str]] | None = None,
    lists_items: bool = True,
    reviewed: str = "an AI assistant",
    rule: str = VERDICT_DATA_RULE,
) -> JudgePrompts:
    """A conversation judge's prompts from its words (``schemas``: its answers').

    The judge is told to ``task`` (``one_call_task`` in one-call mode) by ``rules``, shown a
    step's ``blocks`` (``one_call_blocks``), and gives one verdict per ``noun`` (``per`` in
    the verdict system prompt): its ``statement``, what its ``words`` mean, a ``reason``,
    and what its ``turn`` is where it has one; ``examples``: each system prompt's JSON. A
    judge that lists the items (``listing``) gives them first in one-call mode; without
    ``lists_items`` the blocks show them. The reason request says what the check ``found``
    (``{yes}`` of ``{total}``), the ``scale``'s ends, each verdict (``attribute``) and what
    to say (``reason_ask``).
    """
    from livescore.scorers._judge_spec import JudgePrompts  # _judge_spec imports this module

    def fields(what: str, why: str, when: str) -> str:
        last = f', "reason" ({why}) and "turn" ({when})' if turn else f' and "reason" ({why})'
        return f'"statement" ({statement}), "verdict" ({what}){last}'

    moves = [
        f'"verdicts": one verdict per {noun if listing else f"{noun} in the <{plural}> block"}, '
        f"in the same order, each with {fields(words, 'one short sentence', turn)}.",
        f'"reason": two or three sentences for the developer {explain}. No numeric score.',
    ]
    first = f'"{plural}": ["[turn 1] ..."], ' if listing else ""
    if listing:
        moves.insert(0, f'"{plural}": {listing}')
    how = "in three moves, and give all three" if listing else "and give your verdicts and a reason"
    numbered = "\n".join(f"{n}. {move}" for n, move in enumerate(moves, start=1))
    asked = '"statement": ..., "verdict": "yes" | "no", "reason": ...' + (
        ', "turn": ...' if turn else ""
    )
    lower = '"yes" or "no", lower case'
    worst, best = scale

    def verdict(shown: Shown) -> str:
        items = shown.items
        listed = [item_blocks(plural, noun, items)] if lists_items else []
        count = one_per_item(len(items), noun, plural)
        answer = f'{count}, as JSON only: {{"verdicts": [{{{asked}}}]}}.'
        return "\n\n".join((ask, *blocks(shown.ctx), *listed, answer))

    def explained(shown: Shown) -> str:
        verdicts, score = shown.verdicts, shown.score_text
        shows = []
        for index, given in enumerate(verdicts, start=1):
            at = f' turn="{given.get("turn")}"' if turn else ""
            shows.append(
                f'<verdict index="{index}" {attribute}="{given["verdict"]}"{at}>\n'
                f"{noun}: {quote(given['statement'])}\nreason: {quote(given['reason'])}\n"
                "</verdict>"
            )
        yes = sum(1 for given in verdicts if given["verdict"] == "yes")
        return (
            f"{found.format(yes=yes, total=len(verdicts))} Its score is {score} on a scale from "
            f"0 ({worst}) to {shown.scale:g} ({best}).\n\n<verdicts>\n"
            + "\n".join(shows)
            + f'\n</verdicts>\n\nExplain the score. Start with "The score is {score} because", '
            f"{reason_ask}"
        )

    def one_call(shown: Shown) -> str:
        shows = (one_call_blocks or blocks)(shown.ctx)
        start = f'"{plural}": [...], ' if listing else ""
        answer = f'Answer with JSON only: {{{start}"verdicts": [...], "reason": "..."}}.'
        return "\n\n".join((one_call_ask, *shows, answer))

    return JudgePrompts(
        verdict_system=(
            f"{task}.\n\n{rules}\n\n{rule}\n\nReturn exactly one verdict per {per or noun}, "
            f"in the order given. Each verdict has {fields(lower, reason, 'a number, or null')}."
            f'\n\nAnswer with JSON only: {{"verdicts": [{examples[0]}]}}'
        ),
        reason_system=(
            f"You explain the result of a {check} check of {reviewed} to its developer, in "
            "plain, concise English: two or three sentences of plain text, no lists, no "
            f"JSON.\n\n{rule}"
        ),
        one_call_system=(
            f"{one_call_task or task}, {how} in one JSON answer.\n\n{numbered}\n\n{rules}\n\n"
            f'{rule}\n\nAnswer with JSON only: {{{first}"verdicts": [{examples[1]}], '
            '"reason": "..."}'
        ),
        verdict=verdict,
        reason=explained,
        one_call=one_call,
        verdicts_schema=schemas[0],
        one_call_schema=schemas[1],
    )


def faults(ctx: StepContext, word: str) -> tuple[list[dict[str, Any]], int]:
    """The verdicts that say ``word`` (the defects), and how many verdicts there are."""
    verdicts = ctx.analyze_step_result["verdicts"]
    return [v for v in verdicts if v["verdict"] == word], len(verdicts)


def because(ctx: StepContext, why: str) -> str:
    """A reason written in code: "The score is … because ``why``"."""
    return f"The score is {fmt(ctx.score)} because {why}"


def every(total: int, one: str, many: str) -> str:
    """``"the only <one>"`` or ``"all <total> <many>"``, for a reason.

    Example:
        >>> every(1, "reply stays", "replies stay"), every(3, "reply stays", "replies stay")
        ('the only reply stays', 'all 3 replies stay')
    """
    return f"the only {one}" if total == 1 else f"all {total} {many}"


def turn_attributes(at_fault: str, judged: str) -> dict[str, str]:
    """A conversation scorer's span attributes, for its catalog entry: what its turns at
    fault are, and what its items are."""
    return {A.LIVESCORE_TURNS_AT_FAULT: at_fault, A.LIVESCORE_CONVERSATION_ITEMS: judged}
