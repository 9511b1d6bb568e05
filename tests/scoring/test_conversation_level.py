"""Conversation scorers: ``create_scorer(level="conversation")`` sees ``ctx.conversation``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from livescore import Run, StepContext, create_scorer
from livescore.runs import NOT_SCORABLE_METADATA_KEY, Conversation
from livescore.scoring import CoveredTurns, ScoreResult


def _turns(n: int, conversation_id: str = "c1") -> Conversation:
    return Conversation(
        conversation_id,
        [
            Run(
                input=f"question {i}",
                output=f"answer {i}",
                run_id=f"r{i}",
                trace_id=f"{i:032x}",
                span_id=f"{i:016x}",
                conversation_id=conversation_id,
            )
            for i in range(1, n + 1)
        ],
    )


def test_a_conversation_scorer_sees_every_turn_and_its_result_says_which_it_covers() -> None:
    seen: list[StepContext] = []

    def generate_score(ctx: StepContext) -> float:
        seen.append(ctx)
        assert ctx.conversation is not None
        return float(len(ctx.conversation.runs))

    scorer = create_scorer(
        id="turns", description="turns", level="conversation", generate_score=generate_score
    )
    result = scorer.run_sync(_turns(3))
    assert result.score == 3.0
    (ctx,) = seen
    assert ctx.run.run_id == "r3"  # the last turn
    assert ctx.output_text == "answer 3"
    assert result.run_id == "r3"
    assert result.turns is not None
    assert (result.turns.conversation_id, result.turns.first, result.turns.count) == ("c1", 1, 3)
    assert result.turns.run_ids == ("r1", "r2", "r3")
    assert [s.span_id if s else None for s in result.turns.spans] == [
        f"{i:016x}" for i in (1, 2, 3)
    ]
    assert "level='conversation'" in repr(scorer)


def test_covered_turns_travel_with_the_result() -> None:
    result = ScoreResult(run_id="r", scorer_id="s", turns=CoveredTurns.of(_turns(2)))
    again = ScoreResult.from_dict(result.to_dict())
    assert again.turns is not None
    assert result.turns is not None
    assert (again.turns.first, again.turns.last, again.turns.run_ids) == (1, 2, ("r1", "r2"))
    # Rebuilt elsewhere, the turns' spans are remote ones, with the same ids.
    assert [(s.trace_id, s.span_id, s.is_remote) for s in again.turns.spans if s] == [
        (p.trace_id, p.span_id, True) for p in result.turns.spans if p
    ]


def test_get_context_of_a_conversation_scorer_gets_the_conversation() -> None:
    calls: list[Any] = []

    def get_context(conversation: Conversation, step: Any) -> list[str]:
        calls.append((conversation.id, step))
        return ["fact"]

    scorer = create_scorer(
        id="ctx",
        description="context",
        level="conversation",
        get_context=get_context,
        generate_score=lambda ctx: float(ctx.context == ["fact"]),
    )
    assert scorer.run_sync(_turns(2)).score == 1.0
    assert calls == [("c1", None)]


def test_a_run_given_to_a_conversation_scorer_is_a_conversation_of_one_turn() -> None:
    scorer = create_scorer(
        id="n",
        description="n",
        level="conversation",
        generate_score=lambda ctx: float(ctx.conversation.last_turn),
    )
    result = scorer.run_sync({"input": "a", "output": "b", "conversation_id": "t"})
    assert result.score == 1.0
    assert result.turns is not None
    assert result.turns.conversation_id == "t"


def test_a_run_scorer_refuses_a_conversation_with_a_clear_failure() -> None:
    scorer = create_scorer(id="len", description="len", generate_score=lambda ctx: 1.0)
    result = anyio.run(lambda: scorer.score(_turns(2)))
    assert (result.status, result.failed_step) == ("failed", "input")
    assert "scores runs, not conversations" in (result.error or "")


def test_an_empty_conversation_or_a_turn_without_content_is_skipped_with_the_reason() -> None:
    scorer = create_scorer(
        id="n", description="n", level="conversation", generate_score=lambda ctx: 1.0
    )
    empty = scorer.run_sync(Conversation("empty"))
    assert empty.status == "skipped"
    assert "has no turns" in (empty.reason or "")
    redacted = _turns(3)
    redacted.runs[1].metadata[NOT_SCORABLE_METADATA_KEY] = "no content was recorded"
    result = scorer.run_sync(redacted)
    assert (result.status, result.reason) == (
        "skipped",
        "turn 2 of the conversation: no content was recorded",
    )


def test_level_is_checked() -> None:
    with pytest.raises(ValueError, match="level must be"):
        create_scorer(id="x", description="x", level="trace", generate_score=lambda c: 1.0)  # type: ignore[arg-type]
