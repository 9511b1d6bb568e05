"""``livescore eval --traces``: stored OTLP JSON traces as the dataset to score."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from livescore.cli._common import UsageError

if TYPE_CHECKING:
    from livescore.evals import Dataset

__all__ = ("load_traces_dataset",)


def load_traces_dataset(path: Path, logs: Path | None = None) -> Dataset:
    """The runs of an OTLP JSON traces file, as ``livescore eval`` items (one per run).

    Each item is the :class:`~livescore.Run` itself, so its scores nest under the stored
    run's span; its "line" is the run's number in the file (runs are not lines). Lines
    that are not OTLP JSON are reported as problems with their number. Log records, in
    the file (``resourceLogs`` lines) or in ``logs`` (``--logs``), are joined to their
    spans: where an instrumentation captures message content in events, they hold it.

    The runs stay in the temporary file their spans were read into (under ``$TMPDIR``),
    each read back when it is scored, so memory holds the runs in flight, whatever the
    file's size; the file goes with the dataset.
    """
    from livescore.evals import Dataset, DatasetProblem
    from livescore.traces import open_stored_runs

    try:
        stored, runs = open_stored_runs(path, logs=logs)
    except OSError as exc:
        name = exc.filename if exc.filename is not None else str(path)
        raise UsageError(f"--traces: cannot read {str(name)!r}: {exc.strerror or exc}") from exc
    # Spans with invalid ids are among the problems, on the line that held them.
    problems = [DatasetProblem(p.line, p.message) for p in stored.problems]
    # A sequence read from disk in the place of a list: the command only indexes it, takes
    # its length, iterates it and cuts its tail (--limit). The line numbers are an array (8
    # bytes a run, where a list of ints took about 36).
    return Dataset(
        items=cast("list[dict[str, Any]]", runs),
        lines=array("q", range(1, len(runs) + 1)),
        labels=[None] * len(runs),
        problems=problems,
        formats={"otlp-json": len(runs)},
    )
