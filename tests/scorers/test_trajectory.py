"""The trajectory scorer: accuracy × efficiency × failure handling, the blacklist gate."""

from __future__ import annotations

from typing import Any

import pytest
from _tool_runs import tool_run

from livescore import Run
from livescore.scorers import create_trajectory_scorer
from livescore.scorers._trajectory import TRAJECTORY_LABELS


def score(run: Run, **options: Any) -> Any:
    return create_trajectory_scorer(**options).run_sync(run)


def dims(result: Any) -> tuple[float, float, float]:
    analysis = result.analyze_step_result
    return (
        analysis["accuracy"]["score"],
        analysis["efficiency"]["score"],
        analysis["failure_handling"]["score"],
    )


def test_perfect_path() -> None:
    result = score(tool_run("search", "summarize"), expected_steps=["search", "summarize"])
    assert result.score == 1.0
    assert result.label == "perfect"
    assert dims(result) == (1.0, 1.0, 1.0)
    assert result.reason == (
        "Accuracy 1.00: followed 2 of 2 expected steps. Efficiency 1.00: 2 calls. "
        "Failure handling 1.00: no failed call."
    )


def test_accuracy_relaxed_uses_the_longest_common_subsequence() -> None:
    # Greedy forward matching (Mastra) finds only "x" here; the best alignment has 2 steps.
    result = score(tool_run("a", "b", "x"), expected_steps=["x", "a", "b"])
    accuracy = result.analyze_step_result["accuracy"]
    assert accuracy["score"] == pytest.approx(2 / 3)
    assert accuracy["missing"] == []
    assert result.score == pytest.approx(2 / 3)


def test_accuracy_lists_missing_and_extra_steps() -> None:
    result = score(tool_run("search", "lookup"), expected_steps=["search", "summarize"])
    accuracy = result.analyze_step_result["accuracy"]
    assert accuracy == {
        "score": 0.5,
        "matched": 1,
        "expected": 2,
        "missing": ["summarize"],
        "extra": ["lookup"],
    }
    assert "missing summarize; extra lookup" in (result.reason or "")


def test_strict_and_unordered_accuracy() -> None:
    run = tool_run("b", "a", "c")
    assert dims(score(run, expected_steps=["a", "b"], ordering="strict"))[0] == pytest.approx(
        2 * 1 / 5
    )
    assert dims(score(run, expected_steps=["a", "b"], ordering="unordered"))[0] == 1.0
    assert dims(score(tool_run("a", "b"), expected_steps=["a", "b"], ordering="strict"))[0] == 1


def test_expected_no_calls() -> None:
    assert score(tool_run(), expected_steps=[]).score == 1.0
    wrong = score(tool_run("search"), expected_steps=[])
    assert wrong.score == 0.0
    assert wrong.reason is not None
    assert "no tool call expected" in wrong.reason


def test_wrong_tools_earn_nothing_for_being_quick() -> None:
    result = score(tool_run("x"), expected_steps=["search"], max_steps=3)
    assert dims(result) == (0.0, 1.0, 1.0)
    assert result.score == 0.0
    assert result.label == "poor"


def test_step_budget() -> None:
    run = tool_run("search", "x", "y", "summarize")
    result = score(run, expected_steps=["search", "summarize"], max_steps=2)
    efficiency = result.analyze_step_result["efficiency"]
    assert efficiency["score"] == 0.0  # 2 over a budget of 2
    assert efficiency["over_budget"] is True
    assert score(run, expected_steps=["search", "summarize"], max_steps=3).score == pytest.approx(
        1 - 1 / 3
    )
    assert score(tool_run("a"), expected_steps=["a"], max_steps=0).score == 0.0


def test_redundant_calls_cost_efficiency() -> None:
    same = ("search", {"q": "news"}, None)
    result = score(tool_run(same, same, "summarize"), expected_steps=["search", "summarize"])
    assert result.analyze_step_result["efficiency"]["redundant_calls"] == ["search"]
    assert result.score == pytest.approx(0.8)
    assert result.label == "good"
    # Different arguments: not redundant.
    other = ("search", {"q": "sports"}, None)
    assert score(tool_run(same, other), expected_steps=["search"]).score == 1.0
    # Retrying a failed call with the same arguments: not redundant either.
    failed = ("search", {"q": "news"}, "timeout")
    retried = score(tool_run(failed, same), expected_steps=["search"])
    assert retried.analyze_step_result["efficiency"]["redundant_calls"] == []


def test_failures_are_listed_and_excess_retries_cost() -> None:
    failing = [("search", "HTTP 503")] * 4
    result = score(tool_run(*failing, "search"), expected_steps=["search"])
    failures = result.analyze_step_result["failure_handling"]
    assert failures["excess_retries"] == 2  # 4 retries in a row, 2 allowed
    assert failures["score"] == pytest.approx(0.6)
    assert len(failures["failed_calls"]) == 4
    assert "4 failed (search (failed: HTTP 503)" in (result.reason or "")
    one_failure = score(tool_run(("search", "HTTP 503"), "search"), expected_steps=["search"])
    assert dims(one_failure)[2] == 1.0
    assert "1 failed" in (one_failure.reason or "")
    assert score(tool_run(*failing), expected_steps=["search"], max_retries=5).score == 1.0


def test_blacklist_tool_and_sequence_score_zero() -> None:
    run = tool_run("search", "delete_user", "send_email")
    tool = score(run, expected_steps=["search"], blacklist=["delete_user"])
    assert tool.score == 0.0
    assert tool.reason is not None
    assert tool.reason.startswith("Blacklisted: delete_user.")
    assert tool.analyze_step_result["blacklist"] == {
        "passed": False,
        "tools": ["delete_user"],
        "sequences": [],
    }
    sequence = score(run, expected_steps=["search"], blacklist=[["delete_user", "send_email"]])
    assert sequence.score == 0.0
    assert "delete_user → send_email" in (sequence.reason or "")
    apart = score(
        tool_run("delete_user", "x", "send_email"),
        expected_steps=["x"],
        blacklist=[("delete_user", "send_email")],
    )
    assert apart.analyze_step_result["blacklist"]["passed"] is True


def test_an_unhit_blacklist_adds_no_credit() -> None:
    run = tool_run("search", "lookup")
    plain = score(run, expected_steps=["search", "summarize"])
    with_blacklist = score(run, expected_steps=["search", "summarize"], blacklist=["rm"])
    assert plain.score == with_blacklist.score == 0.5


def test_labels() -> None:
    assert TRAJECTORY_LABELS == ("poor", "fair", "good", "perfect")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"expected_steps": "search"}, TypeError, "list of tool names"),
        ({"expected_steps": ["a", ""]}, ValueError, "empty tool name"),
        ({"expected_steps": [1]}, TypeError, "strings"),
        ({"expected_steps": ["a"], "max_steps": -1}, ValueError, "0 or more"),
        ({"expected_steps": ["a"], "max_steps": 2.5}, TypeError, "whole number"),
        ({"expected_steps": ["a"], "max_steps": True}, TypeError, "whole number"),
        ({"expected_steps": ["a"], "max_retries": -1}, ValueError, "0 or more"),
        ({"expected_steps": ["a"], "blacklist": "rm"}, TypeError, "blacklist must be"),
        ({"expected_steps": ["a"], "blacklist": [[]]}, ValueError, "sequence is empty"),
        ({"expected_steps": ["a"], "blacklist": [""]}, ValueError, "empty tool name"),
        ({"expected_steps": ["a"], "ordering": "loose"}, ValueError, "ordering must be"),
    ],
)
def test_bad_input_fails_at_construction(
    options: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        create_trajectory_scorer(**options)
