"""Score benchmark items with livescore's hallucination scorer in one judge mode.

Used in process by ``bench/_judge_quality_local.py``, and as a script for the A/B row that
scores with an earlier livescore (the package of another commit first on ``PYTHONPATH``)::

    python bench/_livescore_cell.py REQUEST.json RESULTS.json

``REQUEST.json``: ``{"base_url", "model", "mode", "max_tokens", "timeout", "items": [{"id",
"context", "question", "output", "hallucinated"}]}``. It uses only what every livescore
release with judge modes has: ``OpenAIJudge``, ``create_hallucination_scorer`` and
``run_evals``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from livescore.evals import run_evals
from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer


def score_items(
    items: list[dict[str, Any]],
    *,
    base_url: str,
    model: str,
    mode: str,
    max_tokens: int,
    timeout: float,
) -> list[dict[str, Any]]:
    """One row per item: ``{"id", "label", "score" (None: not scored), "tokens", "calls",
    "claims", "error"}``."""
    judge = OpenAIJudge(
        model,
        base_url=base_url,
        timeout=timeout,
        # No retry: llama.cpp's server finishes an abandoned answer before the next request,
        # so a retry after a timeout would wait behind it; the timeout is long instead.
        max_retries=0,
        max_concurrency=1,  # llama.cpp's server answers one request at a time anyway
        structured_output="json_object",  # all llama-cpp-python's server takes
        temperature=0.0,
        max_tokens=max_tokens,
    )
    scorer = create_hallucination_scorer(model=judge, judge_mode=mode)  # type: ignore[arg-type]
    data = [
        {
            "id": it["id"],
            "input": it.get("question") or "",
            "output": it["output"],
            "context": [it["context"]],
        }
        for it in items
    ]
    done_count = [0]

    def progress(item: Any) -> None:
        # A line every 10 items: a long run shows it is moving, and how well.
        done_count[0] += 1
        if done_count[0] % 10 == 0 or done_count[0] == len(data):
            score = item.scores.get("hallucination")
            status = score.status if score is not None else "no score"
            print(f"  {mode}: {done_count[0]}/{len(data)} items (last: {status})", flush=True)

    result = asyncio.run(run_evals(data, [scorer], concurrency=1, on_item_complete=progress))
    rows = []
    for it, done in zip(items, result.items, strict=True):
        score = done.scores.get("hallucination")
        error = None
        if score is None or score.score is None:
            error = (score.error or score.reason or score.status) if score else "no score"
        rows.append(
            {
                "id": it["id"],
                "label": int(it["hallucinated"]),
                "score": None if score is None else score.score,
                "tokens": score.usage.total_tokens if score is not None else 0,
                "calls": score.usage.calls if score is not None else 0,
                "claims": None if score is None else score.flags.get("claims_total"),
                "error": None if error is None else str(error)[:300],
            }
        )
    return rows


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as file:
        request = json.load(file)
    rows = score_items(
        request["items"],
        base_url=request["base_url"],
        model=request["model"],
        mode=request["mode"],
        max_tokens=int(request["max_tokens"]),
        timeout=float(request["timeout"]),
    )
    with open(argv[2], "w", encoding="utf-8") as out:
        json.dump(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
