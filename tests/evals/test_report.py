"""The HTML report: content, escaping, the review of labelled data (line numbers,
disagreements with the label), and the page clicked in headless Chromium."""

from __future__ import annotations

import dataclasses
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _evals_support import length_scorer
from headless_chromium import Browser, Page, find_chromium

from livescore import create_scorer
from livescore.evals import EvalResult, QualityRow, render_report, run_evals_sync, write_report
from livescore.evals._quality import binary_quality
from livescore.scoring import StepContext

CHROMIUM = find_chromium()
ROOT = Path(__file__).resolve().parents[2]


def _claims_scorer():  # type: ignore[no-untyped-def]
    """A code scorer whose step results look like the hallucination scorer's."""

    def claims(ctx: StepContext) -> dict[str, list[str]]:
        return {"claims": [s for s in ctx.output_text.split(". ") if s]}

    def verdicts(ctx: StepContext) -> dict[str, list[dict[str, str]]]:
        return {
            "verdicts": [
                {
                    "statement": c,
                    "verdict": "yes" if "moon" in c else "no",
                    "reason": "not in the context" if "moon" in c else "stated",
                }
                for c in ctx.preprocess_step_result["claims"]
            ]
        }

    def score(ctx: StepContext) -> float:
        v = ctx.analyze_step_result["verdicts"]
        return sum(x["verdict"] == "yes" for x in v) / len(v)

    return create_scorer(
        id="claims",
        description="claims test scorer",
        preprocess=claims,
        analyze=verdicts,
        generate_score=score,
        generate_reason=lambda ctx: f"The score is {ctx.score} because of the moon claim.",
        label=lambda s: "high" if s > 0.4 else "none",
    )


def _result() -> EvalResult:
    failing = create_scorer(
        id="fragile",
        description="fails on item 1",
        generate_score=lambda ctx: 1 / 0 if "moon" in ctx.output_text else 1.0,
    )
    return run_evals_sync(
        [
            {
                "input": "Where is Paris?",
                "output": "Paris is in France. It is on the moon",
                "context": ["Paris is the capital of France."],
                "id": "paris",
            },
            {"input": "<b>bold</b> question", "output": "<script>alert('x')</script>"},
            {"input": "no output"},
        ],
        [_claims_scorer(), length_scorer(), failing],
    )


def test_report_shows_scorers_items_claims_verdicts_and_errors() -> None:
    result = _result()
    quality = [
        QualityRow(
            name="claims",
            quality=binary_quality([1, 0], [0.5, 0.0], threshold=0.5),
            calls_per_item=3.0,
            tokens_per_item=812.0,
        )
    ]
    html = render_report(
        result,
        title="My eval",
        source="data.jsonl",
        lines=[1, 2, 4],
        labels={"hallucinated": [1, 0, None]},
        quality=quality,
        problems=["line 3: invalid JSON"],
    )

    assert html.startswith("<!DOCTYPE html>")
    assert "<title>My eval</title>" in html
    for sid in ("claims", "short", "fragile"):
        assert f'data-scorer="{sid}"' in html
    assert html.count('<tr class="item"') == 3
    assert "Paris is in France" in html
    assert "It is on the moon" in html  # a claim
    assert "not in the context" in html  # a verdict's reason
    assert "The score is 0.5 because of the moon claim." in html
    assert "ZeroDivisionError in generate_score" in html  # a failed score
    assert "no &#39;output&#39;" in html  # the item that could not run
    assert "line 3: invalid JSON" in html
    assert "hallucinated" in html
    assert "faithful" in html
    assert "Judge quality" in html
    assert "<svg" in html
    assert re.search(r"<rect class=\"bar\"", html)
    # Everything from the data is escaped.
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold&lt;/b&gt; question" in html
    # Self-contained: no external stylesheet, script or image; one inline script, the
    # report's own, and a policy that lets only it and the report's style in.
    assert not re.search(r"<(link|img|iframe|object)\b", html)
    assert re.findall(r"<script\b[^>]*>", html) == ["<script>"]
    assert "http://" not in html
    assert "https://" not in html
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert policy is not None
    assert "default-src &#39;none&#39;; style-src &#39;sha256-" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1)


def test_empty_result_renders() -> None:
    html = render_report(EvalResult())
    assert "No scores." in html


def test_write_report_takes_render_reports_order(tmp_path: Path) -> None:
    written = write_report(_result(), tmp_path / "a.html", title="Same order")
    assert written.read_text(encoding="utf-8").count('<tr class="item"') == 3


def test_a_partial_report_says_so_in_its_title_and_body() -> None:
    html = render_report(_result(), title="Run", partial="interrupted after 3 of 200 item(s)")
    assert "<title>[partial] Run</title>" in html
    assert "Partial report:</b> interrupted after 3 of 200 item(s)" in html
    assert "Partial report" not in render_report(_result(), title="Run")


