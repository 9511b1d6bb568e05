"""The live worker and an unreachable judge: every sampled run still ends as a counted
failure (``error.type`` ``connection_error``), and once the judge's circuit is open the
worker no longer waits a timeout per score (a real hanging server on 127.0.0.1)."""

from __future__ import annotations

import pytest
from _live_support import FakeEmitter

from livescore import Run
from livescore.live import LiveDispatcher, ScorerConfig
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer, Reply

RUNS = 30


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_a_hanging_judge_fails_every_score_at_once_after_the_circuit_opens() -> None:
    with OpenAITestServer(responder=lambda body: Reply.hang(60)) as server:
        judge = server.judge(
            timeout=0.3, max_concurrency=4, circuit_failures=5, circuit_probe_interval=60
        )
        scorer = create_hallucination_scorer(model=judge, context=["It is sunny in Paris."])
        emitter = FakeEmitter()
        dispatcher = LiveDispatcher(
            [ScorerConfig(scorer, timeout=30)], emitter=emitter, register_atexit=False
        )
        try:
            for i in range(RUNS):
                assert dispatcher.submit(Run(input=f"Weather {i}?", output="It is sunny."))
            # Before: each score waited its timeouts and retries (30 x 4 x 0.3 s, with
            # backoff, four at a time); now the first wave opens the circuit.
            assert dispatcher.flush(timeout=50)
            stats = dispatcher.stats()
        finally:
            dispatcher.shutdown(5)
        requests = len(server.requests)
    assert stats.sampled == RUNS
    assert stats.failed == RUNS  # every run counted, none lost
    assert set(stats.failed_by_type) <= {"connection_error", "timeout"}
    assert stats.failed_by_type.get("connection_error", 0) >= RUNS - judge.max_concurrency
    assert judge.unreachable is not None
    assert requests <= 2 * judge.max_concurrency  # the first wave, and its retries' start
    assert len(emitter.results) == RUNS
