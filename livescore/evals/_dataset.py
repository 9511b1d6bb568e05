"""Reading ``livescore eval`` datasets: JSON lines, one item per line.

Four line formats are understood:

* livescore items: ``input`` (required), ``output`` (required unless a target produces it),
  ``context`` (a string or a list of strings), ``ground_truth``, ``id``, ``metadata``, and
  ``steps`` (the run's steps as ``Run.to_dict`` writes them: model turns, tool calls with
  their results, retrievals), so tool scorers and checks can score a dataset;
* the hallucination benchmark format of ``data/hallucination/*.jsonl``: ``question`` (the
  input), ``context`` (one string), ``output``, ``hallucinated`` (0/1 label), ``id``, and
  the provenance fields ``dataset``, ``task`` and ``meta``;
* ``livescore eval --out`` records (a line with ``index`` and a ``scores`` object): read as
  livescore items, so a results file can be scored again; the earlier run's own fields
  (``index``, ``line``, ``scores``, ``error``, ``run_id``…) are left out;
* conversations: ``turns`` (a list of ``{"input", "output"}`` objects, each with optional
  ``tool_calls``: ``[{"name", "args", "result"}]``, ``"error"`` for a call that failed),
  ``id``, ``metadata`` and the labels; scored by conversation scorers as a whole (run
  scorers score its last turn). The outputs are in the data: a target does not replay a
  conversation.

``input`` and ``question`` are the same field (``input`` wins when both are there), the
same rule as ``run_evals``. Any other field is kept in the item's ``metadata`` (and named in
:attr:`Dataset.unknown_fields`, so a typo shows), the same rule as ``run_evals``. A
``hallucinated`` label (0/1 or a boolean) in either format makes the dataset *labelled*, so
the CLI can report judge quality; other 0/1 labels (``toxic``, ``biased``…) are read when
asked for (``label_fields``), for the scorers that predict them. An empty input is kept
(SummEdits has no question; a scorer that needs one skips the run with its reason); only a
target needs a non-empty input.
A UTF-8 byte order mark is accepted. A bad line is reported with its number and skipped;
the good ones are kept. A line nested more than :data:`MAX_DEPTH` levels deep is a bad line
(nothing real is that deep, and deeper values break JSON writers and readers downstream).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from livescore.runs import Run, Step

__all__ = ("LABEL_FIELD", "MAX_DEPTH", "Dataset", "DatasetProblem", "load_dataset", "parse_line")

LABEL_FIELD = "hallucinated"
"""The label field: 1 (or true) when the output is hallucinated."""

MAX_DEPTH = 100
"""The deepest nesting of objects and lists a line may have."""

LineFormat = Literal["livescore", "hallucination", "results", "conversation"]


@dataclass(frozen=True, slots=True)
class DatasetProblem:
    """A line that could not be used.

    Attributes:
        line: The 1-based line number.
        message: What is wrong with it.
    """

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(slots=True)
class Dataset:
    """The usable items of a dataset file, and what was wrong with the rest.

    Attributes:
        items: ``run_evals`` items (``input``, ``output``, ``context``, ``ground_truth``,
            ``id``, ``metadata``), in file order.
        lines: The 1-based line number of each item.
        labels: The ``hallucinated`` label of each item (``None`` where absent).
        label_columns: Every 0/1 label read, by field name, one entry per item
            (``label_columns["hallucinated"]`` is ``labels``).
        problems: The skipped lines, with their number and the reason.
        formats: How many lines were read in each format.
        unknown_fields: Fields neither format defines (kept in ``metadata``), with the
            number of lines that had each.
    """

    items: list[dict[str, Any]] = field(default_factory=list)
    lines: MutableSequence[int] = field(default_factory=list)
    labels: list[int | None] = field(default_factory=list)
    label_columns: dict[str, list[int | None]] = field(default_factory=dict)
    problems: list[DatasetProblem] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    unknown_fields: dict[str, int] = field(default_factory=dict)

    def limit(self, n: int) -> None:
        """Keep only the first ``n`` usable items (``livescore eval --limit``)."""
        del self.items[n:], self.lines[n:], self.labels[n:]
        for column in self.label_columns.values():
            if column is not self.labels:
                del column[n:]

    def labels_for(self, name: str) -> list[int | None]:
        """The ``name`` label of each item (all ``None`` when the file has none).

        Example:
            >>> Dataset(items=[{}], labels=[1]).labels_for("hallucinated")
            [1]
        """
        if name == LABEL_FIELD:
            return self.labels
        return self.label_columns.get(name) or [None] * len(self.items)

    @property
    def labelled(self) -> bool:
        """Whether any item carries a label (``hallucinated``, or one in ``label_columns``)."""
        columns = [self.labels, *self.label_columns.values()]
        return any(label is not None for column in columns for label in column)


class _LineError(ValueError):
    pass


_FORMAT_FIELDS = frozenset(
    {"input", "question", "output", "context", "ground_truth", "id", "steps"}
)
# The benchmark files' provenance fields: kept as metadata, expected, not worth a warning.
_PROVENANCE_FIELDS = frozenset({"dataset", "task", "source", "meta"})
# A stored trace's keys (a Collector file exporter's line): the file belongs to --traces.
_OTLP_KEYS = ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")
_KNOWN_FIELDS = _FORMAT_FIELDS | _PROVENANCE_FIELDS | {LABEL_FIELD, "metadata", "turns"}
# What a ``livescore eval --out`` record adds to an item: the earlier run's results.
_RESULT_FIELDS = frozenset(
    {
        "index",
        "line",
        "scores",
        "error",
        "error_type",
        "duration_s",
        "callback_error",
        "run_id",
        "trace_id",
        "span_id",
        "output_text",
        "agent",
        "conversation_id",
        "conversation",
    }
)


def _is_results_record(data: Mapping[str, Any]) -> bool:
    return "index" in data and isinstance(data.get("scores"), Mapping)


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests objects and lists more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _steps(value: Any) -> list[Step]:
    if not isinstance(value, list) or not all(isinstance(s, Mapping) for s in value):
        raise _LineError("'steps' must be a list of step objects (as Run.to_dict writes them)")
    try:
        return Run.from_dict({"steps": value}).steps
    except (TypeError, ValueError, AttributeError) as exc:
        raise _LineError(f"'steps' is not a list of run steps: {exc}") from None


def parse_line(
    obj: Any, *, require_output: bool, require_input: bool = False
) -> tuple[dict[str, Any], int | None, LineFormat]:
    """Turn one decoded JSON line into a ``run_evals`` item, its label and its format.

    Args:
        obj: The decoded line.
        require_output: The line must carry ``output`` (no target produces it).
        require_input: The input must not be empty (a target answers it).

    Raises:
        ValueError: The line is not a usable item (the message says why).

    Example:
        >>> item, label, fmt = parse_line(
        ...     {"question": "Q?", "context": "C.", "output": "A.", "hallucinated": 1},
        ...     require_output=True,
        ... )
        >>> item["input"], item["context"], label, fmt
        ('Q?', ['C.'], 1, 'hallucination')
    """
    if not isinstance(obj, Mapping):
        raise _LineError(f"expected a JSON object, got {type(obj).__name__}")
    data = dict(obj)
    results = _is_results_record(data)
    if results:
        for name in _RESULT_FIELDS:
            data.pop(name, None)
    if "turns" in data:
        if results:  # the earlier run's view of the last turn: the turns hold it
            for name in ("input", "output", "ground_truth", "context"):
                data.pop(name, None)
        return _parse_conversation(data, require_output=require_output)
    value, fmt = _pop_input(data, results)
    if value is None:
        value = ""
    if require_input and isinstance(value, str) and not value.strip():
        raise _LineError("the input is empty, and the target needs one to answer")
    if not require_input:  # a target takes whatever input it was written for
        _text_like(value, "input", "user")
    item: dict[str, Any] = {"input": value}

    if "output" in data:
        output = data.pop("output")
        if output is None:
            raise _LineError("'output' is null")
        _text_like(output, "output", "assistant")
        item["output"] = output
    elif require_output:
        raise _LineError("missing field 'output' (give --target to produce outputs)")
    _pop_grounding(item, data)
    label: int | None = None
    if LABEL_FIELD in data:
        raw_label = data[LABEL_FIELD]
        if raw_label not in (0, 1):  # True/False compare equal to 1/0
            raise _LineError(f"'{LABEL_FIELD}' must be 0 or 1, not {raw_label!r}")
        label = int(raw_label)
    _id_and_metadata(item, data)
    return item, label, fmt


def _pop_input(data: dict[str, Any], results: bool) -> tuple[Any, LineFormat]:
    """The line's input (taken out of ``data``) and the format that names it."""
    if "input" in data:
        # ``input`` wins over ``question``: the question then stays metadata.
        return data.pop("input"), "results" if results else "livescore"
    if "question" in data:
        return data.pop("question"), "hallucination"
    if any(key in data for key in _OTLP_KEYS):
        raise _LineError("an OTLP trace request, not a dataset line: give this file to --traces")
    unknown = sorted(str(k) for k in data.keys() - _KNOWN_FIELDS)[:5]
    hint = f" (unknown field(s): {', '.join(map(repr, unknown))})" if unknown else ""
    raise _LineError(f"missing field 'input' (or 'question'){hint}")


