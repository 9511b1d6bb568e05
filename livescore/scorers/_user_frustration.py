"""The user-frustration scorer: how negative the user's tone gets (VADER, no judge)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from livescore._catalog import ScorerOptions, catalog_entry
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.pii import RedactSpec
from livescore.scorers._conversation import (
    because,
    conversation_of,
    messages,
    record_turns,
    turn_attributes,
    turns_phrase,
)
from livescore.scorers._judged import check_fraction, round2
from livescore.scorers._text import code_scorer
from livescore.scorers._tone import sentence_tones
from livescore.scoring import CalibrationSpec, NotScorable, Scorer, StepContext

__all__ = ("USER_FRUSTRATION_LABELS", "create_user_frustration_scorer")

USER_FRUSTRATION_LABELS = ("calm", "mild", "frustrated", "angry")
"""Labels from best to worst: peak negativity below 0.05 (VADER's neutral band), below
0.35, below 0.65, and above."""

_NEGATIVE = 0.05  # VADER's own threshold for a negative text


def create_user_frustration_scorer(
    *,
    threshold: float = _NEGATIVE,
    id: str = "user-frustration",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """A user-frustration signal: how negative the user's tone gets over the conversation.

    A conversation scorer (no judge). Each user message is read with VADER (the tone
    scorer's sentiment model) sentence by sentence; its *negativity* is how far its most
    negative sentence goes below 0 (0 to 1). The score is the peak negativity over the
    user's messages: 0 is calm, higher is worse. VADER reads words, negations, boosters,
    capitals and exclamation marks: frustration said without negative words ("this is the
    third time I ask") is not seen.

    Args:
        threshold: The negativity above which a message counts as negative (VADER's 0.05).
        max_text_chars: Each message is cut to this many characters.

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Returns:
        A conversation scorer: ``analyze_step_result["turns"]`` holds each user message's
        ``{"turn", "tone", "negativity"}``; the turns at fault are the negative ones. A
        conversation without any user message is skipped as not scorable.

    Example:
        >>> from livescore.runs import Conversation
        >>> conversation = Conversation.from_turns([
        ...     {"input": "Hi, where is my parcel?", "output": "Let me check."},
        ...     {"input": "This is awful, it is still not here!", "output": "Sorry."},
        ... ])
        >>> result = create_user_frustration_scorer().run_sync(conversation)
        >>> result.label, result.flags["turns_at_fault"]
        ('frustrated', [2])
    """
    steps = _UserFrustration(check_fraction(threshold, name="threshold"), max_text_chars)
    return code_scorer(steps, id=id, level="conversation", redact=redact, calibration=calibration)


@dataclass(frozen=True, slots=True)
class _UserFrustration:
    threshold: float
    max_text_chars: int

    description = "Peak negativity of the user's tone over the conversation (VADER)"
    preprocess = None

    def analyze(self, ctx: StepContext) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        for number, text in messages(conversation_of(ctx), "user"):
            tones = sentence_tones(text[: self.max_text_chars])
            if not tones:
                continue
            low = min(tones)
            rows.append({"turn": number, "tone": round(low, 4), "negativity": max(0.0, -low)})
        if not rows:
            raise NotScorable("the conversation has no user message to read a tone from")
        negative: list[int | None] = [r["turn"] for r in rows if r["negativity"] > self.threshold]
        record_turns(ctx, negative, len(rows))
        return {"turns": rows, "first_tone": rows[0]["tone"], "last_tone": rows[-1]["tone"]}

    def generate_score(self, ctx: StepContext) -> float:
        return round2(max(r["negativity"] for r in ctx.analyze_step_result["turns"]))

    def generate_reason(self, ctx: StepContext) -> str:
        analysis = ctx.analyze_step_result
        rows = analysis["turns"]
        negative = [r for r in rows if r["turn"] in ctx.flags["turns_at_fault"]]
        moved = (
            f"the user's tone went from {analysis['first_tone']:+.2f} in turn "
            f"{rows[0]['turn']} to {analysis['last_tone']:+.2f} in turn {rows[-1]['turn']}"
        )
        if not negative:
            return because(ctx, f"no user message is negative ({moved}).")
        worst = max(negative, key=lambda r: r["negativity"])
        return because(
            ctx,
            f"the user's messages in {turns_phrase(r['turn'] for r in negative)} are negative, "
            f"most in turn {worst['turn']} ({worst['tone']:+.2f}); {moved}.",
        )

    def label(self, score: float) -> str:
        return USER_FRUSTRATION_LABELS[bisect.bisect_right((_NEGATIVE, 0.35, 0.65), score)]


@catalog_entry(
    "user-frustration",
    family="conversation",
    summary="how negative the user's tone gets over the conversation (VADER)",
    higher_is_better=False,
    predicts="frustrated",
    factory="livescore.scorers.create_user_frustration_scorer",
    span_attributes=turn_attributes("turns whose user message is negative", "user messages read"),
    examples=("user-frustration",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    return create_user_frustration_scorer()
