"""The scorers ``livescore worker`` runs in ``bench/fleet.py`` (``_fleet_scorers:scorers``).

Configured from the environment, since each worker is a fresh process: ``BENCH_JUDGE_URL``
(the bench judge server), ``BENCH_JUDGE_LATENCY`` (seconds per reply), ``BENCH_MODE``
(``three_step`` or ``one_call``) and ``BENCH_SCORERS`` (``all``, or ``keyword`` for keyword
coverage alone: the worker's cost without a judge).
"""

from __future__ import annotations

import os
from typing import Any

from _common import judge_model

from livescore.judges import OpenAIJudge
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer

scorers: list[Any] = [create_keyword_coverage_scorer()]
if os.environ.get("BENCH_SCORERS", "all") != "keyword":
    judge = OpenAIJudge(
        judge_model(float(os.environ.get("BENCH_JUDGE_LATENCY", "0.2"))),
        base_url=os.environ["BENCH_JUDGE_URL"],
        api_key="bench",
        max_concurrency=512,
        timeout=60,
    )
    # The run's own tool results are its ground truth (livescore.get_run_context, the
    # default), read on the worker from the serialised run.
    scorers.insert(
        0,
        create_hallucination_scorer(
            model=judge,
            judge_mode=os.environ.get("BENCH_MODE", "three_step"),  # type: ignore[arg-type]
        ),
    )
