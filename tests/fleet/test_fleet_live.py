"""Live scoring on a fleet: agent-side hand-off, worker-side scoring and emission."""

from __future__ import annotations

import json
from pathlib import Path

from fleet_support import Fleet, span_by_pair, wait_for
from fleet_support import make_run as _run

from livescore.live import LiveDispatcher, ScorerConfig
from livescore.scorers import create_keyword_coverage_scorer


def test_scores_are_child_spans_of_the_runs_and_reach_the_sinks(
    fleet: Fleet, tmp_path: Path
) -> None:
    sink_file = tmp_path / "sink.jsonl"
    fleet.start_worker("--scorer-concurrency", "8", env={"FLEET_TEST_SINK_FILE": str(sink_file)})
    with LiveDispatcher(
        [ScorerConfig(create_keyword_coverage_scorer(), sampling=0.5)],
        broker=fleet.url,
        register_atexit=False,
    ) as dispatcher:
        runs = [_run(i) for i in range(40)]
        sampled = [r for r in runs if dispatcher.submit(r)]
        assert dispatcher.flush(timeout=30)
        stats = dispatcher.stats()
    # Sampling stayed in the agent: only its picks were published, all of them handed off.
    assert 0 < len(sampled) < len(runs)
    assert stats.sampled == stats.handed_off == len(sampled)
    assert stats.scored == stats.dropped == 0
    pairs = {(r.run_id, "keyword-coverage") for r in sampled}
    fleet.wait_for_pairs(pairs)
    spans = span_by_pair(fleet.score_spans())
    assert set(spans) == pairs
    for run in sampled:
        span = spans[(run.run_id, "keyword-coverage")]
        # Same trace as the run, parented by the run's span, carried in the job.
        assert span.trace_id == run.trace_id
        assert span.parent_span_id == run.span_id
        assert span.attributes["livescore.sample_rate"] == 0.5
        assert span.attributes["livescore.source"] == "live"
        assert span.attributes["gen_ai.evaluation.score.value"] == 1.0
        assert span.service_name == "livescore-worker-test"
    # The worker's sinks (a module attribute next to its scorers) got every score too.
    wait_for(
        lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) >= len(pairs),
        10,
        "the sink",
    )
    lines = [json.loads(line) for line in sink_file.read_text().splitlines()]
    assert {(x["run_id"], x["scorer_id"]) for x in lines} == pairs
    assert {x["source"] for x in lines} == {"live"}
