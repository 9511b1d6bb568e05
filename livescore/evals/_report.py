"""The self-contained HTML report of ``livescore eval --report``.

One file, no external assets: inline CSS, inline SVG charts and a few lines of inline script
(``templates/report.js``) that sort and filter the items table. Every value from the data is
escaped (jinja2 autoescape), so an output holding ``<script>`` shows as text; and the page's
Content-Security-Policy allows only the report's own style and script (by their SHA-256), so
nothing else could run or load even if some value escaped its escaping.

On labelled data each judged item says whether the scorer agrees with the label, by the rule
of the judge-quality table (``score ≥ threshold`` predicts the label, ``≤`` for a scorer where
higher is better): the marked disagreements are that table's false positives and false
negatives, item by item.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livescore._files import write_text_atomically
from livescore._messages import message_text
from livescore._text import replace_lone_surrogates
from livescore._usage import format_usd

from ._compare import Comparison
from ._quality import BinaryQuality, SplitThreshold
from ._result import EvalResult, ItemResult, ScoreAggregate

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

__all__ = ("QualityRow", "render_report", "write_report")

_CHART_W = 320
_CHART_H = 120
_MAX_TEXT = 4000  # characters of input/output/context shown per cell; the rest is cut


@dataclass(frozen=True, slots=True)
class QualityRow:
    """One row of the judge-quality table.

    Attributes:
        name: What was measured (``"hallucination"``, ``"length-only baseline"``).
        quality: The figures.
        calls_per_item: Judge calls per scored item (``None`` for a baseline).
        tokens_per_item: Judge tokens per scored item (``None`` for a baseline).
        coverage: Items with a score over labelled items.
        label: The 0/1 label predicted (the positive class).
        rule: When the score predicts it (``"score ≥ 0.5"``, ``"score ≤ 0.5"`` for a
            scorer where higher is better); empty for the plain ``≥ threshold``.
        split: A threshold chosen on half the labelled items and its figures on the
            other half (:func:`~livescore.evals.split_threshold`); the threshold is on
            the score's own scale, read in the direction of ``rule``. ``None`` when a half
            lacks a class, and for a baseline.
    """

    name: str
    quality: BinaryQuality
    calls_per_item: float | None = None
    tokens_per_item: float | None = None
    coverage: str = ""
    label: str = "hallucinated"
    rule: str = ""
    split: SplitThreshold | None = None


@dataclass(slots=True)
class _Judged:
    """A scorer measured against a label column: the rule, and how often it disagrees."""

    row: QualityRow
    column: int  # the label column's position in _Report.label_names
    false_positives: int = 0
    false_negatives: int = 0

    @property
    def disagreements(self) -> int:
        return self.false_positives + self.false_negatives


@dataclass(slots=True)
class _Report:
    title: str
    source: str
    generated: str
    result: EvalResult
    scorer_ids: list[str]
    charts: dict[str, dict[str, Any]]
    items: list[dict[str, Any]]
    quality: list[QualityRow]
    label_names: list[str] = field(default_factory=list)
    judged: dict[str, _Judged] = field(default_factory=dict)
    by_line: bool = False  # items numbered by their line in the data file
    places: dict[int, str] = field(default_factory=dict)  # item index -> "line 12"
    problems: list[str] = field(default_factory=list)
    partial: str = ""
    comparison: Comparison | None = None
    cache_note: str = ""
    style: str = ""
    script: str = ""
    policy: str = ""


def _label_text(name: str, value: int) -> str:
    """What a 0/1 label says, in words: ``hallucinated`` / ``faithful``, else the field name
    or ``not`` it (``frustrated`` / ``not frustrated``)."""
    if name == "hallucinated":
        return "hallucinated" if value else "faithful"
    return name if value else f"not {name}"


def _predicts(row: QualityRow, score: float) -> bool:
    """Whether ``score`` predicts ``row.label`` (1) by the row's rule: at or above the
    threshold, or at or below it for a scorer where higher is better (``score ≤ …``), as
    the confusion matrix of the judge-quality table counts it."""
    if row.rule.startswith("score ≤"):
        return score <= row.quality.threshold
    return score >= row.quality.threshold


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _environment() -> jinja2.Environment:
    # Imported here: only writing a report needs jinja2 (import livescore stays light).
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("livescore.evals", "templates"),
        autoescape=jinja2.select_autoescape(("html", "j2"), default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}"


def _chart(agg: ScoreAggregate) -> dict[str, Any]:
    bins = agg.distribution.bins
    peak = max((b.count for b in bins), default=0)
    width = _CHART_W / len(bins) if bins else _CHART_W
    bars = []
    for i, b in enumerate(bins):
        height = 0.0 if peak == 0 else (_CHART_H - 16) * b.count / peak
        bars.append(
            {
                "x": round(i * width + 1, 2),
                "y": round(_CHART_H - height, 2),
                "w": round(max(width - 2, 1), 2),
                "h": round(height, 2),
                "count": b.count,
                "range": f"{b.lower:.2f}–{b.upper:.2f}",
                "tx": round(i * width + width / 2, 2),
                "ty": round(_CHART_H - height - 3, 2),
            }
        )
    low = bins[0].lower if bins else 0.0
    high = bins[-1].upper if bins else 1.0
    return {"bars": bars, "w": _CHART_W, "h": _CHART_H, "low": f"{low:g}", "high": f"{high:g}"}


def _text(value: Any) -> str:
    if value is None:
        return ""
    try:
        text = message_text(value)
    except TypeError:
        text = ""
    if not text and not isinstance(value, str):
        text = json.dumps(value, default=str, ensure_ascii=False)
    return _cut(text)


def _cut(text: str) -> str:
    if len(text) > _MAX_TEXT:
        return text[:_MAX_TEXT] + f" … [{len(text) - _MAX_TEXT} more characters]"
    return text


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    return []


def _details(step_results: Sequence[Any]) -> dict[str, Any]:
    """Pull claims, verdicts, keywords and other facts out of a score's step results."""
    claims: list[str] = []
    verdicts: list[dict[str, str]] = []
    keywords: list[tuple[str, list[str]]] = []
    other: list[tuple[str, str]] = []
    for value in step_results:
        if not isinstance(value, Mapping):
            if value is not None:
                other.append(("result", _text(value)))
            continue
        for key, entry in value.items():
            if key == "claims":
                claims.extend(_text(c) for c in _as_list(entry))
            elif key == "verdicts":
                for v in _as_list(entry):
                    if isinstance(v, Mapping):
                        verdicts.append(
                            {
                                "statement": _text(v.get("statement") or v.get("claim")),
                                "verdict": _text(v.get("verdict")),
                                "reason": _text(v.get("reason")),
                            }
                        )
            elif "keyword" in key and isinstance(entry, Sequence | set | frozenset):
                words = sorted(str(w) for w in entry)
                keywords.append((key.replace("_", " "), words))
            elif key != "score":
                other.append((key.replace("_", " "), _text(entry)))
    return {"claims": claims, "verdicts": verdicts, "keywords": keywords, "other": other}


