"""The turn-count scorer: how many turns a conversation took (no judge)."""

from __future__ import annotations

from dataclasses import dataclass

from livescore._catalog import ScorerOptions, catalog_entry
from livescore.pii import RedactSpec
from livescore.scorers._conversation import conversation_of
from livescore.scorers._text import code_scorer
from livescore.scoring import CalibrationSpec, Scorer, StepContext

__all__ = ("create_turn_count_scorer",)


def create_turn_count_scorer(
    *,
    max_turns: int | None = None,
    id: str = "turn-count",
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Count the turns of a conversation: a task-oriented agent that needs many is struggling.

    A conversation scorer (no judge). The score is the number of turns so far, forgotten
    ones included (a conversation scored again after a fourth turn scores 4).

    Args:
        max_turns: The length past which a conversation is labelled ``"long"`` (else
            ``"ok"``); ``None``: no label.

    The other arguments are those of :func:`~livescore.scoring.create_scorer`.

    Example:
        >>> from livescore.runs import Conversation
        >>> scorer = create_turn_count_scorer(max_turns=2)
        >>> result = scorer.run_sync(Conversation.from_turns(
        ...     [{"input": "Hi", "output": "Hello"}] * 3))
        >>> result.score, result.label, result.reason
        (3.0, 'long', 'The conversation has 3 turns (more than 2).')
    """
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        raise ValueError(f"max_turns must be a positive whole number, not {max_turns!r}")

    steps = _TurnCount(max_turns)
    return code_scorer(steps, id=id, level="conversation", redact=redact, calibration=calibration)


@dataclass(frozen=True, slots=True)
class _TurnCount:
    max_turns: int | None

    description = "How many turns the conversation took"
    preprocess = analyze = None

    def generate_score(self, ctx: StepContext) -> float:
        return float(conversation_of(ctx).last_turn)

    def generate_reason(self, ctx: StepContext) -> str:
        turns, most = int(ctx.score or 0), self.max_turns
        said = f"The conversation has {turns} turn{'' if turns == 1 else 's'}"
        if most is not None:
            said += f" (more than {most})" if turns > most else f" (at most {most})"
        return said + "."

    def label(self, score: float) -> str | None:
        if self.max_turns is None:
            return None
        return "long" if score > self.max_turns else "ok"


@catalog_entry(
    "turn-count",
    family="conversation",
    summary="how many turns the conversation took (fewer is better for a task-oriented agent)",
    argument="MAX: label conversations longer than this 'long'",
    higher_is_better=False,
    score_range=(0.0, 1000000.0),
    factory="livescore.scorers.create_turn_count_scorer",
    examples=("turn-count", "turn-count:8"),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    try:
        max_turns = None if argument is None else int(argument)
    except ValueError:
        raise ValueError(f"turn-count: MAX is a whole number of turns, not {argument!r}") from None
    return create_turn_count_scorer(max_turns=max_turns)