def test_items_are_numbered_by_their_line_in_the_data_file() -> None:
    html = render_report(_result(), lines=[1, 2, 4])
    rows = re.findall(r'<tr class="item[^"]*" data-index="(\d)" data-row="(\d+)"', html)
    assert rows == [("0", "1"), ("1", "2"), ("2", "4")]
    assert re.findall(r'<td class="num row-number">(\d+)', html) == ["1", "2", "4"]
    assert '<th class="num" data-sort="row" aria-sort="ascending">line</th>' in html
    # The failure list says where the item is the same way.
    assert "<li>line 1: ZeroDivisionError in generate_score" in html
    # Without line numbers (run_evals on a list), items count from 1.
    unnumbered = render_report(_result())
    assert re.findall(r'<td class="num row-number">(\d+)', unnumbered) == ["1", "2", "3"]
    assert "<li>item 1: ZeroDivisionError in generate_score" in unnumbered


# -- labelled data: where a scorer and the label disagree ------------------------------------

# Five items on lines 2, 3, 5, 6 and 9 of their file (a blank and a bad line between), labelled
# hallucinated 1, 0, 1, 0 and not at all. "risk" predicts hallucinated at ≥ 0.5 (lines 3 and
# 5 disagree: a false positive, a false negative); "support" is higher-is-better and predicts
# it at ≤ 0.5 (lines 5 and 6 disagree: a false negative, a false positive).
LINES = [2, 3, 5, 6, 9]
HALLUCINATED = [1, 0, 1, 0, None]
RISK = [0.9, 0.7, 0.2, 0.1, 0.5]
SUPPORT = [0.2, 0.8, 0.6, 0.3, 0.5]


def _figure(index: int) -> str:
    return f"the answer <i>{index}</i>"


def _labelled_result() -> EvalResult:
    def scorer(name: str, scores: list[float]):  # type: ignore[no-untyped-def]
        return create_scorer(
            id=name,
            description=f"{name} test scorer: the score listed for the item",
            generate_score=lambda ctx: scores[int(ctx.input_text.split()[-1])],
            generate_reason=lambda ctx: f"{name} is {ctx.score}",
        )

    items = [{"input": f"question {i}", "output": _figure(i)} for i in range(len(LINES))]
    return run_evals_sync(items, [scorer("risk", RISK), scorer("support", SUPPORT)])


def _labelled_quality() -> list[QualityRow]:
    """The rows livescore eval computes for these scorers (see EvalResult.label_quality)."""
    labelled = [i for i, label in enumerate(HALLUCINATED) if label is not None]
    labels = [HALLUCINATED[i] or 0 for i in labelled]
    risk = binary_quality(labels, [RISK[i] for i in labelled], threshold=0.5)
    support = binary_quality(labels, [-SUPPORT[i] for i in labelled], threshold=-0.5)
    return [
        QualityRow(name="risk", quality=risk, calls_per_item=0.0, rule="score ≥ 0.5"),
        QualityRow(
            name="support",
            quality=dataclasses.replace(support, threshold=0.5),
            calls_per_item=0.0,
            rule="score ≤ 0.5",
        ),
    ]


def _labelled_report() -> str:
    return render_report(
        _labelled_result(),
        source="answers.jsonl",
        lines=LINES,
        labels={"hallucinated": HALLUCINATED, "unused": [None] * len(LINES)},
        quality=_labelled_quality(),
    )


def test_disagreements_with_the_label_are_the_quality_tables_false_predictions() -> None:
    html = _labelled_report()
    rows = dict(re.findall(r'data-row="(\d+)"([^>]*)>', html))
    assert {line for line, attributes in rows.items() if "data-disagree" in attributes} == {
        "3",
        "5",
        "6",
    }
    assert 'data-disagree="0"' in rows["3"]  # risk only
    assert 'data-disagree="0 1"' in rows["5"]  # both
    assert 'data-disagree="1"' in rows["6"]  # support only
    assert "data-label-0" not in rows["9"]  # unlabelled: nothing to disagree with
    assert html.count('<tr class="item disagrees"') == 3
    # Each mark says both sides; the counts are the confusion matrix's FP and FN.
    assert html.count("predicts hallucinated, labelled faithful") == 2  # line 3 (risk), 6
    assert html.count("predicts faithful, labelled hallucinated") == 2  # line 5, both scorers
    for row in _labelled_quality():
        q = row.quality
        assert q.false_positives == 1
        assert q.false_negatives == 1
        assert (
            f'{row.rule}): <b class="status-failed">2 disagreements</b> '
            "(1 false positive, 1 false negative)"
        ) in html
    # A label column only when some item has the label; the unused column is left out.
    assert '<th data-sort="label-0">hallucinated</th>' in html
    assert "unused" not in html
    assert '<option value="0:1">hallucinated</option>' in html
    assert '<option value="0:0">faithful</option>' in html
    # The scores sort exactly, not as shown (three decimals).
    assert 'data-score-0="0.9"' in rows["2"]
    assert _figure(1).replace("<", "&lt;").replace(">", "&gt;") in html


