"""A process forked while the handler is in use: the child neither hangs nor adopts runs.

Each test forks; the child reports through a pipe and leaves with ``os._exit`` (never back
into pytest). The parent waits for it with a deadline and kills it past that, so a child
that hangs fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from _lc_support import ANSWER, QUESTION, SpySink, weather_agent

from livescore_langchain import (
    LiveScoringHandler,
    _instrument,
    instrument,
    instrumented_handler,
    uninstrument,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")

CHILD_DEADLINE_S = 20.0


def _in_child(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Fork; run ``work`` in the child and return what it reported (fail if it hangs)."""
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about forking a multi-threaded process; that is the point.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.close(read_fd)
            os.write(write_fd, json.dumps(work()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_fd)
            pytest.fail(f"the forked child hung for {CHILD_DEADLINE_S:.0f} s and was killed")
        time.sleep(0.02)
    with os.fdopen(read_fd) as pipe:
        report: dict[str, Any] = json.loads(pipe.read() or "{}")
    assert os.waitstatus_to_exitcode(status) == 0, report
    return report


def test_a_child_forked_while_the_handler_lock_is_held_does_not_hang() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        # Stands for an agent thread inside a callback at the moment another thread forks.
        with handler._lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert held.wait(10)

    def child() -> dict[str, Any]:
        result = weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
        return {
            "answer": result["messages"][-1].content,
            "recorded": [run.output[-1].content for run in sink.runs],
            "open_runs": handler.open_runs,
            "callback_errors": handler.callback_errors,
        }

    try:
        report = _in_child(child)
    finally:
        release.set()
        holder.join(10)

    assert report == {"answer": ANSWER, "recorded": [ANSWER], "open_runs": 0, "callback_errors": 0}
    # The parent's lock is its own and still works.
    weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
    assert [run.output[-1].content for run in sink.runs] == [ANSWER]


def test_runs_open_at_the_fork_stay_the_parents() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", max_open_runs=2)
    root, child_run = uuid.uuid4(), uuid.uuid4()
    handler.on_chain_start({}, {"messages": [("user", "hi")]}, run_id=root, name="agent")
    handler.on_chain_start({}, {}, run_id=child_run, parent_run_id=root, name="model")

    def child() -> dict[str, Any]:
        open_at_start = handler.open_runs
        # The parent's run goes on in the child (a fork inside a tool): its remaining
        # events are ignored, not taken for a new run, and it is neither scored nor dropped.
        late = uuid.uuid4()
        handler.on_chain_start({}, {}, run_id=late, parent_run_id=child_run, name="tool")
        handler.on_chain_end({}, run_id=late, parent_run_id=child_run)
        handler.on_chain_end({}, run_id=child_run, parent_run_id=root)
        handler.on_chain_end({"messages": []}, run_id=root)
        ignored = {"sampled": len(sink.keys) - 1, "submitted": len(sink.submitted)}
        # The child's own runs are recorded as usual, past the cap of open runs too.
        for _ in range(3):
            weather_agent().invoke(QUESTION, config={"callbacks": [handler]})
        return {
            "open_at_start": open_at_start,
            "ignored": ignored,
            "dropped": [reason for _, reason in sink.dropped],
            "recorded": len(sink.runs),
            "open_runs": handler.open_runs,
            "evicted_runs": handler.evicted_runs,
        }

    report = _in_child(child)

    assert report == {
        "open_at_start": 0,
        "ignored": {"sampled": 0, "submitted": 0},
        "dropped": [],
        "recorded": 3,
        "open_runs": 0,
        "evicted_runs": 0,
    }
    # In the parent the run is still open, and is handed over when it ends.
    assert handler.open_runs == 1
    handler.on_chain_end({}, run_id=child_run, parent_run_id=root)
    handler.on_chain_end({"messages": []}, run_id=root)
    assert [run.run_id for run in sink.runs] == [str(root)]


def test_a_child_forked_inside_instrument_can_instrument() -> None:
    handler = LiveScoringHandler(dispatcher=SpySink(), emit_run_spans="never")
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with _instrument._LOCK:  # a thread inside instrument() at the fork
            held.set()
            release.wait()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert held.wait(10)

    def child() -> dict[str, Any]:
        instrument(handler)
        attached = instrumented_handler() is handler
        uninstrument()
        return {"attached": attached}

    try:
        report = _in_child(child)
    finally:
        release.set()
        holder.join(10)

    assert report == {"attached": True}
    assert instrumented_handler() is None
