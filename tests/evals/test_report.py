"""The HTML report: content, escaping, and a real render in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _evals_support import length_scorer

from livescore import create_scorer
from livescore.evals import EvalResult, QualityRow, render_report, run_evals_sync, write_report
from livescore.evals._quality import binary_quality
from livescore.scoring import StepContext

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


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
        labels=[1, 0, None],
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
    # Self-contained: no external stylesheet, script or image.
    assert not re.search(r"<(script|link|img)\b", html)
    assert "http://" not in html
    assert "https://" not in html


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


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (apt-get install -y chromium) so the report "
    "is not rendered in a browser; the HTML content is still checked by the other tests",
)
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    report = write_report(_result(), tmp_path / "report.html", title="Browser check")
    profile = tmp_path / "profile"
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--dump-dom",
            report.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    # The browser parsed the page: the DOM it dumps has the rows, the chart and the text.
    assert dom.count('<tr class="item"') == 3
    assert 'data-index="2"' in dom
    assert "<svg" in dom
    assert "Paris is in France" in dom
    assert "<script>" not in dom  # the output's script stayed text
