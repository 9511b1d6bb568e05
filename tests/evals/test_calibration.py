"""Calibration against the user's own labels: fit_calibration on one scripted judge's
scores, the Calibration file (round trip, bad files), and a scorer that applies it.

The judge is the OpenAI-compatible test server answering the hallucination scorer's logprob
question with a probability read from the item: a judge biased low, whose P("no")
stays under 0.5 on every hallucinated answer, so the scorer's own labels (and a 0.5
threshold) call them all fine.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from livescore import create_scorer
from livescore.evals import fit_calibration, run_evals_sync
from livescore.evals._calibrate import isotonic_fit
from livescore.otel import attributes as A
from livescore.scorers import create_hallucination_scorer
from livescore.scoring import Calibration, CalibrationEntry, CalibrationError, ScoreResult
from livescore.testing import OpenAITestServer, Reply


def biased_judge(body: dict[str, Any]) -> Reply:
    """P("no") is the number the output carries ("[p=0.31]")."""
    prompt = str(body["messages"][-1]["content"])
    found = re.search(r"\[p=([0-9.]+)\]", prompt)
    p = float(found.group(1)) if found else 0.5
    return Reply.token_probabilities({"no": p, "yes": 1 - p})


def labelled_items(n: int, seed: int) -> tuple[list[dict[str, Any]], list[int]]:
    """Half hallucinated (P 0.25–0.45), half faithful (P 0.02–0.20), shuffled."""
    rng = random.Random(seed)
    items, labels = [], []
    for i in range(n):
        bad = i % 2
        p = rng.uniform(0.25, 0.45) if bad else rng.uniform(0.02, 0.20)
        items.append(
            {
                "id": f"item-{seed}-{i}",
                "input": "Where is the office?",
                "output": f"The office is in town. [p={p:.3f}]",
                "context": ["The office is in Lyon."],
            }
        )
        labels.append(bad)
    return items, labels


def test_a_calibration_moves_the_labels_a_biased_judge_gets_wrong(tmp_path: Path) -> None:
    items, labels = labelled_items(40, seed=1)
    with OpenAITestServer(responder=biased_judge) as server:
        scorer = create_hallucination_scorer(model=server.judge("judge-a"), judge_mode="logprob")
        raw = run_evals_sync(items, [scorer])
        calibration = fit_calibration(raw, labels, label="hallucinated")

        # Uncalibrated: every hallucinated answer scores under 0.5 (labels "low", never a
        # defect at the usual threshold).
        raw_scores = [it.scores["hallucination"].score or 0.0 for it in raw.items]
        assert all(s < 0.5 for s in raw_scores)
        assert {it.scores["hallucination"].label for it in raw.items} == {"low"}

        (entry,) = calibration.entries
        assert (entry.scorer_id, entry.judge_model, entry.defect_when) == (
            "hallucination",
            "judge-a",
            "high",
        )
        assert 0.20 <= entry.threshold <= 0.25  # between the two score ranges
        assert entry.fitted_on == 20
        assert entry.held_out["n"] == 20
        assert entry.held_out["accuracy"] == 1.0
        assert entry.probability_map  # continuous scores: a probability map
        assert entry.held_out["brier"] is not None
        assert entry.held_out["brier_base_rate"] is not None
        assert entry.held_out["brier"] < entry.held_out["brier_base_rate"]

        # New items from the same judge, never seen by the fit: the calibrated scorer
        # labels every one as its label says.
        fresh, fresh_labels = labelled_items(20, seed=2)
        calibrated = scorer.with_calibration(calibration)
        result = run_evals_sync(fresh, [calibrated])
    scored = [it.scores["hallucination"] for it in result.items]
    assert [s.label for s in scored] == [
        "hallucinated" if y else "not_hallucinated" for y in fresh_labels
    ]
    for s in scored:
        assert s.attributes[A.LIVESCORE_CALIBRATION] == calibration.id
        assert s.attributes[A.LIVESCORE_CALIBRATION_THRESHOLD] == entry.threshold
        probability = s.attributes[A.LIVESCORE_CALIBRATION_PROBABILITY]
        assert isinstance(probability, float)
        assert 0.0 <= probability <= 1.0
    # The probability follows the score: higher never means less likely.
    by_score = sorted(
        (s.score or 0.0, float(s.attributes[A.LIVESCORE_CALIBRATION_PROBABILITY])) for s in scored
    )
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(by_score))
    # The score itself is the judge's, unchanged.
    plain = {it.id: it.scores["hallucination"].score for it in result.items}
    assert all(p is not None and p < 0.5 for p in plain.values())


def test_a_calibration_fitted_for_another_judge_model_is_refused_at_construction() -> None:
    calibration = Calibration(
        "hallucinated",
        (CalibrationEntry("hallucination", "judge-a", 0.22, "high"),),
        created="2026-01-01T00:00:00+00:00",
    )
    with OpenAITestServer([]) as server:
        other = create_hallucination_scorer(model=server.judge("judge-b"), judge_mode="logprob")
        with pytest.raises(CalibrationError) as caught:
            other.with_calibration(calibration)
        assert server.requests == []  # refused before any score
    message = str(caught.value)
    assert "\n" not in message
    assert "fitted for judge model 'judge-a', not 'judge-b'" in message

    length = create_scorer(
        id="length",
        description="Characters",
        generate_score=lambda ctx: float(len(ctx.output_text)),
    )
    with pytest.raises(CalibrationError, match="has no entry for scorer 'length'"):
        create_scorer(
            id="length",
            description="Characters",
            generate_score=lambda ctx: 1.0,
            calibration=calibration,
        )
    with pytest.raises(CalibrationError, match=r"\(it calibrates: hallucination\)"):
        length.with_calibration(calibration)


def test_create_scorer_takes_a_calibration_file(tmp_path: Path) -> None:
    calibration = Calibration(
        "long", (CalibrationEntry("length", None, 10.0, "high"),), created="2026-01-01T00:00Z"
    )
    path = calibration.save(tmp_path / "calibration.json")
    length = create_scorer(
        id="length",
        description="Characters",
        generate_score=lambda ctx: float(len(ctx.output_text)),
        label=lambda score: "some",
        calibration=path,
    )

    assert length.run_sync({"input": "q", "output": "a long answer"}).label == "long"
    assert length.run_sync({"input": "q", "output": "short"}).label == "not_long"
    assert length.calibration == calibration


def test_low_scores_predict_the_label_for_a_scorer_where_higher_is_better() -> None:
    # Faithfulness-like: the share of supported claims; a low one marks the defect.
    rng = random.Random(3)
    rows = [(rng.uniform(0.55, 0.8), 1) for _ in range(20)] + [
        (rng.uniform(0.85, 1.0), 0) for _ in range(20)
    ]
    items = [{"id": str(i), "input": "q", "output": f"{s:.4f}"} for i, (s, _) in enumerate(rows)]
    read = create_scorer(
        id="supported", description="The share", generate_score=lambda ctx: float(ctx.output_text)
    )
    result = run_evals_sync(items, [read])

    calibration = fit_calibration(
        result, [y for _, y in rows], label="unfaithful", higher_is_better={"supported": True}
    )

    (entry,) = calibration.entries
    assert entry.defect_when == "low"
    assert 0.8 <= entry.threshold <= 0.85
    assert entry.held_out["accuracy"] == 1.0
    assert entry.probability(0.6) == 1.0
    assert entry.probability(0.95) == 0.0
    applied = calibration.apply(ScoreResult(run_id="r", scorer_id="supported", score=0.7))
    assert applied.label == "unfaithful"


def test_one_entry_per_judge_model_when_a_scorer_was_judged_by_several() -> None:
    rows = [(0.1 + 0.02 * i, int(i >= 10)) for i in range(20)]
    items: list[Any] = []
    labels: list[int] = []
    for model in ("big", "small"):
        for i, (score, y) in enumerate(rows):
            items.append({"id": f"{model}-{i}", "input": model, "output": f"{score}"})
            labels.append(y)
    judged = create_scorer(
        id="judged", description="d", generate_score=lambda ctx: float(ctx.output_text)
    )
    result = run_evals_sync(items, [judged])
    for item in result.items:  # as if a budget's fallback judged half of them
        item.scores["judged"].judge_model = str(item.input)

    calibration = fit_calibration(result, labels, label="bad", higher_is_better={"judged": False})

    assert sorted(e.judge_model or "" for e in calibration.entries) == ["big", "small"]
    # A result judged by "small" is calibrated with small's entry; one by a judge the file
    # does not know keeps its own label.
    small = ScoreResult(run_id="r", scorer_id="judged", score=0.5, judge_model="small")
    assert calibration.apply(small).label == "bad"
    unknown = ScoreResult(run_id="r", scorer_id="judged", score=0.5, label="x", judge_model="z")
    assert calibration.apply(unknown) is unknown


def test_nothing_to_fit_is_one_line_saying_why() -> None:
    items = [{"id": str(i), "input": "q", "output": "x"} for i in range(6)]
    same = create_scorer(id="same", description="d", generate_score=lambda ctx: 1.0)
    result = run_evals_sync(items, [same])

    with pytest.raises(CalibrationError) as caught:
        fit_calibration(result, [1, 1, 1, 1, 1, 0], label="bad")
    assert "\n" not in str(caught.value)
    assert "same: 6 labelled item(s) leave a half without one of the classes" in str(caught.value)
    with pytest.raises(CalibrationError, match="same: no labelled item was scored"):
        fit_calibration(result, [None] * 6, label="bad")


# -- the file -------------------------------------------------------------------------------


def sample_calibration() -> Calibration:
    return Calibration(
        label="hallucinated",
        entries=(
            CalibrationEntry(
                "hallucination",
                "gpt-4o-mini",
                0.225,
                "high",
                probability_map=((0.05, 0.0), (0.2, 0.1), (0.3, 0.9)),
                fitted_on=20,
                held_out={"n": 20, "accuracy": 0.95, "auroc": None},
            ),
            CalibrationEntry("faithfulness", "gpt-4o-mini", 0.7, "low"),
        ),
        created="2026-12-06T04:00:00+00:00",
    )


def test_the_file_round_trips_and_its_id_names_its_content(tmp_path: Path) -> None:
    calibration = sample_calibration()
    path = calibration.save(tmp_path / "calibration.json")

    loaded = Calibration.load(path)

    assert loaded == calibration
    assert loaded.id == calibration.id
    assert re.fullmatch(r"cal-[0-9a-f]{12}", loaded.id)
    data = json.loads(path.read_text())
    assert data["format"] == 1
    assert data["label"] == "hallucinated"
    assert data["created"] == "2026-12-06T04:00:00+00:00"
    assert data["scorers"][0]["probability_map"] == [[0.05, 0.0], [0.2, 0.1], [0.3, 0.9]]
    data["scorers"][0]["threshold"] = 0.3
    path.write_text(json.dumps(data))
    assert Calibration.load(path).id != calibration.id


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read it"),
        ("{not json", "not JSON"),
        ("[]", "the file holds no JSON object"),
        ('{"format": 2}', "calibration format 2 is not one this livescore reads (1)"),
        ('{"format": 1, "label": "x", "scorers": []}', "scorers must be a non-empty list"),
        (
            '{"format": 1, "label": "x", "scorers": [{"scorer_id": "h", "threshold": "high",'
            ' "defect_when": "high"}]}',
            "scorers[0] (h): threshold must be a finite number",
        ),
        (
            '{"format": 1, "label": "x", "scorers": [{"scorer_id": "h", "threshold": 0.5,'
            ' "defect_when": "up"}]}',
            "scorers[0] (h): defect_when must be 'high' or 'low'",
        ),
        (
            '{"format": 1, "label": "x", "scorers": [{"scorer_id": "h", "threshold": 0.5,'
            ' "defect_when": "high", "probability_map": [[0.5, 0.2], [0.1, 0.9]]}]}',
            "probability_map scores must be ascending",
        ),
        (
            '{"format": 1, "label": "x", "scorers": [{"scorer_id": "h", "threshold": 0.5,'
            ' "defect_when": "high", "probability_map": [[0.5, 1.2]]}]}',
            "probability_map probabilities lie in [0, 1]",
        ),
        (
            '{"format": 1, "label": "x", "scorers": ['
            '{"scorer_id": "h", "threshold": 0.5, "defect_when": "high"},'
            '{"scorer_id": "h", "threshold": 0.4, "defect_when": "high"}]}',
            "two entries for scorer 'h' and judge model None",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_the_problem(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "calibration.json"
    if content is not None:
        path.write_text(content)

    with pytest.raises(CalibrationError) as caught:
        Calibration.load(path)

    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert problem in message


# -- the isotonic fit -----------------------------------------------------------------------


def test_isotonic_fit_pools_violators_and_ties() -> None:
    # Ties pool first (0.2: mean 0.5); 0.3's 0 violates 0.2's 0.5 and pools with it.
    assert isotonic_fit([0.1, 0.2, 0.2, 0.3, 0.4], [0, 1, 0, 0, 1]) == (
        (0.1, 0.0),
        (0.2, 1 / 3),
        (0.3, 1 / 3),
        (0.4, 1.0),
    )
    # Entirely reversed data: one block, the base rate.
    assert isotonic_fit([1.0, 2.0, 3.0, 4.0], [1, 1, 0, 0]) == ((1.0, 0.5), (4.0, 0.5))


def test_isotonic_fit_is_monotone_and_no_worse_than_any_monotone_step() -> None:
    rng = random.Random(7)
    scores = [rng.random() for _ in range(60)]
    labels = [int(rng.random() < s) for s in scores]
    points = isotonic_fit(scores, labels)
    values = [p[1] for p in points]
    assert values == sorted(values)
    entry = CalibrationEntry("s", None, 0.5, "high", probability_map=points)
    fitted_error = sum(
        ((entry.probability(s) or 0.0) - y) ** 2 for s, y in zip(scores, labels, strict=True)
    )
    # Every one-step monotone fit (0 below a cut, the rate above) is a candidate isotonic
    # regression minimises over: none beats it.
    for cut in sorted(scores):
        above = [y for s, y in zip(scores, labels, strict=True) if s >= cut]
        below = [y for s, y in zip(scores, labels, strict=True) if s < cut]
        low = sum(below) / len(below) if below else 0.0
        high = sum(above) / len(above)
        if low > high:
            continue
        step_error = sum((y - low) ** 2 for y in below) + sum((y - high) ** 2 for y in above)
        assert fitted_error <= step_error + 1e-9
