"""The self-contained HTML report of ``livescore eval --report``.

One file, no external assets: inline CSS, inline SVG charts, no JavaScript. Every value
from the data is escaped (jinja2 autoescape), so an output holding ``<script>`` shows as
text.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
class _Report:
    title: str
    source: str
    generated: str
    result: EvalResult
    scorer_ids: list[str]
    charts: dict[str, dict[str, Any]]
    items: list[dict[str, Any]]
    quality: list[QualityRow]
    problems: list[str] = field(default_factory=list)
    partial: str = ""
    comparison: Comparison | None = None
    cache_note: str = ""


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


def _item_view(item: ItemResult, line: int | None, label: int | None) -> dict[str, Any]:
    scores = []
    for sid, res in item.scores.items():
        scores.append(
            {
                "id": sid,
                "status": res.status,
                "score": _fmt(res.score),
                "label": res.label or "",
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
        )
    return {
        "index": item.index,
        "line": line,
        "id": item.id or "",
        "label": "" if label is None else ("hallucinated" if label else "faithful"),
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
    }


def render_report(
    result: EvalResult,
    *,
    title: str = "livescore evaluation",
    source: str = "",
    lines: Sequence[int] | None = None,
    labels: Sequence[int | None] | None = None,
    quality: Sequence[QualityRow] = (),
    problems: Sequence[str] = (),
    partial: str = "",
    comparison: Comparison | None = None,
    cache_note: str = "",
) -> str:
    """Render ``result`` as one self-contained HTML page.

    Args:
        result: What :func:`~livescore.evals.run_evals` returned.
        title: The page title.
        source: Where the data came from (a file name), shown under the title.
        lines: The dataset line number of each item (by item index), when read from a file.
        labels: The ``hallucinated`` label of each item (by item index), when known.
        quality: Judge-quality rows to show (labelled data).
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
    items = [
        _item_view(
            item,
            lines[item.index] if lines is not None and item.index < len(lines) else None,
            labels[item.index] if labels is not None and item.index < len(labels) else None,
        )
        for item in result.items
    ]
    view = _Report(
        title=title,
        source=source,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        result=result,
        scorer_ids=list(result.scores),
        charts={sid: _chart(agg) for sid, agg in result.scores.items()},
        items=items,
        quality=list(quality),
        problems=list(problems),
        partial=partial,
        comparison=comparison,
        cache_note=cache_note,
    )
    template = _environment().get_template("report.html.j2")
    return template.render(r=view, fmt=_fmt, usd=format_usd)


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
