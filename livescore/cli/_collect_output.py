"""``livescore collect --console`` and ``--out``: each score as it is made, on the terminal
and in a results file, printed and written on a score sink's own thread."""

from __future__ import annotations

import argparse
import json
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from livescore._files import output_target
from livescore._text import escape_lone_surrogates
from livescore.cli._common import UsageError
from livescore.sinks import BatchingSink, DeliveryResult, ScoreRecord

if TYPE_CHECKING:
    from rich.console import Console

__all__ = (
    "ConsoleScores",
    "ResultsFileScores",
    "add_output_arguments",
    "finish_outputs",
    "open_results_file",
    "output_sinks",
)

# A score is printed within this many seconds of being made (a batch waits no longer).
_PROMPT_S = 0.1
# Runs whose number is remembered, so that a later score of a run is printed under it.
_RUNS_REMEMBERED = 1000


class ConsoleScores(BatchingSink[ScoreRecord]):
    """``--console``: the demo's trace view of each score as it is made: the run (its name,
    trace, abbreviated question and answer, tool calls) the first time one of its scores
    arrives, then the evaluation with score, label and reason (a failed one with why)."""

    name = "console"

    def __init__(self, console: Console) -> None:
        super().__init__(flush_interval=_PROMPT_S, retry_deadline=1.0)
        self._console = console
        self._numbers: OrderedDict[str, int] = OrderedDict()
        self._runs = 0
        self.printed = 0

    def prepare(self, record: ScoreRecord) -> ScoreRecord:
        return record

    def deliver(self, batch: Sequence[ScoreRecord]) -> DeliveryResult | None:
        from livescore.demo import render_scored_run

        failed: dict[int, str] = {}
        # The scores of one run that arrive together print as one tree.
        by_run: OrderedDict[str, list[int]] = OrderedDict()
        for index, record in enumerate(batch):
            by_run.setdefault(record.run.run_id, []).append(index)
        for run_id, indices in by_run.items():
            number = self._numbers.get(run_id)
            first = number is None
            if number is None:
                self._runs += 1
                number = self._numbers[run_id] = self._runs
                if len(self._numbers) > _RUNS_REMEMBERED:
                    self._numbers.popitem(last=False)
            run = batch[indices[0]].run
            try:
                tree = render_scored_run(
                    number, run, [batch[i].result for i in indices], first=first
                )
                self._console.print(tree)
            except Exception as exc:  # a run the view cannot draw: counted, never fatal
                failed.update(dict.fromkeys(indices, type(exc).__name__))
                continue
            self.printed += len(indices)
        return DeliveryResult(failed=failed) if failed else None


def open_results_file(path: str) -> tuple[Path, IO[str]]:
    """The ``--out`` file, opened for writing now (so that a path that cannot be written is
    a usage error before the receiver starts)."""
    target = output_target(path)
    try:
        if target.is_dir():
            raise IsADirectoryError(21, "is a folder")
        return target, target.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write there ({exc.strerror or exc})") from None


class ResultsFileScores(BatchingSink[str]):
    """``--out``: one JSON line per score, in the results format of ``livescore eval --out``
    (an :class:`~livescore.evals.ItemResult` with the run's steps, its ``scores`` holding
    the one score; a run scored by two scorers has two lines with the same ``run_id``),
    written and flushed as each score is made, so the file can be followed while
    ``collect`` runs."""

    name = "out"

    def __init__(self, path: Path, file: IO[str]) -> None:
        super().__init__(flush_interval=_PROMPT_S, retry_deadline=1.0)
        self.path = path
        self._file = file
        self._index = 0
        self.written = 0

    def prepare(self, record: ScoreRecord) -> str:
        from livescore.evals import ItemResult

        run = record.run
        item = ItemResult(
            index=self._index,
            input=run.input,
            output=run.output,
            ground_truth=run.ground_truth,
            metadata=dict(run.metadata),
            run=run,
            scores={record.result.scorer_id: record.result},
        )
        self._index += 1  # prepare runs on the sink's one thread
        data = item.to_dict(include_run=True)
        # A lone surrogate (a "\ud800" escape in the spans) is written back as its escape.
        return escape_lone_surrogates(json.dumps(data, ensure_ascii=False, default=str)) + "\n"

    def deliver(self, batch: Sequence[str]) -> DeliveryResult | None:
        # An OSError (a full disk) fails the batch: counted, and logged once by the base.
        self._file.writelines(batch)
        self._file.flush()
        self.written += len(batch)
        return None

    def close(self) -> None:
        self._file.close()


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--console`` and ``--out FILE`` on ``livescore collect``."""
    parser.add_argument(
        "--console",
        action="store_true",
        help="print each score as it is made, as the demo shows it: the run (its name, "
        "trace, question and answer abbreviated, tool calls) and each evaluation with "
        "score, label and reason (a failed one with why)",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="write each score as it is made to FILE, one JSON line per score, in the "
        "results format of 'livescore eval --out' (the run with its steps; 'scores' holds "
        "the one score)",
    )


def output_sinks(args: argparse.Namespace) -> list[BatchingSink[Any]]:
    """The sinks ``--console`` and ``--out`` ask for (the ``--out`` file opened now)."""
    if args.broker and (args.console or args.out):
        flag = "--console" if args.console else "--out"
        raise UsageError(f"{flag}: with --broker the workers score: read the scores there")
    outputs: list[BatchingSink[Any]] = []
    if args.console:
        from livescore.cli._common import make_console

        outputs.append(ConsoleScores(make_console()))
    if args.out:
        outputs.append(ResultsFileScores(*open_results_file(args.out)))
    return outputs


def finish_outputs(err: Console, outputs: Sequence[BatchingSink[Any]], timeout: float) -> None:
    """Deliver what the output sinks hold within ``timeout``, close them, and say what
    ``--out`` wrote (and what either could not print or write)."""
    from rich.markup import escape

    for sink in outputs:
        sink.shutdown(timeout)
        stats = sink.stats()
        lost = stats.failed + stats.dropped
        if isinstance(sink, ResultsFileScores):
            err.print(
                f"--out: {sink.written} score(s) written to {escape(str(sink.path))}"
                + (f"; {lost} not written" if lost else ""),
                soft_wrap=True,
            )
        elif lost:
            err.print(f"--console: {lost} score(s) not printed", soft_wrap=True)
