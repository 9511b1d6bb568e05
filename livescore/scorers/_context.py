"""The context a judge scorer reads (resolved once per score, rendered once, cut to fit), and
what the two context scorers share (the pieces they judge, their prompts, attributes)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from livescore.otel import attributes as A
from livescore.runs import get_run_context
from livescore.scorers._prompting import RenderedContext, data_rule, quote, render_context
from livescore.scoring import ContextFunction, NotScorable, StepContext

__all__ = (
    "CUT_ATTRIBUTES",
    "DEFAULT_MAX_CONTEXT_CHARS",
    "at_position",
    "check_max_context_chars",
    "context_for_judge",
    "context_items",
    "context_source",
    "no_context_reason",
    "pieces_attributes",
    "pieces_of",
    "pieces_prompt",
    "pieces_reason",
    "pieces_systems",
    "plain_context_for_judge",
    "record_pieces",
)

DEFAULT_MAX_CONTEXT_CHARS = 100_000
"""Longest context block sent to the judge, in characters: every item, its markup and its
escaping together. Past it the context is cut (and ``livescore.context.truncated`` set)."""

MIN_MAX_CONTEXT_CHARS = 100  # room for the block's own markup and some text

CUT_ATTRIBUTES = {
    "livescore.context.truncated": "the context sent to the judge was cut at max_context_chars",
    "livescore.context.chars": "the context's length before the cut (with "
    "livescore.context.truncated)",
}
"""The span attributes of a context cut (:func:`context_for_judge`), for the catalog."""

_ITEMS = "livescore.context.items"
_RENDERED = "livescore.context.rendered"


def check_max_context_chars(value: object) -> int:
    """``value`` as a context limit: an int (``TypeError``) of at least
    :data:`MIN_MAX_CONTEXT_CHARS` (``ValueError``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("max_context_chars must be an int")
    if value < MIN_MAX_CONTEXT_CHARS:
        raise ValueError(f"max_context_chars must be at least {MIN_MAX_CONTEXT_CHARS}, not {value}")
    return value


def context_source(
    context: Sequence[str] | None, get_context: ContextFunction | None, max_context_chars: int
) -> tuple[ContextFunction | None, int]:
    """A context scorer's context function (the run's context where no static ``context``
    is given) and its context limit, checked (``TypeError``, ``ValueError``)."""
    if get_context is not None and not callable(get_context):
        raise TypeError("get_context must be a function get_context(run, step)")
    max_context_chars = check_max_context_chars(max_context_chars)
    if context is None and get_context is None:
        get_context = get_run_context
    return get_context, max_context_chars


def context_items(ctx: StepContext) -> list[str]:
    """The score's non-blank context items, once per score (a context can hold a million)."""
    items: list[str] | None = ctx.state.get(_ITEMS)
    if items is None:
        items = ctx.state[_ITEMS] = [c for c in ctx.context or () if c.strip()]
    return items


def context_for_judge(ctx: StepContext, max_chars: int, *, start: int = 1) -> RenderedContext:
    """The ``<context>`` block of the score's context, rendered once; a cut is recorded in
    ``flags`` (``context_truncated``, ``context_chars``) and on the span."""
    rendered: RenderedContext | None = ctx.state.get(_RENDERED)
    if rendered is None:
        items = context_items(ctx)
        rendered = ctx.state[_RENDERED] = render_context(items, max_chars, start=start)
        if rendered.truncated:
            _record_cut(ctx, items)
    return rendered


def plain_context_for_judge(ctx: StepContext, max_chars: int) -> str:
    """The score's context as plain text, its documents a blank line apart, at most
    ``max_chars`` characters; a cut is recorded as in :func:`context_for_judge`."""
    items = context_items(ctx)
    text = "\n\n".join(items)
    if len(text) > max_chars:
        _record_cut(ctx, items)
        text = text[:max_chars]
    return text


def _record_cut(ctx: StepContext, items: list[str]) -> None:
    chars = sum(len(item) for item in items)
    ctx.flags["context_truncated"] = True
    ctx.flags["context_chars"] = chars
    ctx.attributes[A.LIVESCORE_CONTEXT_TRUNCATED] = True
    ctx.attributes[A.LIVESCORE_CONTEXT_CHARS] = chars


def no_context_reason(what: str = "", *, hint: str = "") -> str:
    """Why a run without context is skipped, for a scorer that judges ``what``; ``hint``
    (how to score such runs anyway) ends the sentence.

    Example:
        >>> no_context_reason("claims").startswith("no context to judge claims against")
        True
        >>> no_context_reason(hint="pass x=1").endswith("retrieved document); pass x=1")
        True
    """
    judged = f"{what} " if what else ""
    return (
        f"no context to judge {judged}against: the scorer has no static `context` and "
        "`get_context` returned nothing for this run (by default: no given context, no "
        "successful tool call and no retrieved document)" + (f"; {hint}" if hint else "")
    )


# -- the context scorers: one verdict per context piece, in the order the agent got them ---------


def at_position(verdict: dict[str, Any], item: str, index: int) -> None:
    """Ties a piece's verdict to the piece's position, not to the judge's numbering."""
    verdict["context_index"] = index


def pieces_of(
    max_chars: int, what: str, check: Callable[[StepContext], object]
) -> Callable[[StepContext], list[str]]:
    """A context scorer's items: the non-blank pieces the judge sees (those past
    ``max_chars`` cut); a run without context (the scorer judges ``what``) or one ``check``
    rejects is not scorable, before any call."""

    def pieces(ctx: StepContext) -> list[str]:
        items = context_items(ctx)
        if items:
            rendered = context_for_judge(ctx, max_chars, start=0)
            if rendered.truncated:
                ctx.flags["context_pieces_judged"] = rendered.documents
            items = items[: rendered.documents]
        if not items:
            raise NotScorable(no_context_reason(what))
        check(ctx)
        return items

    return pieces


def pieces_systems(
    task: str, rules: str, tags: Sequence[str], *, returned: str, example: str, each: str, on: str
) -> tuple[str, str]:
    """A context scorer's verdict and one-call system prompts, in its own words: what the
    judge does (``task``), the verdict answer (``returned``, and its JSON ``example``), the
    one-call answer's verdicts (``each``), and what the reason is ``on``."""
    rule = data_rule(tags)
    verdict = f"{task}.\n\n{rules}\n\n{rule}\n\n{returned}\n\nAnswer with JSON only: {example}"
    one_call = (
        f'{task}, and explain, in one JSON answer.\n\n{rules}\n\n{each} "reason", last: two '
        f"or three sentences for the developer on {on}. Do not give a numeric score.\n\n{rule}"
        f'\n\nAnswer with JSON only: {example[:-1]}, "reason": "..."}}'
    )
    return verdict, one_call


def pieces_reason(
    finding: str, score: str, verdicts: Iterable[tuple[str, str]], on: str, *, more: str = ""
) -> str:
    """A context scorer's reason prompt: its ``finding``, a ``<verdict>`` per piece (from
    ``(attributes, reason)``) and ``more``, then the ask for a reason ``on`` them."""
    listed = "\n".join(f"<verdict {marks}>{quote(reason)}</verdict>" for marks, reason in verdicts)
    return (
        f"{finding}\n\n<verdicts>\n{listed}\n</verdicts>\n\n{more}"
        f'Explain the score. Start with "The score is {score} because" and say {on}.'
    )


def pieces_prompt(ctx: StepContext, max_chars: int, answer: str) -> str:
    """A context scorer's prompt's end: the judged pieces (numbered from 0), one ``answer`` each."""
    count = len(ctx.preprocess_step_result["pieces"])
    pieces = "is 1 piece" if count == 1 else f"are {count} pieces"
    return (
        f"{context_for_judge(ctx, max_chars, start=0).block}\n\n"
        f"There {pieces} (indexes 0 to {count - 1}): "
        f"give exactly {count} {answer}{'' if count == 1 else 's'}, in the same order"
    )


def record_pieces(ctx: StepContext, pieces: int, relevant: int) -> None:
    ctx.flags["context_pieces"] = pieces
    ctx.attributes[A.LIVESCORE_CONTEXT_PIECES] = pieces
    ctx.attributes[A.LIVESCORE_CONTEXT_RELEVANT] = relevant


def pieces_attributes(relevant: str) -> dict[str, str]:
    """A context scorer's span attributes: ``relevant`` says what ``...context.relevant`` counts."""
    return {
        "livescore.context.pieces": "context pieces judged",
        "livescore.context.relevant": relevant,
        **CUT_ATTRIBUTES,
    }
