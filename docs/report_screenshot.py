"""Make docs/report-review.png: the ``livescore eval --report`` page, filtered to the items
where the judge disagrees with the label.

It runs the real ``livescore eval --scorer hallucination --report`` over the first lines of
``data/hallucination/halueval_qa_200.jsonl`` (labelled HaluEval QA answers), with a scripted
judge standing in for a model on a loopback server (a claim is supported when most of its
words are in the context: a crude judge, so it disagrees with some labels), opens the report
in headless Chromium (``tests/headless_chromium.py``), ticks "only where a scorer disagrees
with the label" with the mouse and takes the screenshot.

Usage: python docs/report_screenshot.py [OUTPUT.png]
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from headless_chromium import Browser  # noqa: E402

from livescore.cli import main as livescore  # noqa: E402
from livescore.testing import OpenAITestServer  # noqa: E402

DATA = ROOT / "data" / "hallucination" / "halueval_qa_200.jsonl"
ITEMS = 12


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3 or w.isdigit()}


def word_overlap_judge(body: dict[str, Any]) -> Any:
    """A scripted judge (a test double): the claims are the output's sentences, and a claim
    is unsupported when under 70 % of its longer words appear in the context."""
    prompt = str(body["messages"][-1]["content"])
    context = " ".join(re.findall(r"<context[^>]*>(.*?)</context>", prompt, re.S))
    if "<claims>" in prompt:
        verdicts = []
        for claim in re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S):
            words = _words(claim)
            missing = sorted(words - _words(context))
            unsupported = bool(words) and len(missing) > 0.3 * len(words)
            verdicts.append(
                {
                    "statement": claim,
                    "verdict": "yes" if unsupported else "no",
                    "reason": f"the context does not say {', '.join(missing)}"
                    if unsupported
                    else "the context states it",
                }
            )
        return {"verdicts": verdicts}
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is unknown because"
    if 'hallucinated="yes"' in prompt:
        return f"{opening} a claim uses words the context does not contain."
    return f"{opening} every claim is in the context."


def main(output: Path) -> int:
    for name in ("LIVESCORE_JUDGE_MODEL", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        os.environ["LIVESCORE_CACHE"] = str(folder / "cache")  # no earlier answers
        data = folder / "halueval_qa.jsonl"
        lines = DATA.read_text(encoding="utf-8").splitlines(keepends=True)[:ITEMS]
        data.write_text("".join(lines), encoding="utf-8")
        report = folder / "report.html"
        said = io.StringIO()
        with OpenAITestServer(responder=word_overlap_judge) as judge:
            os.environ["OPENAI_BASE_URL"] = judge.base_url
            argv = ["eval", str(data), "--scorer", "hallucination", "--model", "openai/judge"]
            with redirect_stdout(said), redirect_stderr(said):
                code = livescore([*argv, "--report", str(report), "--quiet"])
        if code != 0:
            print(said.getvalue(), file=sys.stderr)
            return code
        with Browser(folder / "profile") as browser:
            page = browser.open(report.as_uri(), size=(1400, 1000))
            page.click("#only-disagreements")
            if not page.evaluate("document.querySelectorAll('tr.disagrees:not([hidden])').length"):
                print("the judge agreed with every label: nothing to show", file=sys.stderr)
                return 1
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(output.resolve(), element="#items", height=1000)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "report-review.png"
    sys.exit(main(target))
