"""run_evals over multi-turn items (``turns``): conversation scorers judge the whole
conversation, run scorers its last turn; each turn has a span the scores link to."""

from __future__ import annotations

from typing import Any

import pytest
from _evals_support import InMemoryTracing, length_scorer

from livescore import create_scorer
from livescore.evals import run_evals_sync
from livescore.scorers import create_tool_error_rate_scorer, create_turn_count_scorer

PARCEL = {
    "id": "parcel-7",
    "turns": [
        {
            "input": "Where is order 7?",
            "output": "It left Lyon this morning.",
            "tool_calls": [{"name": "track", "args": {"order": 7}, "result": "left Lyon"}],
        },
        {
            "input": "When will it arrive?",
            "output": "I could not look that up.",
            "tool_calls": [{"name": "eta", "args": {"order": 7}, "error": "timeout"}],
        },
        {"input": "Thanks.", "output": "You're welcome."},
    ],
    "metadata": {"channel": "chat"},
}


def _outputs_seen(ctx: Any) -> float:
    return float(len(ctx.conversation.runs))


def test_a_conversation_item_is_judged_whole_and_its_last_turn_by_run_scorers() -> None:
    tracing = InMemoryTracing.create()
    turns = create_turn_count_scorer()
    errors = create_tool_error_rate_scorer()
    result = run_evals_sync(
        [PARCEL, {"input": "Hi", "output": "Hello"}],
        [turns, errors, length_scorer()],
        tracer_provider=tracing.provider,
    )
    conversation, single = result.items
    assert conversation.error is None
    assert conversation.scores["turn-count"].score == 3.0
    assert conversation.scores["tool-error-rate"].score == 0.5
    covered = conversation.scores["tool-error-rate"].turns
    assert covered is not None
    assert (covered.conversation_id, covered.first, covered.last) == ("parcel-7", 1, 3)
    assert "turn 2" in (conversation.scores["tool-error-rate"].reason or "")
    # The run scorer sees the last turn only.
    assert conversation.scores["short"].run_id == "parcel-7:3"
    assert conversation.scores["short"].score == 1.0
    assert conversation.input == "Thanks."
    assert conversation.conversation is not None
    assert conversation.conversation.id == "parcel-7"
    # A plain item is a conversation of one turn to a conversation scorer.
    assert single.scores["turn-count"].score == 1.0
    assert single.conversation is None
    record = conversation.to_dict(include_run=True)
    # The dataset form again: a results file is a dataset.
    assert (record["conversation_id"], record["turns"]) == ("parcel-7", PARCEL["turns"])
    assert len(record["conversation"]["runs"]) == 3


def test_each_turn_has_a_span_and_the_conversation_score_links_to_every_one() -> None:
    tracing = InMemoryTracing.create()
    run_evals_sync([PARCEL], [create_turn_count_scorer()], tracer_provider=tracing.provider)
    spans = tracing.spans()
    item = next(s for s in spans if s.name == "eval_item")
    turn_spans = sorted(
        (s for s in spans if s.name.startswith("eval_turn")),
        key=lambda s: s.attributes["livescore.eval.turn"],  # type: ignore[index]
    )
    assert [s.name for s in turn_spans] == ["eval_turn 1", "eval_turn 2", "eval_turn 3"]
    assert item.attributes is not None
    assert item.attributes["session.id"] == "parcel-7"
    assert item.attributes["gen_ai.conversation.id"] == "parcel-7"
    for turn in turn_spans:
        assert turn.parent is not None
        assert turn.parent.span_id == item.context.span_id
    (score,) = tracing.spans("evaluation")
    assert score.parent is not None
    assert score.parent.span_id == turn_spans[-1].context.span_id
    assert {link.context.span_id for link in score.links} == {s.context.span_id for s in turn_spans}
    assert score.attributes is not None
    assert score.attributes["livescore.conversation.turns"] == 3
    assert score.attributes["session.id"] == "parcel-7"


def test_a_conversation_scorer_made_from_steps_sees_the_conversation() -> None:
    seen = create_scorer(
        id="seen", description="turns seen", level="conversation", generate_score=_outputs_seen
    )
    result = run_evals_sync([PARCEL], [seen])
    assert result.items[0].scores["seen"].score == 3.0
    assert result.scores["seen"].mean == 3.0


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"turns": []}, "'turns' must be a non-empty list"),
        ({"turns": [{"input": "Hi"}]}, "turn 1: missing field 'output'"),
        (
            {
                "turns": [
                    {"input": "a", "output": "b"},
                    {"input": "c", "output": "d", "tool_calls": [{}]},
                ]
            },
            "turn 2: tool call 1 needs a 'name'",
        ),
    ],
)
def test_a_malformed_conversation_fails_its_item_and_says_why(
    item: dict[str, Any], message: str
) -> None:
    result = run_evals_sync(
        [item, {"input": "Hi", "output": "Hello"}], [create_turn_count_scorer()]
    )
    bad, good = result.items
    assert bad.error_type == "invalid_item"
    assert message in (bad.error or "")
    assert good.scores["turn-count"].score == 1.0


def test_a_target_does_not_replay_a_conversation() -> None:
    result = run_evals_sync(
        [PARCEL], [create_turn_count_scorer()], target=lambda text: f"echo {text}"
    )
    (item,) = result.items
    assert item.error_type == "invalid_item"
    assert "does not replay conversations" in (item.error or "")
    assert item.scores == {}
