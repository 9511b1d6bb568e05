"""run_evals(keep_runs=False): a finished item's run is let go (a compact copy stays), so an
evaluation of many stored runs holds the runs in flight, not every run."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from _evals_support import length_scorer

from livescore import Run, Step, ToolCall
from livescore.evals import ItemResult, run_evals_sync


class ToolResultProbe:
    """A tool result whose life can be watched (a test double for a large tool result)."""


def stored_runs(
    count: int, alive: weakref.WeakSet[ToolResultProbe], most: list[int]
) -> Iterator[Run]:
    """``count`` runs as a traces file gives them (ids, a tool call with its result), noting
    in ``most`` how many runs' tool results were alive as each run was handed over."""
    for n in range(count):
        gc.collect()
        most[0] = max(most[0], len(alive))
        probe = ToolResultProbe()
        alive.add(probe)
        yield Run(
            input=[{"role": "user", "content": f"Weather in town {n}?"}],
            output=[{"role": "assistant", "content": f"Sunny in town {n}."}],
            trace_id=f"{n + 1:032x}",
            span_id=f"{n + 1:016x}",
            name="weather",
            steps=[
                Step(kind="model", name="gpt-test", input="question", output="asks for a tool"),
                Step(
                    kind="tool",
                    name="get_weather",
                    index=1,
                    tool_call=ToolCall("get_weather", args={"city": f"town {n}"}, result=probe),
                ),
            ],
        )


# A full collection before each run handed over walks everything earlier tests left: a
# second or more each on a loaded machine, so the test gets more than the suite's 60 s.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("concurrency", [1, 4])
def test_without_keep_runs_only_the_runs_in_flight_stay_alive(concurrency: int) -> None:
    alive: weakref.WeakSet[ToolResultProbe] = weakref.WeakSet()
    most = [0]
    seen_whole: list[bool] = []

    def on_item_complete(item: ItemResult) -> None:
        # The callback (livescore eval --out) still sees the whole run.
        assert item.run is not None
        seen_whole.append(any(s.tool_call and s.tool_call.result for s in item.run.steps))

    result = run_evals_sync(
        stored_runs(30, alive, most),
        [length_scorer()],
        concurrency=concurrency,
        on_item_complete=on_item_complete,
        keep_runs=False,
    )
    gc.collect()

    assert len(result.items) == 30
    assert all(seen_whole)
    assert result.scores["short"].scored == 30
    # The window (``concurrency`` items, the one being handed over) and nothing more.
    assert most[0] <= concurrency + 1
    assert len(alive) == 0


def test_by_default_every_run_stays_on_its_result() -> None:
    alive: weakref.WeakSet[ToolResultProbe] = weakref.WeakSet()
    most = [0]
    result = run_evals_sync(stored_runs(20, alive, most), [length_scorer()])
    gc.collect()
    assert most[0] == 19
    assert len(alive) == 20
    assert all(item.run is not None and len(item.run.steps) == 2 for item in result.items)


def test_the_compact_run_keeps_what_the_summaries_and_the_report_read() -> None:
    kept = run_evals_sync(stored_runs(3, weakref.WeakSet(), [0]), [length_scorer()])
    compact = run_evals_sync(
        stored_runs(3, weakref.WeakSet(), [0]), [length_scorer()], keep_runs=False
    )
    for whole, small in zip(kept.items, compact.items, strict=True):
        assert small.run is not None
        assert whole.run is not None
        assert (small.input_text, small.output_text) == (whole.input_text, whole.output_text)
        assert (small.input, small.output, small.id) == (whole.input, whole.output, whole.id)
        assert (small.run.trace_id, small.run.span_id, small.run.name) == (
            whole.run.trace_id,
            whole.run.span_id,
            whole.run.name,
        )
        tools = [
            (s.tool_call.name, s.tool_call.args)
            for s in whole.run.steps
            if s.kind == "tool" and s.tool_call is not None
        ]
        assert [(s.tool_call.name, s.tool_call.args) for s in small.run.steps if s.tool_call] == (
            tools
        )
        assert [s.kind for s in small.run.steps] == ["tool"]  # the model turn is let go
        assert small.scores["short"].score == whole.scores["short"].score
