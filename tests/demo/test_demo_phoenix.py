"""The demo into a real Arize Phoenix: scores as evaluation spans and as score badges.

``livescore demo --phoenix URL`` sends the demo's spans to Phoenix over OTLP/HTTP and each
score through :class:`~livescore.sinks.PhoenixSink` as a span annotation. Read back over
Phoenix's REST API: every evaluation span nests under its run's span, and every score is an
annotation on that span with the same score and label; Phoenix's own UI, rendered in
headless Chromium, shows them as badges on the run. Phoenix comes from ``make phoenix`` (a
virtual environment of its own, ``.phoenix-venv``) and runs in a network namespace of its
own (its gRPC receiver binds every interface); see ``tests/phoenix_server.py``.
"""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _demo_support import demo_judge_responder, run_demo_cli
from phoenix_server import find_chromium, get_json, render_page
from rich.console import Console

from livescore.testing import OpenAITestServer

pytestmark = pytest.mark.phoenix


@dataclass
class DemoInPhoenix:
    url: str
    output: str
    runs: dict[str, dict[str, Any]]  # by span id
    evaluations: list[dict[str, Any]]
    annotations: list[dict[str, Any]]


def _spans(phoenix: str) -> list[dict[str, Any]]:
    return list(get_json(f"{phoenix}/v1/projects/default/spans?limit=1000")["data"])


@pytest.fixture(scope="module")
def demo_in_phoenix(phoenix_url: str) -> DemoInPhoenix:
    """``livescore demo --phoenix URL`` (5 questions, 2 scorers), then read back."""
    before = {s["context"]["trace_id"] for s in _spans(phoenix_url)}
    buffer = io.StringIO()
    with pytest.MonkeyPatch.context() as env:
        for name in ("LIVESCORE_JUDGE_MODEL", "LIVESCORE_AGENT_MODEL", "OPENAI_API_KEY"):
            env.delenv(name, raising=False)
        with OpenAITestServer(responder=demo_judge_responder) as judge:
            env.setenv("OPENAI_BASE_URL", judge.base_url)
            code = run_demo_cli(
                ["--model", "openai/test-judge", "--phoenix", phoenix_url],
                Console(file=buffer, width=200, no_color=True),
            )
    output = buffer.getvalue()
    assert code == 0, output
    # Phoenix inserts spans asynchronously: wait until all ten scores' spans are in.
    deadline = time.monotonic() + 30
    while True:
        spans = [s for s in _spans(phoenix_url) if s["context"]["trace_id"] not in before]
        evaluations = [s for s in spans if s["name"].startswith("evaluation ")]
        if len(evaluations) >= 10 or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    runs = {
        s["context"]["span_id"]: s for s in spans if s["name"] == "invoke_agent parcelly-support"
    }
    query = "&".join(f"span_ids={span_id}" for span_id in runs)
    annotations = get_json(f"{phoenix_url}/v1/projects/default/span_annotations?{query}&limit=100")[
        "data"
    ]
    return DemoInPhoenix(phoenix_url, output, runs, evaluations, annotations)


def test_every_score_is_an_annotation_on_its_runs_span(demo_in_phoenix: DemoInPhoenix) -> None:
    demo = demo_in_phoenix
    # 5 questions x 2 scorers, each delivered by the time the demo returned
    assert "phoenix  sent 10 · failed 0 · skipped 0 · dropped 0 · pending 0" in demo.output
    assert len(demo.runs) == 5
    assert len(demo.evaluations) == 10
    expected = set()
    for evaluation in demo.evaluations:
        attributes = evaluation["attributes"]
        assert evaluation["span_kind"] == "EVALUATOR"  # Phoenix reads openinference.span.kind
        assert evaluation["parent_id"] in demo.runs  # nests under its run's span
        assert [e["name"] for e in evaluation["events"]] == ["gen_ai.evaluation.result"]
        expected.add(
            (
                evaluation["parent_id"],
                attributes["gen_ai.evaluation.name"],
                round(attributes["gen_ai.evaluation.score.value"], 6),
                attributes["gen_ai.evaluation.score.label"],
                attributes["livescore.run.id"],
            )
        )
    assert len(demo.annotations) == 10
    found = {
        (
            a["span_id"],
            a["name"],
            round(a["result"]["score"], 6),
            a["result"]["label"],
            a["metadata"]["livescore.run.id"],
        )
        for a in demo.annotations
    }
    assert found == expected
    for annotation in demo.annotations:
        assert annotation["source"] == "API"
        run_id = annotation["metadata"]["livescore.run.id"]
        assert annotation["identifier"] == f"livescore:{run_id}"
        kind = "LLM" if annotation["name"] == "hallucination" else "CODE"
        assert annotation["annotator_kind"] == kind
        assert annotation["result"]["explanation"]
    drone = [
        a for a in demo.annotations if a["name"] == "hallucination" and a["result"]["score"] > 0
    ]
    assert len(drone) == 1  # the scripted answer with the unsupported drone claim
    assert drone[0]["result"]["label"] == "low"
    assert drone[0]["result"]["score"] == pytest.approx(0.33, abs=0.01)
    assert drone[0]["metadata"]["livescore.judge.model"] == "test-judge"
    assert drone[0]["metadata"]["livescore.claims.hallucinated"] == 1


@pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium is not installed (apt-get install chromium), so Phoenix's UI "
    "is not rendered; the annotations are still read back over its REST API",
)
def test_phoenixs_ui_shows_the_scores_as_badges_on_the_run(
    demo_in_phoenix: DemoInPhoenix, tmp_path: Path
) -> None:
    drone = next(
        a
        for a in demo_in_phoenix.annotations
        if a["name"] == "hallucination" and a["result"]["score"] > 0
    )
    trace_id = demo_in_phoenix.runs[drone["span_id"]]["context"]["trace_id"]
    dom = render_page(
        f"{demo_in_phoenix.url}/redirects/traces/{trace_id}", profile=tmp_path / "profile"
    )
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom)).replace("&nbsp;", " ")
    # the run's span, selected, with its annotations: "hallucination μ 0.33", …
    section = text[text.index("Annotations") :][:400]
    assert re.search(r"hallucination μ +0\.33", section), section
    assert re.search(r"keyword-coverage μ +0\.\d+", section), section
