"""The keyword coverage scorer: Mastra's examples, edge cases, options and bad input."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pytest

from livescore import Run, ScorerRunError
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore.scorers import create_keyword_coverage_scorer
from livescore.scorers._keyword_coverage import KEYWORD_COVERAGE_LABELS, keyword_coverage_label

# Mastra's three inputs, with realistic agent answers. Keyword sets derived by hand from
# the rules (SMART stopwords, Snowball stems, technical and compound terms).
REACT_Q = "JavaScript frameworks like React and Vue"
REACT_A = "The most popular JavaScript framework choices are React.js and Vue.js."
TS_Q = "TypeScript offers interfaces, generics, and type inference"
TS_A_PARTIAL = (
    "TypeScript adds static typing to JavaScript: you describe object shapes with an "
    "interface, write reusable code with generic functions, and the compiler infers types "
    "for you when you leave annotations out."
)
TS_A_FULL = (
    "TypeScript offers static typing on top of JavaScript. Interfaces describe the shape of "
    "objects, generic functions stay reusable across types, and type inference works out "
    "most annotations for you."
)
ML_Q = (
    "Machine learning models require data preprocessing, feature engineering, and "
    "hyperparameter tuning"
)
ML_A = (
    "A machine learning model is only as good as its data. Preprocess the data first "
    "(cleaning, scaling), then engineer features, and finally tune the hyperparameters with "
    "cross-validation."
)


def score(run: dict[str, Any], **options: Any) -> Any:
    return create_keyword_coverage_scorer(**options).run_sync(run)


# -- Mastra's examples ----------------------------------------------------------------------


def test_frameworks_example_word_forms_and_js_names() -> None:
    result = score({"input": REACT_Q, "output": REACT_A})
    assert result.preprocess_step_result == {
        "reference_keywords": {"javascript", "frameworks", "react", "vue"},
        "response_keywords": {
            "popular",
            "javascript",
            "framework",
            "choices",
            "react.js",
            "vue.js",
        },
    }
    assert result.analyze_step_result == {
        "total_keywords": 4,
        "matched_keywords": 4,
        "missing_keywords": [],
    }
    assert result.score == 1.0
    assert result.label == "complete"
    assert result.reason == "Covered all 4 keywords of the input."


def test_typescript_example_compound_needs_the_adjacent_pair() -> None:
    # "infers types" is not "type inference"; "adds" is not "offers".
    result = score({"input": TS_Q, "output": TS_A_PARTIAL})
    assert result.preprocess_step_result["reference_keywords"] == {
        "typescript",
        "offers",
        "interfaces",
        "generics",
        "type inference",
    }
    assert result.analyze_step_result == {
        "total_keywords": 5,
        "matched_keywords": 3,
        "missing_keywords": ["offers", "type inference"],
    }
    assert result.score == pytest.approx(0.6)
    assert result.label == "partial"
    assert result.reason == (
        "Covered 3 of 5 keywords of the input; missing: offers, type inference."
    )


def test_typescript_example_full_answer() -> None:
    result = score({"input": TS_Q, "output": TS_A_FULL})
    assert result.score == 1.0
    assert {"type inference", "static typing", "interfaces", "generic"} <= (
        result.preprocess_step_result["response_keywords"]
    )


def test_machine_learning_example() -> None:
    result = score({"input": ML_Q, "output": ML_A})
    assert result.preprocess_step_result["reference_keywords"] == {
        "machine learning",
        "models",
        "require",
        "data",
        "preprocessing",
        "feature engineering",
        "hyperparameter tuning",
    }
    assert result.analyze_step_result == {
        "total_keywords": 7,
        "matched_keywords": 4,
        "missing_keywords": ["feature engineering", "hyperparameter tuning", "require"],
    }
    assert result.score == 4 / 7  # unrounded
    assert result.label == "partial"
    assert result.reason == (
        "Covered 4 of 7 keywords of the input; missing: feature engineering, "
        "hyperparameter tuning, require."
    )


# -- empty texts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ({"input": "", "output": ""}, 1.0),
        ({"input": [], "output": {"messages": []}}, 1.0),
        ({"input": "  \n", "output": "\t"}, 1.0),
        # Only stopwords and numbers count as empty too.
        ({"input": "What is 17 * 23?", "output": "391"}, 1.0),
        ({"input": "", "output": "Redis caches sessions"}, 0.0),
        ({"input": "Is it?", "output": "Redis caches sessions"}, 0.0),
        ({"input": "Redis caching", "output": ""}, 0.0),
        ({"input": "Redis caching", "output": "It is, yes."}, 0.0),
    ],
)
def test_empty_rules(run: dict[str, Any], expected: float) -> None:
    result = score(run)
    assert result.status == "scored"
    assert result.score == expected
    assert result.label == ("complete" if expected else "none")


@pytest.mark.parametrize(
    ("run", "missing"),
    [
        ({"input": None, "output": None}, "no user text found in the run: the run has no input"),
        ({"input": "Redis caching", "output": None}, "no answer text found"),
        ({"input": {"topic": "Redis"}, "output": "Redis caches"}, "no user text found"),
        ({"input": "Redis caching", "output": {"answer": "Redis"}}, "no answer text found"),
    ],
)
def test_runs_with_no_text_to_compare_are_skipped(run: dict[str, Any], missing: str) -> None:
    # Regression: a run whose output is a dict (a RunnableLambda) or whose input is a dict of
    # prompt variables (prompt | model | parser) scored 0.0 or 1.0 on empty strings.
    result = score(run)
    assert (result.status, result.score) == ("skipped", None)
    assert missing in (result.reason or "")


def test_keyword_counts_are_span_attributes() -> None:
    result = score({"input": "Redis caching layers", "output": "Redis caching"})
    assert result.attributes == {
        "livescore.keywords.total": 3,
        "livescore.keywords.matched": 2,
    }


def test_empty_rules_follow_the_scale() -> None:
    assert score({"input": "", "output": ""}, scale=10).score == 10.0
    assert score({"input": "", "output": "Redis"}, scale=10).score == 0.0


def test_empty_reasons() -> None:
    assert score({"input": "", "output": ""}).reason == (
        "Neither the input nor the response has keywords (empty, or only stopwords and "
        "numbers): nothing to cover."
    )
    assert score({"input": "Why?", "output": "Redis caches sessions"}).reason == (
        "The input has no keywords (empty, or only stopwords and numbers) but the response "
        "has 3: scored 0, as for any run where only one side has keywords."
    )
    assert score({"input": "Redis caching", "output": ""}).reason == (
        "The response has no keywords; missing all 2 keywords: caching, redis."
    )


# -- matching -------------------------------------------------------------------------------


def test_case_and_stopwords_do_not_matter() -> None:
    result = score(
        {"input": "How do I use JAVASCRIPT closures?", "output": "In JavaScript, a Closure…"}
    )
    assert result.preprocess_step_result["reference_keywords"] == {"javascript", "closures"}
    assert result.score == 1.0


def test_stemming_option() -> None:
    run = {"input": "running dogs", "output": "a dog that runs"}
    assert score(run).score == 1.0
    assert score(run, stemming=False).score == 0.0


def test_technical_terms_in_a_run() -> None:
    run = {
        "input": "Compare C++, C# and Node.js for GPT-4 tooling",
        "output": "For gpt4 tools, NodeJS is quickest to start; C# is fine; C is not C++.",
    }
    result = score(run)
    assert result.preprocess_step_result["reference_keywords"] == {
        "compare",
        "c++",
        "c#",
        "node.js",
        "gpt-4",
        "tooling",
    }
    assert result.analyze_step_result["missing_keywords"] == ["compare"]
    assert result.score == 5 / 6


def test_extra_stopwords_and_compound_terms_options() -> None:
    run = {
        "input": "Explain vector clocks",
        "output": "A vector of clocks, one per node, orders events.",
    }
    assert score(run).analyze_step_result["missing_keywords"] == ["explain"]
    tuned = score(run, extra_stopwords=["Explain"], compound_terms=["vector clock"])
    assert tuned.preprocess_step_result["reference_keywords"] == {"vector clocks"}
    assert tuned.score == 0.0  # "vector of clocks" is not the term
    assert score(run, builtin_compound_terms=False).analyze_step_result["total_keywords"] == 3


def test_reason_lists_at_most_twenty_missing_keywords() -> None:
    words = [f"k{i:02d}z" for i in range(25)]  # technical terms: never stemmed together
    result = score({"input": " ".join(words), "output": words[0]})
    assert result.analyze_step_result["missing_keywords"] == sorted(words[1:])
    assert result.reason == (
        "Covered 1 of 25 keywords of the input; missing: "
        + ", ".join(sorted(words[1:])[:20])
        + " and 4 more."
    )


# -- message lists and ground truth ---------------------------------------------------------


@dataclass
class FakeLangChainMessage:
    """Duck-typed stand-in for a LangChain message (the core never imports LangChain)."""

    type: str
    content: str


def test_chat_message_lists() -> None:
    run = {
        "input": [
            {"role": "system", "content": "You are a helpful tutor about Rust ownership."},
            {"role": "user", "content": "Tell me about Python decorators"},
            {"role": "assistant", "content": "Decorators wrap functions."},
            {"role": "user", "content": "And Python generators?"},
        ],
        "output": [
            FakeLangChainMessage("human", "And Python generators?"),
            FakeLangChainMessage("ai", "Generators in Python yield values lazily."),
        ],
    }
    result = score(run)
    # Only the last user message is the reference; only the last answer the response.
    assert result.preprocess_step_result == {
        "reference_keywords": {"python", "generators"},
        "response_keywords": {"generators", "python", "yield", "values", "lazily"},
    }
    assert result.score == 1.0


def test_content_part_lists() -> None:
    run = {
        "input": [{"role": "user", "content": [{"type": "text", "text": "Kafka partitions"}]}],
        "output": {"role": "assistant", "content": "Each Kafka topic has partitions."},
    }
    assert score(run).score == 1.0


def test_ground_truth_reference() -> None:
    run = {
        "input": "Who wrote it?",
        "output": "Guido van Rossum created Python in 1991.",
        "ground_truth": "Python was created by Guido van Rossum at CWI",
    }
    result = score(run, reference="ground_truth")
    assert result.preprocess_step_result["reference_keywords"] == {
        "python",
        "created",
        "guido",
        "van",
        "rossum",
        "cwi",
    }
    assert result.analyze_step_result["missing_keywords"] == ["cwi"]
    assert result.score == 5 / 6
    assert result.reason == "Covered 5 of 6 keywords of the ground truth; missing: cwi."


def test_ground_truth_as_messages_and_lists() -> None:
    run = {
        "input": "?",
        "output": "Redis and Memcached",
        "ground_truth": ["Redis", {"role": "assistant", "content": "Memcached"}],
    }
    assert score(run, reference="ground_truth").score == 1.0


def test_missing_ground_truth_is_not_scorable() -> None:
    result = score({"input": "Redis caching", "output": "Redis"}, reference="ground_truth")
    assert result.status == "skipped"
    assert result.score is None
    assert "no ground truth" in str(result.reason)


def test_empty_ground_truth_follows_the_empty_rules() -> None:
    run = {"input": "Redis", "output": "", "ground_truth": ""}
    assert score(run, reference="ground_truth").score == 1.0


def test_ground_truth_that_is_not_text_fails_in_preprocess() -> None:
    scorer = create_keyword_coverage_scorer(reference="ground_truth")
    for truth in ({"answer": "Redis"}, 42):
        with pytest.raises(ScorerRunError) as info:
            scorer.run_sync({"input": "q", "output": "Redis", "ground_truth": truth})
        assert info.value.step == "preprocess"
        assert "ground truth must be text" in str(info.value)
        assert info.value.result.status == "failed"


# -- big and bad input ----------------------------------------------------------------------


def test_very_large_output_is_truncated_and_flagged() -> None:
    filler = "lorem ipsum dolor " * 200_000  # 3.6 MB
    run = {"input": "Redis sentinel failover", "output": "Redis sentinel. " + filler + "failover"}
    result = score(run)
    assert result.flags["output_truncated"] is True
    assert result.flags["output_chars"] == len(run["output"])
    # The keyword past the cut is not seen.
    assert result.analyze_step_result["missing_keywords"] == ["failover"]
    assert result.score == 2 / 3


def test_large_ground_truth_is_truncated_and_flagged() -> None:
    truth = "Redis " + "x" * 100 + " failover"
    result = score(
        {"input": "q", "output": "Redis failover", "ground_truth": truth},
        reference="ground_truth",
        max_text_chars=50,
    )
    assert result.flags == {"ground_truth_truncated": True, "ground_truth_chars": len(truth)}
    assert result.preprocess_step_result["reference_keywords"] == {"redis", "x" * 44}


@pytest.mark.parametrize("output", [42, b"bytes", object()])
def test_non_text_output_is_skipped_with_its_type(output: object) -> None:
    scorer = create_keyword_coverage_scorer()
    result = scorer.run_sync(Run(input="Redis", output=output))
    assert result.status == "skipped"
    assert type(output).__name__ in (result.reason or "")


@pytest.mark.parametrize("scale", [0, -1, math.nan, math.inf, True, "1", None])
def test_invalid_scale(scale: Any) -> None:
    with pytest.raises(ValueError, match="scale must be a positive"):
        create_keyword_coverage_scorer(scale=scale)


@pytest.mark.parametrize("reference", ["output", "groundTruth", "", None])
def test_invalid_reference(reference: Any) -> None:
    with pytest.raises(ValueError, match="reference must be 'input' or 'ground_truth'"):
        create_keyword_coverage_scorer(reference=reference)


def test_invalid_options() -> None:
    with pytest.raises(TypeError, match="not one string"):
        create_keyword_coverage_scorer(extra_stopwords="please")
    with pytest.raises(ValueError, match="at least two words"):
        create_keyword_coverage_scorer(compound_terms=["kubernetes"])
    with pytest.raises(ValueError, match="max_text_chars must be positive"):
        create_keyword_coverage_scorer(max_text_chars=0)
    with pytest.raises(ValueError, match="non-empty string id"):
        create_keyword_coverage_scorer(id="")


# -- scale, labels, result ------------------------------------------------------------------


def test_scale_multiplies_the_unrounded_share() -> None:
    result = score({"input": ML_Q, "output": ML_A}, scale=10)
    assert result.score == 4 / 7 * 10
    assert result.label == "partial"


@pytest.mark.parametrize(
    ("ratio", "label"),
    [
        (1.0, "complete"),
        (0.99, "high"),
        (0.7, "high"),
        (0.65, "high"),
        (0.64, "partial"),
        (0.5, "partial"),
        (0.35, "partial"),
        (0.34, "low"),
        (0.1, "low"),
        (0.01, "low"),
        (0.0, "none"),
    ],
)
def test_label_bands(ratio: float, label: str) -> None:
    assert keyword_coverage_label(ratio) == label
    assert keyword_coverage_label(ratio * 4, scale=4) == label
    assert label in KEYWORD_COVERAGE_LABELS


def test_label_rejects_a_bad_scale() -> None:
    with pytest.raises(ValueError, match="scale"):
        keyword_coverage_label(0.5, scale=0)


def test_result_shape_and_json() -> None:
    scorer = create_keyword_coverage_scorer(id="kw")
    result = scorer.run_sync({"input": REACT_Q, "output": REACT_A, "run_id": "r1"})
    assert (result.run_id, result.scorer_id, result.status) == ("r1", "kw", "scored")
    assert scorer.judge is None
    assert result.usage.calls == 0
    assert result.judge_model is None
    assert result.flags == {}
    plain = json.loads(json.dumps(result.to_dict()))
    assert plain["preprocess_step_result"]["reference_keywords"] == [
        "frameworks",
        "javascript",
        "react",
        "vue",
    ]


@pytest.mark.anyio
async def test_async_run_and_reuse() -> None:
    scorer = create_keyword_coverage_scorer()
    first = await scorer.run({"input": REACT_Q, "output": REACT_A})
    second = await scorer.run({"input": ML_Q, "output": ML_A})
    assert (first.score, second.score) == (1.0, 4 / 7)


def test_default_max_text_chars_is_the_pipeline_default() -> None:
    assert create_keyword_coverage_scorer().max_text_chars == DEFAULT_MAX_TEXT_CHARS