def _item_view(
    item: ItemResult,
    line: int | None,
    labels: Mapping[str, Sequence[int | None]],
    label_names: Sequence[str],
    scorer_ids: Sequence[str],
    judged: Mapping[str, _Judged],
) -> dict[str, Any]:
    values = [_label_value(labels[name], item.index) for name in label_names]
    scores: dict[str, dict[str, Any]] = {}
    disagree: list[int] = []
    for sid, res in item.scores.items():
        agreement = None
        measured = judged.get(sid)
        value = values[measured.column] if measured is not None else None
        if measured is not None and value is not None and res.score is not None:
            predicted = int(_predicts(measured.row, res.score))
            agreement = {
                "agrees": predicted == value,
                "predicted": _label_text(measured.row.label, predicted),
                "labelled": _label_text(measured.row.label, value),
            }
            if predicted != value:
                disagree.append(scorer_ids.index(sid))
                if predicted:
                    measured.false_positives += 1
                else:
                    measured.false_negatives += 1
        scores[sid] = {
            "status": res.status,
            "score": _fmt(res.score),
            # The exact score orders the rows; a score that is not a number orders nothing.
            "sort": repr(res.score) if res.score is not None and math.isfinite(res.score) else None,
            "label": res.label or "",
            "agreement": agreement,
            "reason": res.reason or "",
            "error": (
                f"{res.error_type or 'error'} in {res.failed_step or '?'}: {res.error}"
                if res.status == "failed"
                else ""
            ),
            "calls": res.usage.calls,
            "tokens": res.usage.total_tokens,
            "cost": res.usage.cost_usd,
            **_details([res.preprocess_step_result, res.analyze_step_result]),
        }
    return {
        "index": item.index,
        # The number a user finds the item by: its line in the data file (as --out's
        # "line" and the terminal's messages say), else its 1-based position.
        "row": line if line is not None else item.index + 1,
        "id": item.id or "",
        "labels": [
            None if value is None else {"value": value, "text": _label_text(name, value)}
            for name, value in zip(label_names, values, strict=True)
        ],
        "input": _cut(item.input_text),
        "output": _cut(item.output_text),
        "context": [_text(c) for c in item.context or ()],
        "error": f"{item.error_type}: {item.error}" if item.error else "",
        "tools": [
            {"name": s.tool_call.name, "args": _text(s.tool_call.args)}
            for s in (item.run.steps if item.run is not None else ())
            if s.kind == "tool" and s.tool_call is not None
        ],
        "scores": scores,
        "disagree": disagree,
    }


def _label_value(column: Sequence[int | None], index: int) -> int | None:
    value = column[index] if index < len(column) else None
    return None if value is None else int(value)


