"""``redact=`` on every prebuilt scorer factory: the factory's scorer keeps personal data from
its judge and from its result, exactly as ``Scorer.with_redaction`` does."""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

import pytest
from _pii_support import CONTEXT, claims_judge, leaks, personal_run, redactor

from livescore.scorers import (
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_keyword_coverage_scorer,
    scorer_catalog,
)
from livescore.testing import OpenAITestServer

# The checks (livescore.checks) take no redact=: they call no judge, and they compare the
# run with text you give them, which placeholders would no longer match.
FACTORIES = sorted(
    {e.factory for e in scorer_catalog() if e.factory.startswith("livescore.scorers.")}
)


def _factory(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("path", FACTORIES)
def test_every_prebuilt_factory_takes_redact(path: str) -> None:
    parameter = inspect.signature(_factory(path)).parameters.get("redact")
    assert parameter is not None, f"{path} has no redact="
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None


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
