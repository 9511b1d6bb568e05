"""The executor seam: a sampled run is a plain, JSON-safe job record."""

from __future__ import annotations

import json

import pytest
from _live_support import constant_scorer, make_run

from livescore.live import Executor, ScorerConfig, ScoringJob


def test_job_record_is_json_safe_and_round_trips() -> None:
    config = ScorerConfig(constant_scorer(), sampling=0.5, timeout=3)
    job = ScoringJob(make_run(3, metadata={"user": "u1"}), (config,))
    record = json.loads(json.dumps(job.to_dict()))
    assert record["scorers"] == [
        {"id": "constant", "version": "1", "sample_rate": 0.5, "timeout": 3}
    ]
    rebuilt = ScoringJob.from_dict(record, {"constant": config})
    assert rebuilt.run.to_dict() == job.run.to_dict()
    assert rebuilt.run.trace_id == job.run.trace_id
    assert rebuilt.scorers == (config,)


def test_unknown_scorer_on_the_worker_side_is_a_clear_error() -> None:
    job = ScoringJob(make_run(1), (ScorerConfig(constant_scorer("remote-only")),))
    with pytest.raises(KeyError, match="remote-only"):
        ScoringJob.from_dict(job.to_dict(), {})


def test_executor_protocol_is_structural() -> None:
    class ListExecutor:
        def __init__(self) -> None:
            self.jobs: list[dict[str, object]] = []

        def submit(self, job: ScoringJob) -> bool:
            self.jobs.append(job.to_dict())
            return True

        def flush(self, timeout: float | None = None) -> bool:
            return True

        def shutdown(self, timeout: float | None = None) -> None:
            return None

    assert isinstance(ListExecutor(), Executor)
    assert not isinstance(object(), Executor)
