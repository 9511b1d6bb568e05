"""The scorers module the fleet tests start ``livescore worker`` with (``fleet_scorers:scorers``).

Configured from environment variables, since each worker is a fresh process:

- ``FLEET_TEST_JUDGE_URL``: the tests' OpenAI-compatible server; the ``judged`` scorer asks
  it one question per score (so a test sees each score start on the server), and so does
  ``priced``, through a prompt step (so its usage and cost are the score's);
- ``FLEET_TEST_SINK_FILE``: where :class:`FileSinkDouble` appends one JSON line per score.

``crasher`` kills its worker process on an output containing ``POISON`` (a job that crashes
its worker every time); ``raiser`` raises on such an output (a scorer bug).
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from livescore import PromptStep, create_scorer
from livescore.judges import OpenAIJudge
from livescore.scorers import create_keyword_coverage_scorer
from livescore.sinks import ScoreRecord

_JUDGE_URL = os.environ.get("FLEET_TEST_JUDGE_URL")


def _crash_on_poison(ctx: Any) -> float:
    if "POISON" in ctx.output_text:
        os._exit(3)  # what a segfaulting extension or the OOM killer does to a worker
    return 1.0


def _raise_on_poison(ctx: Any) -> float:
    if "POISON" in ctx.output_text:
        raise ValueError("this scorer cannot read poisoned output")
    return 1.0


scorers: list[Any] = [
    create_keyword_coverage_scorer(),
    create_scorer(
        id="crasher", description="kills its worker on poison", generate_score=_crash_on_poison
    ),
    create_scorer(id="raiser", description="raises on poison", generate_score=_raise_on_poison),
]

if _JUDGE_URL:
    _judge = OpenAIJudge(
        "test-model",
        base_url=_JUDGE_URL,
        api_key="test-key",
        timeout=30.0,
        max_retries=int(os.environ.get("FLEET_TEST_JUDGE_RETRIES", "2")),
        max_concurrency=64,
        backoff_base=0.01,
    )

    async def _ask_judge(ctx: Any) -> float:
        reply = await _judge.generate_text(system="Answer yes or no.", prompt=ctx.output_text)
        return 1.0 if "yes" in str(reply.value).lower() else 0.0

    scorers.append(
        create_scorer(id="judged", description="asks the test judge", generate_score=_ask_judge)
    )
    # One judge prompt per score, as a PromptStep: its usage (and cost, with a price) is
    # the score's, so a judge budget (livescore worker --judge-budget) applies to it.
    scorers.append(
        create_scorer(
            id="priced",
            description="one prompt step answered by the test judge",
            model=_judge,
            generate_score=PromptStep(
                description="Answer yes or no",
                output_schema=None,
                create_prompt=lambda ctx: ctx.output_text,
                parse=lambda text, ctx: 1.0 if "yes" in str(text).lower() else 0.0,
            ),
        )
    )


class FileSinkDouble:
    """A test double of a score sink: appends each score as a JSON line to a file."""

    name = "file-double"

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()

    def send(self, record: ScoreRecord) -> None:
        line = json.dumps(
            {
                "run_id": record.run.run_id,
                "scorer_id": record.result.scorer_id,
                "status": record.result.status,
                "source": record.source,
            }
        )
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        return None


_SINK_FILE = os.environ.get("FLEET_TEST_SINK_FILE")
sinks = [FileSinkDouble(_SINK_FILE)] if _SINK_FILE else []
