"""``redact=`` and ``calibration=`` on every prebuilt scorer factory; a calibration sets the
labels of the factory's scorer, and one fitted for another judge model is refused when it is
built."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

from livescore.scorers import (
    create_hallucination_scorer,
    create_keyword_coverage_scorer,
    scorer_catalog,
)
from livescore.scoring import Calibration, CalibrationEntry, CalibrationError
from livescore.testing import ScriptedJudge

FACTORIES = sorted(
    {e.factory for e in scorer_catalog() if e.factory.startswith("livescore.scorers.")}
)


def _factory(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("keyword", ["redact", "calibration"])
@pytest.mark.parametrize("path", FACTORIES)
def test_every_prebuilt_factory_takes_the_scorer_wide_keywords(path: str, keyword: str) -> None:
    # The checks (livescore.checks) take neither: they call no judge and set no labels, and
    # they compare the run with text you give them, which placeholders would no longer match.
    parameter = inspect.signature(_factory(path)).parameters.get(keyword)
    assert parameter is not None, f"{path} has no {keyword}="
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None


def test_a_calibration_sets_a_judge_scorers_label() -> None:
    # One claim, judged hallucinated: a hallucination score of 1.0, labelled by the scorer's own
    # bands; a calibration whose threshold is above it says the label is not the defect.
    script = [
        {"claims": ["Paris is in Spain."]},
        {"verdicts": [{"statement": "Paris is in Spain.", "verdict": "yes", "reason": "-"}]},
        "The score is 1 because the claim is not in the context.",
    ]
    calibration = Calibration(
        "strict",
        (CalibrationEntry("hallucination", "scripted", 1.5, "high"),),
        created="",
    )
    run = {"input": "Where is Paris?", "output": "Paris is in Spain."}
    plain = create_hallucination_scorer(model=ScriptedJudge(list(script)), context=["France."])
    calibrated = create_hallucination_scorer(
        model=ScriptedJudge(list(script)), context=["France."], calibration=calibration
    )
    before, after = plain.run_sync(run), calibrated.run_sync(run)
    assert before.score == after.score == 1.0
    assert before.label != after.label
    assert after.attributes["livescore.calibration"] == calibration.id


def test_a_calibration_for_another_judge_model_is_refused_when_built() -> None:
    other = Calibration(
        "x", (CalibrationEntry("hallucination", "gpt-4o", 0.5, "high"),), created=""
    )
    with pytest.raises(CalibrationError, match="gpt-4o"):
        create_hallucination_scorer(model=ScriptedJudge([]), calibration=other)


def test_a_code_scorer_takes_a_calibration_without_a_judge_model() -> None:
    calibration = Calibration(
        "cov", (CalibrationEntry("keyword-coverage", None, 0.9, "low"),), created=""
    )
    scorer = create_keyword_coverage_scorer(calibration=calibration)
    result = scorer.run_sync({"input": "red green blue", "output": "red"})
    assert result.score is not None
    assert result.score < 0.9
    assert result.attributes["livescore.calibration"] == calibration.id