def _pop_grounding(item: dict[str, Any], data: dict[str, Any]) -> None:
    """Move the line's ``context``, ``steps`` and ``ground_truth`` into ``item``."""
    if "context" in data:
        context = data.pop("context")
        if isinstance(context, str):
            item["context"] = [context]
        elif isinstance(context, Sequence) and all(isinstance(c, str) for c in context):
            item["context"] = list(context)
        elif context is not None:
            raise _LineError("'context' must be a string or a list of strings")
    if "steps" in data:
        steps = data.pop("steps")
        if steps is not None:
            item["steps"] = _steps(steps)
    if "ground_truth" in data:
        item["ground_truth"] = data.pop("ground_truth")


def _id_and_metadata(item: dict[str, Any], data: dict[str, Any]) -> None:
    """Move the line's ``id`` and ``metadata`` into ``item``; what is left of ``data`` joins
    the metadata."""
    if "id" in data:
        item_id = data.pop("id")
        if item_id is not None:
            item["id"] = str(item_id)
    metadata = data.pop("metadata", None)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise _LineError("'metadata' must be an object")
    merged = dict(metadata or {})
    merged.update(data)  # unknown fields (dataset, task, the label…) travel as metadata
    if merged:
        item["metadata"] = merged


def _text_like(value: Any, name: str, role: str) -> None:
    """Refuse a value no scorer can read text from (a number, a boolean): a bad line, said
    here, not an item every scorer skips. A string, a message list or an object is kept
    (an object of prompt variables is for scorers that read its fields)."""
    from livescore._messages import find_message

    try:
        find_message(value, role)
    except TypeError:
        raise _LineError(
            f"'{name}' must be text (a string, a message list or an object), not "
            f"{type(value).__name__} {json.dumps(value)[:40]}"
        ) from None


