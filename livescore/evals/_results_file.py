"""A results file: one JSON line per item, written as each finishes (``livescore eval --out``)."""

from __future__ import annotations

import json
import threading
from array import array
from pathlib import Path
from typing import TYPE_CHECKING

from livescore._files import AtomicFile
from livescore._text import escape_lone_surrogates

if TYPE_CHECKING:
    from livescore.evals._dataset import Dataset
    from livescore.evals._result import ItemResult

__all__ = ("ResultsFile",)


class ResultsFile:
    """Items written as JSON lines while an evaluation runs, then put in data order.

    Each line is :meth:`ItemResult.to_dict <livescore.evals.ItemResult.to_dict>` with the
    run's steps, plus the item's ``line`` and labels when a :class:`Dataset` is given; it
    reads back as a dataset. Lines go (flushed) to a temporary file beside ``path``, so an
    interrupted run keeps what it scored and a failed one leaves the old file alone;
    :meth:`finish` renames it onto ``path``, in data order when asked. Only where each line
    lies is held (its item's index, offset and length in bytes), not its text: a file of
    runs costs a few bytes per item in memory. Safe to call from the scoring thread and
    another one. Pass :meth:`add` as ``run_evals(on_item_complete=...)``.

    Args:
        path: The results file (a symbolic link is followed).
        dataset: The data the items come from, for their line numbers and labels.
        restore: Write each item's original values instead of the placeholders of
            ``run_evals(redact=...)`` (for a file on your own disk).

    Attributes:
        error: Why writing failed (the scoring goes on; nothing is renamed onto ``path``).

    Raises:
        OSError: The temporary file cannot be created.

    Example:
        >>> import tempfile, pathlib
        >>> from livescore.evals import ItemResult
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> out = ResultsFile(path)
        >>> out.add(ItemResult(index=1, input="b", output="B"))
        >>> out.add(ItemResult(index=0, input="a", output="A"))
        >>> out.finish(in_data_order=True)
        >>> [line[:12] for line in path.read_text().splitlines()]
        ['{"index": 0,', '{"index": 1,']
    """

    def __init__(
        self, path: str | Path, dataset: Dataset | None = None, *, restore: bool = False
    ) -> None:
        self.path = Path(path)
        self.dataset = dataset
        self.restore = restore
        self.indices = array("q")
        self.offsets = array("q")
        self.lengths = array("q")
        self.written = 0
        self.error: str | None = None
        self._lock = threading.Lock()
        self._file: AtomicFile | None = AtomicFile(self.path)

    def add(self, item: ItemResult) -> None:
        """Write ``item``'s line (too late once finished: then it is dropped)."""
        record = item.to_dict(include_run=True)
        if self.restore and item.pseudonyms is not None:
            record = item.pseudonyms.restore_value(record)
        if self.dataset is not None:
            record["line"] = self.dataset.lines[item.index]
            for name, column in self.dataset.label_columns.items():
                if column[item.index] is not None:
                    record[name] = column[item.index]
        # A lone surrogate (a "\ud800" escape in the data) is written back as its escape.
        text = escape_lone_surrogates(json.dumps(record, ensure_ascii=False, default=str)) + "\n"
        with self._lock:
            file = self._file
            if file is None:  # finished (an interrupted run): too late for this one
                return
            size = len(text.encode("utf-8"))
            self.indices.append(item.index)
            self.offsets.append(self.written)
            self.lengths.append(size)
            self.written += size
            try:
                file.file.write(text)
                file.file.flush()
            except OSError as exc:  # keep scoring; the other outputs may still be written
                self.error = exc.strerror or str(exc)
                file.discard()
                self._file = None

    def discard(self) -> None:
        """Drop what was written: the file at ``path`` is left as it was (a run that did
        not start)."""
        with self._lock:
            file, self._file = self._file, None
        if file is not None:
            file.discard()

    def finish(self, *, in_data_order: bool) -> None:
        """Rename the lines onto ``path``: in data order, or in the order they finished.
        A failure is kept in :attr:`error`."""
        with self._lock:
            file, self._file = self._file, None
        if file is None:
            return
        try:
            order = sorted(range(len(self.indices)), key=self.indices.__getitem__)
            if not in_data_order or order == list(range(len(order))):
                file.commit()  # in data order already, or what was scored in finishing order
                return
            try:
                file.file.close()
                with open(file.temporary, "rb") as written, AtomicFile(self.path) as ordered:
                    for n in order:
                        written.seek(self.offsets[n])
                        ordered.file.write(written.read(self.lengths[n]).decode("utf-8"))
                    ordered.commit()
            finally:
                file.discard()
        except OSError as exc:
            self.error = exc.strerror or str(exc)
