"""``run_evals`` reads items by the rules ``livescore eval`` reads dataset lines by:
``question`` is the input, unknown keys are named even on the item they break, and
``steps`` reach the scorers."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from livescore import Scorer, create_scorer
from livescore.evals import load_dataset, run_evals_sync
from livescore.evals._run_evals import split_item_keys
from livescore.runs import Step, ToolCall
from livescore.scorers import create_keyword_coverage_scorer

COVERAGE = create_keyword_coverage_scorer()


def _tools_called() -> Scorer:
    return create_scorer(
        id="tools",
        description="how many tool calls the run holds",
        generate_score=lambda ctx: float(
            sum(1 for step in ctx.run.steps if step.tool_call is not None)
        ),
    )


def test_question_is_the_input_as_in_the_cli() -> None:
    # Before: the CLI read "question" as the input, run_evals kept it as metadata.
    result = run_evals_sync([{"question": "alpha beta", "output": "alpha beta"}], [COVERAGE])
    item = result.items[0]
    assert item.error is None
    assert item.input == "alpha beta"
    assert result.scores["keyword-coverage"].mean == 1.0
    with_both = split_item_keys({"input": "in", "question": "q", "output": "o"})
    assert with_both == ({"input": "in", "output": "o"}, {"question": "q"})


def test_a_typo_of_input_is_named_in_the_warning_and_the_error() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_evals_sync(
            [{"inptu": "alpha", "output": "alpha"}, {"input": "alpha", "output": "alpha"}],
            [COVERAGE],
        )
    broken = result.items[0]
    assert broken.error_type == "invalid_item"
    # Before: "the item has no 'input'", and no warning named the key.
    assert "'inptu'" in (broken.error or "")
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1
    assert "'inptu' (1 item(s))" in messages[0]
    assert result.scores["keyword-coverage"].scored == 1


def test_an_item_hands_its_steps_to_the_scorers() -> None:
    call = ToolCall(name="get_weather", call_id="c1", args={"city": "Paris"}, result="sunny")
    steps = [Step(kind="tool", name="get_weather", tool_call=call)]
    as_dicts = [
        {"kind": "tool", "name": "get_weather", "tool_call": {"name": "get_weather"}},
        {"kind": "tool", "name": "get_time", "tool_call": {"name": "get_time"}},
    ]
    result = run_evals_sync(
        [
            {"input": "Weather?", "output": "Sunny.", "steps": steps},
            {"input": "Weather?", "output": "Sunny.", "steps": as_dicts},
            {"input": "Weather?", "output": "Sunny."},
        ],
        [_tools_called()],
    )
    # Before: 'steps' was unknown metadata, and every item had no tool call.
    assert [it.scores["tools"].score for it in result.items] == [1.0, 2.0, 0.0]
    assert "steps" not in result.items[0].metadata


def test_bad_steps_fail_the_item_with_a_reason() -> None:
    result = run_evals_sync(
        [{"input": "q", "output": "a", "steps": "not steps"}, {"input": "q", "output": "a"}],
        [COVERAGE],
    )
    assert result.items[0].error_type == "invalid_item"
    assert "'steps'" in (result.items[0].error or "")
    assert result.items[1].error is None


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"input": "q", "output": "a", "steps": "x"}', "'steps' must be a list"),
        ('{"input": "q", "output": "a", "steps": [{"kind": "dance"}]}', "unknown step kind"),
        ('{"inptu": "q", "output": "a"}', "unknown field(s): 'inptu'"),
    ],
)
def test_a_dataset_line_with_bad_steps_or_no_input_is_skipped_with_a_reason(
    tmp_path: Path, line: str, problem: str
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(line + '\n{"input": "q", "output": "a"}\n', encoding="utf-8")
    dataset = load_dataset(path)
    assert len(dataset.items) == 1
    (found,) = dataset.problems
    assert found.line == 1
    assert problem in found.message