def _parse_conversation(
    data: dict[str, Any], *, require_output: bool
) -> tuple[dict[str, Any], int | None, LineFormat]:
    from livescore.runs import Conversation

    if not require_output:
        raise _LineError(
            "a line with 'turns' carries its outputs: --target does not replay conversations"
        )
    turns = data.pop("turns")
    if not isinstance(turns, list) or not turns:
        raise _LineError("'turns' must be a non-empty list of {input, output} objects")
    try:
        Conversation.from_turns(turns, id="check")  # its errors name the turn
    except ValueError as exc:
        raise _LineError(str(exc)) from None
    item: dict[str, Any] = {"turns": turns}
    label = _label(data, LABEL_FIELD)
    _id_and_metadata(item, data)
    return item, label, "conversation"


def load_dataset(
    path: str | Path | IO[bytes],
    *,
    require_output: bool = True,
    require_input: bool = False,
    label_fields: Iterable[str] = (),
) -> Dataset:
    """Read a JSON-lines dataset; bad lines become :class:`DatasetProblem` entries.

    Blank lines are ignored. Each other line must be a JSON object in one of the formats
    described in this module.

    Args:
        path: The ``.jsonl`` file, or a binary stream to read it from (``sys.stdin.buffer``).
        require_output: Whether each line must carry ``output`` (no target given).
        require_input: Whether each input must be non-empty (a target is given).
        label_fields: 0/1 label fields to read besides ``hallucinated`` (a line with a
            value other than 0, 1 or a boolean there is a problem); they are not named
            as unknown fields.

    Raises:
        OSError: The file cannot be read.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write('{"input": "hi", "output": "hello"}\\nnot json\\n')
        >>> ds = load_dataset(f.name)
        >>> len(ds.items), [str(p) for p in ds.problems]
        (1, ['line 2: invalid JSON: Expecting value (column 1)'])
        >>> os.remove(f.name)
    """
    dataset = Dataset()
    dataset.label_columns[LABEL_FIELD] = dataset.labels
    extra = [name for name in dict.fromkeys(label_fields) if name != LABEL_FIELD]
    for name in extra:
        dataset.label_columns[name] = []
    known = _KNOWN_FIELDS | set(extra)
    raw = Path(path).read_bytes() if isinstance(path, str | Path) else path.read()
    if raw.startswith(codecs.BOM_UTF8):  # Windows editors write one; it is not data
        raw = raw[len(codecs.BOM_UTF8) :]
    for number, line_bytes in enumerate(raw.splitlines(), start=1):
        try:
            obj = _decode(line_bytes)
            if obj is _BLANK:
                continue
            item, label, fmt = parse_line(
                obj, require_output=require_output, require_input=require_input
            )
            values = [_label(obj, name) for name in extra]
        except _LineError as exc:
            dataset.problems.append(DatasetProblem(number, str(exc)))
            continue
        for name, value in zip(extra, values, strict=True):
            dataset.label_columns[name].append(value)
        ignored = _RESULT_FIELDS if fmt == "results" else frozenset()
        for name in obj:  # in the line's order, so the first ones named are the first met
            if name in known or name in ignored:
                continue
            dataset.unknown_fields[str(name)] = dataset.unknown_fields.get(str(name), 0) + 1
        dataset.items.append(item)
        dataset.lines.append(number)
        dataset.labels.append(label)
        dataset.formats[fmt] = dataset.formats.get(fmt, 0) + 1
    return dataset


_BLANK = object()


def _decode(line: bytes) -> Any:
    """The JSON value on ``line``, or ``_BLANK`` for a blank line."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _LineError(f"not valid UTF-8 ({exc.reason})") from None
    if not text.strip():
        return _BLANK
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _LineError(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:  # deeper than the JSON parser goes
        obj = None
        deep = True
    else:
        deep = isinstance(obj, dict | list) and _too_deep(obj)
    if deep:
        raise _LineError(f"nested more than {MAX_DEPTH} levels deep")
    return obj


def _label(obj: Mapping[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if value not in (0, 1):  # True/False compare equal to 1/0
        raise _LineError(f"'{name}' must be 0 or 1, not {value!r}")
    return int(value)