def render_report(
    result: EvalResult,
    *,
    title: str = "livescore evaluation",
    source: str = "",
    lines: Sequence[int] | None = None,
    labels: Mapping[str, Sequence[int | None]] | None = None,
    quality: Sequence[QualityRow] = (),
    problems: Sequence[str] = (),
    partial: str = "",
    comparison: Comparison | None = None,
    cache_note: str = "",
) -> str:
    """Render ``result`` as one self-contained HTML page.

    The items table can be sorted (by line, label or any scorer's score: click the column
    header) and filtered (by scorer, by label, and to the items where a scorer disagrees
    with the label) in any browser, offline.

    Args:
        result: What :func:`~livescore.evals.run_evals` returned.
        title: The page title.
        source: Where the data came from (a file name), shown under the title.
        lines: The dataset line number (1-based) of each item (by item index), when read
            from a file; the items are numbered by it, else by their position from 1.
        labels: The data's 0/1 label columns (:attr:`Dataset.label_columns
            <livescore.evals.Dataset.label_columns>`), each a column of the items table.
        quality: Judge-quality rows to show (labelled data). A row whose ``name`` is a
            scorer's id and whose ``label`` is a column of ``labels`` also marks each item
            where that scorer's score, by the row's rule, disagrees with the label.
        problems: Dataset lines that were skipped, as messages.
        partial: Why the report is incomplete (an interrupted evaluation); the page is then
            marked partial, in its title and above the results.
        comparison: This result against a baseline (:meth:`EvalResult.compare`): shown
            side by side, per scorer and per item, regressions first with both reasons.
        cache_note: What the judge response cache saved, shown under the title.

    Example:
        >>> from livescore.evals import EvalResult
        >>> "<svg" in render_report(EvalResult()) or "No scores" in render_report(EvalResult())
        True
    """
    labels = labels or {}
    scorer_ids = list(result.scores)
    label_names, judged = _label_columns(result, labels, quality, scorer_ids)

    def line_of(index: int) -> int | None:
        return lines[index] if lines is not None and index < len(lines) else None

    items = [
        _item_view(item, line_of(item.index), labels, label_names, scorer_ids, judged)
        for item in result.items
    ]
    where = "line" if lines is not None else "item"
    places = {item["index"]: f"{where} {item['row']}" for item in items}
    style, script, policy = _style_and_script()
    view = _Report(
        title=title,
        source=source,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        result=result,
        scorer_ids=scorer_ids,
        charts={sid: _chart(agg) for sid, agg in result.scores.items()},
        items=items,
        quality=list(quality),
        label_names=label_names,
        judged=judged,
        by_line=lines is not None,
        places=places,
        problems=list(problems),
        partial=partial,
        comparison=comparison,
        cache_note=cache_note,
        style=style,
        script=script,
        policy=policy,
    )
    template = _environment().get_template("report.html.j2")
    return template.render(r=view, fmt=_fmt, usd=format_usd, label_text=_label_text)


def _label_columns(
    result: EvalResult,
    labels: Mapping[str, Sequence[int | None]],
    quality: Sequence[QualityRow],
    scorer_ids: list[str],
) -> tuple[list[str], dict[str, _Judged]]:
    """The label columns shown, and the scorers judged against one of them (by id)."""
    # A label column shows when some item of this result has a value in it.
    label_names = [
        name
        for name, column in labels.items()
        if any(_label_value(column, item.index) is not None for item in result.items)
    ]
    judged: dict[str, _Judged] = {}
    for row in quality:
        if row.name in scorer_ids and row.label in label_names and row.name not in judged:
            judged[row.name] = _Judged(row, label_names.index(row.label))
    return label_names, judged


def _style_and_script() -> tuple[Markup, Markup, str]:
    """The page's style and script, and the Content-Security-Policy that allows only them."""
    from markupsafe import Markup  # jinja2's own dependency, imported with it

    # The style and script are the package's own files, not data: they go in as they are,
    # and the Content-Security-Policy names them by hash, so nothing else can run or load.
    templates = resources.files("livescore.evals") / "templates"
    style = (templates / "report.css").read_text(encoding="utf-8")
    script = (templates / "report.js").read_text(encoding="utf-8")
    policy = (
        f"default-src 'none'; style-src '{_sha256(style)}'; script-src '{_sha256(script)}'; "
        "base-uri 'none'; form-action 'none'"
    )
    return Markup(style), Markup(script), policy


def write_report(result: EvalResult, path: str | Path, **options: Any) -> Path:
    """Render the report (see :func:`render_report`) and write it to ``path`` (UTF-8).

    The page goes to a temporary file beside ``path`` and replaces it when complete, so a
    failed write leaves the previous report as it was; a ``path`` that is a symbolic link
    is followed (the file it points to is replaced, the link stays). ``options`` are
    :func:`render_report`'s keywords (``title``, ``source``…).

    Example:
        >>> import tempfile, pathlib
        >>> from livescore.evals import EvalResult
        >>> out = write_report(EvalResult(), pathlib.Path(tempfile.mkdtemp()) / "r.html")
        >>> out.read_text().startswith("<!DOCTYPE html>")
        True
    """
    # Lone surrogates (a JSON "\\ud800" escape in the data) cannot be written as UTF-8.
    html = replace_lone_surrogates(render_report(result, **options))
    write_text_atomically(path, html)
    return Path(path)
