"""The hand-off seam between sampling and scoring (DESIGN decision 8).

Today the only executor is the dispatcher's in-process worker thread. A fleet of agent
processes that shares one judge budget, or that must not lose its queue when a process
dies, needs the same job scored elsewhere: an executor that puts :meth:`ScoringJob.to_dict`
on an existing queue (Celery on Redis or RabbitMQ for live traffic, Ray for very large
offline runs), and a worker there that rebuilds the job with :meth:`ScoringJob.from_dict`,
runs the scorers it knows by id, and emits each score with
:meth:`livescore.otel.OTelEmitter.emit`: the run's trace and span ids travel in the record,
so the score span still nests under the run's span.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from livescore.live._sampling import ScorerConfig
from livescore.runs._model import Run

__all__ = ("Executor", "ScoringJob")


@dataclass(frozen=True, slots=True)
class ScoringJob:
    """One sampled run and the scorers that picked it: the unit an executor runs.

    Attributes:
        run: The captured run (JSON-safe through :meth:`~livescore.Run.to_dict`).
        scorers: The scorers to run on it, with their rates, timeouts and limits.

    Example:
        >>> from livescore import Run
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> job = ScoringJob(Run(input="hi", output="hello", run_id="r1"),
        ...                  (ScorerConfig(create_keyword_coverage_scorer()),))
        >>> job.to_dict()["run"]["run_id"]
        'r1'
    """

    run: Run
    scorers: tuple[ScorerConfig, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe record: the run, and each scorer by id with its rate and timeout."""
        return {
            "run": self.run.to_dict(),
            "scorers": [
                {
                    "id": c.scorer_id,
                    "version": c.scorer.version,
                    "sample_rate": c.rate,
                    "timeout": c.timeout,
                }
                for c in self.scorers
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], scorers: Mapping[str, ScorerConfig]) -> ScoringJob:
        """Rebuild a job on a remote worker from :meth:`to_dict` and its scorers by id.

        Raises:
            KeyError: A scorer id in the record is not in ``scorers``.
        """
        configs = []
        for entry in data.get("scorers") or ():
            sid = entry["id"]
            if sid not in scorers:
                raise KeyError(f"scorer {sid!r} is not known to this worker")
            configs.append(scorers[sid])
        return cls(Run.from_dict(data["run"]), tuple(configs))


@runtime_checkable
class Executor(Protocol):
    """Runs scoring jobs somewhere. The in-process worker is the default.

    ``submit`` must not block or raise (it runs on the agent's hot path); it returns
    whether the job was accepted. A distributed executor accounts for the job on the worker
    side (the counters there are the ``livescore.runs`` metric).
    """

    def submit(self, job: ScoringJob) -> bool:
        """Accept a job (non-blocking); ``False`` when it was dropped."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until accepted jobs are done; ``False`` on timeout."""
        ...

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop accepting, finish what it can within ``timeout``, release resources."""
        ...
