"""``livescore worker --redact``: the judge and the exported scores of a fleet hold
placeholders, never the run's e-mails, phone numbers or names (which the job carried)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fleet_support import Fleet

from livescore import Run
from livescore.live import LiveDispatcher
from livescore.scoring import create_scorer
from livescore.testing import OpenAITestServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pii"))
from _pii_support import INPUT, OUTPUT, leaks


def test_worker_redact_sends_and_exports_placeholders_only(fleet: Fleet) -> None:
    with OpenAITestServer(responder=lambda body: "no") as server:
        fleet.start_worker("--redact", env={"FLEET_TEST_JUDGE_URL": server.base_url})
        # The agent side names the worker's scorers by id; the worker's own do the work.
        wanted = [
            create_scorer(id=sid, description=sid, generate_score=lambda ctx: 1.0)
            for sid in ("judged", "priced", "keyword-coverage")
        ]
        run = Run(input=INPUT, output=OUTPUT)
        with LiveDispatcher(wanted, broker=fleet.url, register_atexit=False) as dispatcher:
            assert dispatcher.submit(run)
            assert dispatcher.flush(timeout=30)
        fleet.wait_for_pairs({(run.run_id, s.id) for s in wanted}, timeout=120)
        requests = list(server.requests)
    spans = [(s.name, s.attributes) for s in fleet.receiver.spans]
    events = [(e.body, e.attributes) for e in fleet.receiver.events()]
    assert len(requests) == 2  # judged and priced each asked once
    asked = json.dumps(requests)
    assert "<PERSON_1>" in asked
    assert "<PHONE_1>" in asked
    statuses = {s.attributes["livescore.scorer.id"]: s for s in fleet.score_spans()}
    assert all("error.type" not in s.attributes for s in statuses.values()), fleet.logs()
    assert leaks([requests, spans, events, fleet.logs()]) == []
