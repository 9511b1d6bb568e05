"""A huge judge answer does not stall the agent's thread.

Before the fix, a 50 MB answer was read whole, parsed, and quoted back whole in the
corrective retry (a 52 MB request): the worker held the GIL long enough to stall the
agent's thread 0.4-0.8 s. Now the response cap cuts it at 1 MB and the corrective retry
quotes at most 2,000 characters. Measured as a ratio of the main thread's tick latency to
its own baseline, so a slow or busy machine moves both sides.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from livescore import Run
from livescore.live import LiveDispatcher
from livescore.otel import OTelEmitter
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer, Reply

HUGE = 50_000_000
RUNS = 3
# The worst tick during a huge answer, over the typical tick with the worker idle. A 0.4 s
# stall against a ~1 ms tick is a ratio in the hundreds; bounded reads stay near one. Taken
# as the best of three runs, so one scheduling hiccup on a busy machine cannot fail it.
MAX_RATIO = 50


def _huge_invalid_completion() -> bytes:
    # Built before measuring, so that the test server's own work is not what stalls.
    completion = {
        "id": "chatcmpl-huge",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"claims": "' + "x" * HUGE},
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": HUGE // 4},
    }
    return json.dumps(completion).encode()


def _tick_gaps(until: Callable[[], bool], *, limit_s: float = 120.0) -> list[float]:
    """The main thread's loop: sleep 1 ms, record how long each turn really took."""
    gaps: list[float] = []
    last = time.perf_counter()
    deadline = last + limit_s
    while not until() and last < deadline:
        time.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    return gaps


@pytest.fixture
def dispatcher_factory(
    tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> Iterator[Callable[[OpenAITestServer], LiveDispatcher]]:
    created: list[LiveDispatcher] = []

    def make(server: OpenAITestServer) -> LiveDispatcher:
        scorer = create_hallucination_scorer(
            model=server.judge(timeout=60, max_retries=0),
            context=["It is 21°C in Paris."],
            judge_mode="one_call",
        )
        dispatcher = LiveDispatcher(
            [scorer],
            emitter=OTelEmitter(tracer_provider=tracer_provider, meter_provider=meter_provider),
            register_atexit=False,
        )
        created.append(dispatcher)
        return dispatcher

    yield make
    for dispatcher in created:
        dispatcher.shutdown(timeout=10)


def test_a_huge_invalid_answer_does_not_stall_the_agents_thread(
    dispatcher_factory: Callable[[OpenAITestServer], LiveDispatcher],
) -> None:
    huge = Reply.raw_body(_huge_invalid_completion())
    warm_up = {"claims": [], "verdicts": [], "reason": "Nothing to check."}
    with OpenAITestServer([warm_up, *[huge] * RUNS * 2]) as server:
        dispatcher = dispatcher_factory(server)
        run = Run(input="Weather in Paris?", output="It is 21°C in Paris.")
        dispatcher.submit(run)  # starts the worker and opens the judge's connection
        assert dispatcher.flush(timeout=30)
        assert dispatcher.stats().scored == 1

        baseline = _tick_gaps(until=lambda: False, limit_s=0.5)
        worst: list[float] = []
        for i in range(RUNS):
            dispatcher.submit(run)
            finished = 2 + i
            gaps = _tick_gaps(
                until=lambda n=finished: dispatcher.stats().scored + dispatcher.stats().failed >= n
            )
            worst.append(max(gaps))
        stats = dispatcher.stats()
    assert (stats.scored, stats.failed) == (1, RUNS)  # each huge answer is a failed score
    typical = statistics.median(baseline)
    ratio = min(worst) / typical
    assert ratio < MAX_RATIO, (
        f"the agent's thread stalled {min(worst) * 1e3:.0f} ms (best of {RUNS}) against a "
        f"{typical * 1e3:.2f} ms tick: ratio {ratio:.0f}"
    )
