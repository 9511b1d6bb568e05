"""run_evals shares identical judge requests between the scorers of one item (a RunMemo
per item), never across items."""

from __future__ import annotations

import re
from typing import Any

from livescore.evals import run_evals_sync
from livescore.scorers import create_faithfulness_scorer, create_hallucination_scorer
from livescore.testing import OpenAITestServer


def claims_judge(body: dict[str, Any]) -> Any:
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "ExtractedClaims":
        return {"claims": ["The answer is 4."]}
    if name in ("ClaimVerdicts", "FaithfulnessVerdicts"):
        found = re.findall(r'<claim index="\d+">', str(body["messages"][-1]["content"]))
        return {"verdicts": [{"statement": "", "verdict": "no", "reason": "r"}] * len(found)}
    return "The score is as computed."


def test_each_item_extracts_its_claims_once() -> None:
    data = [
        {"input": "2+2?", "output": "The answer is 4.", "context": ["2+2 is 4."]},
        {"input": "2+2?", "output": "The answer is 4.", "context": ["2+2 is 4."]},
    ]
    with OpenAITestServer(responder=claims_judge) as server:
        judge = server.judge()
        result = run_evals_sync(
            data,
            [create_hallucination_scorer(model=judge), create_faithfulness_scorer(model=judge)],
        )

    extractions = [
        r
        for r in server.requests
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "ExtractedClaims"
    ]
    assert len(extractions) == 2  # one per item, not one per scorer and item
    assert len(server.requests) == 10
    assert result.usage.calls == 10
    assert result.usage.shared == 2
    assert result.scores["hallucination"].mean == 0.0
    assert result.scores["faithfulness"].mean == 0.0  # "no" here means contradicted
    for item in result.items:
        shared = [s.usage.shared for s in item.scores.values()]
        assert sorted(shared) == [0, 1]