def test_without_labels_nothing_is_marked_and_there_is_no_disagreement_filter() -> None:
    html = render_report(_labelled_result(), lines=LINES, quality=_labelled_quality())
    assert 'data-disagree="' not in html
    assert 'class="verdict' not in html
    assert 'id="only-disagreements"' not in html
    assert 'id="filter-label"' not in html
    assert 'id="filter-scorer"' in html  # the scorer filter and sorting stay


# -- in headless Chromium ---------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (make browser, or apt-get install -y chromium) "
    "so the report is not clicked in a browser; the HTML content is still checked by the "
    "other tests",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with Browser(tmp_path_factory.mktemp("chromium-profile")) as running:
        yield running


def _visible_lines(page: Page) -> list[int]:
    """The line numbers of the rows shown, top to bottom, as the page displays them."""
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('#items-table tbody tr'))"
        ".filter(row => !row.hidden && row.offsetParent !== null)"
        ".map(row => row.querySelector('.row-number').firstChild.textContent)"
    )
    return [int(cell) for cell in cells]


@needs_chromium
@pytest.mark.timeout(180)
def test_report_renders_in_headless_chromium(browser: Browser, tmp_path: Path) -> None:
    report = write_report(_result(), tmp_path / "report.html", title="Browser check")
    page = browser.open(report.as_uri())
    assert page.evaluate("document.title") == "Browser check"
    # The browser parsed the page: the rows, the chart and the text are there.
    assert page.evaluate("document.querySelectorAll('tr.item').length") == 3
    assert page.evaluate("document.querySelectorAll('svg rect.bar').length") > 0
    assert "Paris is in France" in page.evaluate("document.body.innerText")
    # The output's script stayed text; the report's own is the only script.
    assert "<script>alert('x')</script>" in page.evaluate("document.body.innerText")
    assert page.evaluate("document.scripts.length") == 1
    assert _visible_lines(page) == [1, 2, 3]


@needs_chromium
@pytest.mark.timeout(180)
def test_a_reviewer_sorts_and_filters_the_items_with_the_mouse(
    browser: Browser, tmp_path: Path
) -> None:
    report = tmp_path / "labelled.html"
    report.write_text(_labelled_report(), encoding="utf-8")
    page = browser.open(report.as_uri())
    # The policy let the report's own style and script in (both named by hash): the
    # disagreement marks are styled and the controls, hidden without script, are shown.
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelector('.verdict.disagree')).backgroundColor"
        )
        == "rgb(185, 28, 28)"
    )
    assert page.evaluate("document.getElementById('review').hidden") is False
    assert page.evaluate("document.getElementById('shown').textContent") == "5 of 5 items shown"
    # Numbered by line in the file, in file order.
    assert _visible_lines(page) == LINES

    page.click('th[data-sort="score-0"] button')  # risk, lowest first; unscored last
    assert _visible_lines(page) == [6, 5, 9, 3, 2]
    assert page.evaluate("document.querySelector('th[data-sort=\"score-0\"]').ariaSort") == (
        "ascending"
    )
    page.click('th[data-sort="score-0"] button')  # again: highest first
    assert _visible_lines(page) == [2, 3, 9, 5, 6]
    page.click('th[data-sort="label-0"] button')  # faithful, hallucinated, then unlabelled
    assert _visible_lines(page) == [3, 6, 2, 5, 9]
    page.click('th[data-sort="row"] button')  # back to the file's order
    assert _visible_lines(page) == LINES
    page.click('th[data-sort="row"] button')
    assert _visible_lines(page) == LINES[::-1]
    page.click('th[data-sort="row"] button')

    page.click("#only-disagreements")
    assert page.evaluate("document.getElementById('only-disagreements').checked") is True
    assert _visible_lines(page) == [3, 5, 6]
    assert page.evaluate("document.getElementById('shown').textContent") == "3 of 5 items shown"

    def choose(select: str, value: str) -> None:
        page.evaluate(
            f"(() => {{ const s = document.getElementById('{select}'); s.value = '{value}';"
            " s.dispatchEvent(new Event('change')); })()"
        )

    choose("filter-scorer", "1")  # support's disagreements only
    assert _visible_lines(page) == [5, 6]
    choose("filter-label", "0:1")  # ... on items labelled hallucinated
    assert _visible_lines(page) == [5]
    page.click("#only-disagreements")  # every item support scored, labelled hallucinated
    assert _visible_lines(page) == [2, 5]
    choose("filter-scorer", "")
    choose("filter-label", "0:")  # the unlabelled item
    assert _visible_lines(page) == [9]


@needs_chromium
@pytest.mark.timeout(300)
def test_the_docs_screenshot_comes_from_its_script(tmp_path: Path) -> None:
    """docs/report-review.png is made by docs/report_screenshot.py: it still runs."""
    shot = tmp_path / "review.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "report_screenshot.py"), str(shot)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert width == 1400
    assert 300 < height <= 1000
