"""``redact=`` on a prebuilt scorer factory: the factory's scorer keeps personal data from its
judge and from its result, exactly as ``Scorer.with_redaction`` does (that every factory takes
it: ``tests/scorers/test_factory_calibration.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _pii_support import CONTEXT, claims_judge, leaks, personal_run, redactor

from livescore.scorers import (
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_keyword_coverage_scorer,
)
from livescore.testing import OpenAITestServer


@pytest.mark.parametrize("factory", [create_hallucination_scorer, create_faithfulness_scorer])
def test_a_judge_scorer_built_with_redact_sends_placeholders_only(factory: Any) -> None:
    with OpenAITestServer(responder=claims_judge) as server:
        scorer = factory(model=server.judge(), context=CONTEXT, redact=redactor())
        result = scorer.run_sync(personal_run())
        requests = list(server.requests)
    assert result.status == "scored", result.error
    assert result.flags["redacted"] is True
    prompts = json.dumps(requests)
    assert "<PERSON_1>" in prompts
    assert "<EMAIL_1>" in prompts
    assert leaks([requests, result.reason, result.preprocess_step_result]) == []


def test_a_code_scorer_built_with_redact_records_placeholders_only() -> None:
    plain = create_keyword_coverage_scorer()
    redacted = create_keyword_coverage_scorer(redact=redactor())
    assert leaks([plain.run_sync(personal_run()).reason])  # the reason names what it found
    result = redacted.run_sync(personal_run())
    assert result.flags["redacted"] is True
    assert leaks([result.reason, result.analyze_step_result, result.preprocess_step_result]) == []
