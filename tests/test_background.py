"""BackgroundWorker: the bounded queue, thread and serve loop under the dispatcher, every
sink and the fleet's export thread.

Each test drives a small consumer of its own (a test double that handles batches) to pin
one rule: overflow (the consumer told what was dropped), the lazily started thread,
wake-ups, linger, flush (inline without a thread), a failed thread, shutdown with and
without a stuck thread, an event-loop consumer cancelled by an abort, a forked child, and
the exit stages sharing one deadline.
"""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import sys
import textwrap
import threading
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from forking import in_forked_child

from livescore._background import BackgroundWorker, Consumer, exit_timeout, fit_to_deadline

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Item:
    name: str
    seq: int = 0
    done: threading.Event = field(default_factory=threading.Event)


class ServingDouble(Consumer[Item]):
    """A test double of a consumer: it handles one item per batch, in order.

    ``hold`` (when set) keeps the thread on the item it took until the event opens;
    ``served`` lists what was finished, in order; ``dropped`` what the worker gave up, with
    the reason.
    """

    def __init__(self, hold: threading.Event | None = None, **options: object) -> None:
        self.hold = hold
        self.served: list[str] = []
        self.handled: list[str] = []  # every item handled, numbered or not
        self.dropped: list[tuple[str, str]] = []
        self.taken = threading.Event()
        self.threads: set[int] = set()
        self.forks: list[int] = []
        self.worker: BackgroundWorker[Item] = BackgroundWorker(
            "test-worker",
            self,
            **options,  # type: ignore[arg-type]
        )

    def take_locked(self, queue: deque[Item], now: float, urgent: bool) -> list[Item]:
        return [queue.popleft()] if queue else []

    def handle(self, batch: list[Item]) -> None:
        self.threads.add(threading.get_ident())
        self.taken.set()
        if self.hold is not None:
            self.hold.wait(30)
        self.handled.extend(item.name for item in batch)
        with self.worker.lock:
            for item in batch:
                if self.worker.finish_locked(item):
                    self.served.append(item.name)

    def dropped_locked(self, items: list[Item], reason: str) -> None:
        self.dropped.extend((item.name, reason) for item in items)

    def after_fork(self) -> None:
        self.forks.append(os.getpid())

    def put(self, name: str) -> None:
        """Put an item. Refused items raise."""
        with self.worker.lock:
            if not self.worker.admits_locked():
                raise OverflowError(name)
            self.worker.put_locked(Item(name))
        assert self.worker.start_pending()


@pytest.fixture
def consumers() -> Iterator[list[ServingDouble]]:
    made: list[ServingDouble] = []
    yield made
    for consumer in made:
        if consumer.hold is not None:
            consumer.hold.set()
        consumer.worker.shutdown(5, grace=1)


def new(made: list[ServingDouble], **options: object) -> ServingDouble:
    options.setdefault("max_items", 100)
    consumer = ServingDouble(**options)  # type: ignore[arg-type]
    made.append(consumer)
    return consumer


def wait_for(condition: Callable[[], bool], what: str) -> None:
    for _ in range(1000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"never saw {what}")


def test_a_consumer_that_defines_neither_handle_nor_serve_is_named_when_used() -> None:
    # handle() is the hook every consumer fills in (or serve(), on an event loop); the base
    # says which consumer forgot, rather than a bare NotImplementedError.
    class Forgetful(Consumer[Item]):
        pass

    with pytest.raises(
        NotImplementedError, match=r"^Forgetful defines neither handle\(\) nor serve\(\)$"
    ):
        Forgetful().handle([Item("a")])


def test_items_are_served_in_order_by_one_thread_started_on_the_first_put(
    consumers: list[ServingDouble],
) -> None:
    c = new(consumers)
    assert not c.worker.running
    for n in range(5):
        c.put(f"i{n}")
    assert c.worker.flush(10)
    assert c.served == ["i0", "i1", "i2", "i3", "i4"]
    assert len(c.threads) == 1
    assert c.worker.unfinished == 0


def test_a_full_queue_refuses_new_items_or_evicts_the_oldest_and_says_so(
    consumers: list[ServingDouble],
) -> None:
    hold = threading.Event()
    refusing = new(consumers, max_items=2, hold=hold)
    refusing.put("taken")
    assert refusing.taken.wait(10)  # on the thread: no longer queued
    refusing.put("a")
    refusing.put("b")
    with pytest.raises(OverflowError):
        refusing.put("c")

    evicting = new(consumers, max_items=2, overflow="drop_oldest", hold=hold)
    evicting.put("taken")
    assert evicting.taken.wait(10)
    evicting.put("a")
    evicting.put("b")
    evicting.put("c")
    assert evicting.dropped == [("a", "queue_full")]  # the consumer counts it as dropped
    hold.set()
    assert refusing.worker.flush(10)
    assert evicting.worker.flush(10)
    assert refusing.served == ["taken", "a", "b"]
    assert evicting.served == ["taken", "b", "c"]
    assert refusing.dropped == []


def test_an_unfinished_bound_counts_items_the_thread_holds(
    consumers: list[ServingDouble],
) -> None:
    hold = threading.Event()
    c = new(consumers, max_items=2, bound="unfinished", hold=hold)
    c.put("taken")
    assert c.taken.wait(10)
    c.put("a")
    with pytest.raises(OverflowError):
        c.put("b")  # one taken and one queued: two unfinished
    hold.set()
    assert c.worker.flush(10)
    c.put("b")
    assert c.worker.flush(10)


class LookingDouble(Consumer[Item]):
    """A test double of a consumer that looks at the queue and takes nothing: it records
    how many items each look found, and says when the thread parks."""

    def __init__(self) -> None:
        self.looks: list[int] = []
        self.parked = threading.Event()
        self.worker: BackgroundWorker[Item] = BackgroundWorker(
            "peek", self, max_items=100, wake_at=3
        )

    def take_locked(self, queue: deque[Item], now: float, urgent: bool) -> list[Item]:
        self.looks.append(len(queue))
        return []

    def wait_locked(self, now: float) -> float | None:
        self.parked.set()  # called as the thread parks
        return None

    def put(self, name: str) -> None:
        with self.worker.lock:
            self.worker.put_locked(Item(name))
        assert self.worker.start_pending()


def test_a_parked_thread_wakes_for_a_first_item_and_a_full_batch_only() -> None:
    c = LookingDouble()
    try:
        c.put("i0")  # a first item: starts the thread, which looks and parks
        wait_for(lambda: c.parked.is_set() and c.worker._idle, "the thread parked")
        c.parked.clear()
        c.put("i1")  # neither a first item nor a full batch: it sleeps on
        with c.worker.lock:
            assert c.worker._idle  # (the flag a waking put clears)
        c.put("i2")  # a batch of 3: wakes it
        assert c.parked.wait(10)
    finally:
        with c.worker.lock:
            c.worker.queue.clear()
        c.worker.shutdown(0, grace=1)
    assert c.looks[:2] == [1, 3]


def test_a_woken_thread_lingers_until_a_flush_wants_the_work(
    consumers: list[ServingDouble],
) -> None:
    c = new(consumers, linger=60.0)
    c.put("first")
    assert c.worker.flush(10)  # started: the thread serves at once, then sleeps
    wait_for(lambda: c.worker._idle, "the thread parked")
    c.put("second")  # wakes it: it waits a minute for company...
    wait_for(lambda: c.worker._lingering, "the thread lingering")
    assert c.served == ["first"]
    assert c.worker.flush(10)  # ...unless a flush wants the work now
    assert c.served == ["first", "second"]


def test_flush_times_out_while_the_thread_is_busy(consumers: list[ServingDouble]) -> None:
    hold = threading.Event()
    c = new(consumers, hold=hold)
    c.put("slow")
    assert c.taken.wait(10)
    assert c.worker.flush(0.05) is False
    hold.set()
    assert c.worker.flush(10) is True


class SelfFlushingDouble(ServingDouble):
    """A test double of a consumer whose batch asks its own worker for a flush."""

    answers: list[bool]

    def handle(self, batch: list[Item]) -> None:
        self.answers = [self.worker.flush(10)]  # it would wait for itself
        super().handle(batch)


def test_flush_on_the_workers_own_thread_returns_false_at_once(
    consumers: list[ServingDouble],
) -> None:
    c = SelfFlushingDouble(max_items=10)
    consumers.append(c)
    c.put("x")
    assert c.worker.flush(10)
    assert c.answers == [False]


def _refuse(self: threading.Thread) -> None:
    raise RuntimeError("can't create new thread at interpreter shutdown")


def test_without_a_thread_an_inline_worker_handles_the_batches_in_flush(
    consumers: list[ServingDouble], monkeypatch: pytest.MonkeyPatch
) -> None:
    c = new(consumers, max_items=10, inline=True)
    with monkeypatch.context() as patch:
        patch.setattr(threading.Thread, "start", _refuse)
        with c.worker.lock:
            c.worker.put_locked(Item("a"))
        assert c.worker.start_pending() is False
        with c.worker.lock:
            c.worker.put_locked(Item("b"))
        assert c.worker.start_pending() is True  # no thread was even tried
    assert not c.worker.running
    assert c.worker.flush(10)
    assert c.served == ["a", "b"]
    assert c.threads == {threading.get_ident()}  # handled on the flushing thread
    assert c.worker.unfinished == 0
    assert c.dropped == []


def test_without_an_inline_drain_no_thread_drops_and_the_next_put_tries_again(
    consumers: list[ServingDouble], monkeypatch: pytest.MonkeyPatch
) -> None:
    c = new(consumers, max_items=10)
    with monkeypatch.context() as patch:
        patch.setattr(threading.Thread, "start", _refuse)
        with c.worker.lock:
            c.worker.put_locked(Item("a"))
        assert c.worker.start_pending() is False
        assert not c.worker.running
        assert c.dropped == [("a", "no_worker")]  # the consumer counts it as dropped
        with c.worker.lock:
            c.worker.put_locked(Item("b"))
            assert c.worker.running  # this put made a thread again
        assert c.worker.start_pending() is False
    assert c.dropped == [("a", "no_worker"), ("b", "no_worker")]
    c.put("c")  # threads start again: served
    assert c.worker.flush(10)
    assert c.served == ["c"]


class FailingDouble(ServingDouble):
    """A test double of a consumer whose first batch raises (a bug in its code)."""

    failed = False

    def handle(self, batch: list[Item]) -> None:
        if not self.failed:
            self.failed = True
            raise RuntimeError("consumer bug")
        super().handle(batch)


def test_a_failed_thread_drops_its_work_and_the_next_put_starts_another(
    consumers: list[ServingDouble], caplog: pytest.LogCaptureFixture
) -> None:
    c = FailingDouble(max_items=10)
    consumers.append(c)
    c.put("first")
    assert c.worker.flush(10)  # the thread failed: what it held is dropped, flush ends
    assert c.dropped == [("first", "worker_error")]
    assert "the background thread stopped" in caplog.text
    assert not c.worker.running
    c.put("second")
    assert c.worker.flush(10)
    assert c.served == ["second"]


def test_a_worker_that_keeps_its_items_leaves_them_to_the_next_thread(
    consumers: list[ServingDouble],
) -> None:
    c = FailingDouble(max_items=10, keep_on_thread_end=True, inline=True)
    consumers.append(c)
    c.put("first")
    wait_for(lambda: c.failed and not c.worker.running, "the thread failed")
    assert c.dropped == []  # kept for the next thread (a sink's retries), not dropped
    assert c.worker.unfinished == 1
    c.put("second")
    wait_for(lambda: c.served == ["second"], "the next thread serving")


def test_shutdown_finishes_in_time_and_refuses_later_items(
    consumers: list[ServingDouble],
) -> None:
    c = new(consumers)
    for n in range(3):
        c.put(f"i{n}")
    assert c.worker.shutdown(10, grace=1) == []
    assert c.served == ["i0", "i1", "i2"]
    assert c.worker.closed
    assert c.worker.stopping
    assert not c.worker.aborted
    assert not c.worker.running


def test_shutdown_past_its_deadline_aborts_and_drops_what_never_finished(
    consumers: list[ServingDouble],
) -> None:
    hold = threading.Event()
    c = new(consumers, hold=hold)
    c.put("stuck")
    assert c.taken.wait(10)
    c.put("queued-1")
    c.put("queued-2")
    left = c.worker.shutdown(0.05, grace=0.05)
    assert [item.name for item in left] == ["stuck", "queued-1", "queued-2"]
    assert c.dropped == [(name, "shutdown") for name in ("stuck", "queued-1", "queued-2")]
    assert c.worker.aborted
    assert c.worker.unfinished == 0
    hold.set()  # the stuck item ends after all: it was given up, so it is not served
    c.worker.flush(10)
    assert c.served == []


class LoopDouble(Consumer[Item]):
    """A test double of an event-loop consumer: each item starts a task on the loop that
    waits forever (a judge that never answers)."""

    event_loop = True

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.loop_threads: set[int] = set()
        self.worker: BackgroundWorker[Item] = BackgroundWorker(
            "test-loop", self, max_items=10, grace=1.0
        )

    async def serve(self, batches: AsyncIterator[list[Item]]) -> None:
        async with anyio.create_task_group() as tg:
            async for batch in batches:
                for _ in batch:
                    tg.start_soon(self._forever)

    async def _forever(self) -> None:
        self.loop_threads.add(threading.get_ident())
        self.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.cancelled.set()

    def dropped_locked(self, items: list[Item], reason: str) -> None:
        self.dropped = [(item.name, reason) for item in items]


def test_an_event_loop_consumer_is_served_on_the_loop_and_cancelled_by_an_abort() -> None:
    c = LoopDouble()
    with c.worker.lock:
        c.worker.put_locked(Item("never-answers"))
    assert c.worker.start_pending()
    assert c.started.wait(10)  # on the worker's own thread, running a loop
    thread = c.worker._thread
    assert thread is not None
    assert c.loop_threads == {thread.ident}
    c.worker.shutdown(0.05, grace=5)
    assert c.cancelled.is_set()  # the abort cancelled the task it ran
    # Dropped once, by the thread as it ended (so shutdown found nothing left to drop).
    assert c.dropped == [("never-answers", "shutdown")]
    assert not thread.is_alive()  # joined: no thread of the worker outlives shutdown


def test_items_appended_without_the_lock_are_served_in_order_and_a_flush_waits_behind_them(
    consumers: list[ServingDouble],
) -> None:
    hold = threading.Event()
    c = new(consumers, hold=hold)
    c.worker.append(Item("a"))  # no lock, no number: it starts the thread
    assert c.taken.wait(10)  # held on a
    c.worker.append(Item("b"))
    c.put("marker")  # numbered, behind b: what a flush waits for
    assert not c.worker.flush(0.05)
    hold.set()
    assert c.worker.flush(10)
    assert c.handled == ["a", "b", "marker"]
    assert c.served == ["marker"]  # only a numbered item is finished
    # Parked (nothing due), the thread is woken by the next append: none is lost.
    threading.Event().wait(0.1)
    c.worker.append(Item("c"))
    wait_for(lambda: c.handled[-1:] == ["c"], "the appended item handled")


def test_a_shutdown_gives_up_the_appended_items_to_the_consumer(
    consumers: list[ServingDouble],
) -> None:
    hold = threading.Event()
    c = new(consumers, hold=hold)
    c.worker.append(Item("taken"))
    assert c.taken.wait(10)  # held on it
    c.worker.append(Item("queued"))
    left = c.worker.shutdown(0.05, grace=0.05)
    # The queued one is given up and the consumer told; the one it holds stays its own.
    assert [item.name for item in left] == ["queued"]
    assert c.dropped == [("queued", "shutdown")]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_starts_empty_with_a_fresh_lock_and_a_thread_of_its_own(
    consumers: list[ServingDouble],
) -> None:
    hold = threading.Event()
    c = new(consumers, hold=hold)
    c.put("parent")
    assert c.taken.wait(10)
    c.put("parent-queued")
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with c.worker.lock:
            locked.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_lock, daemon=True)
    holder.start()
    assert locked.wait(10)  # the parent's lock is held by a thread the child won't have

    def child() -> dict[str, object]:
        c.hold = None  # the child's own items must not wait on the parent's event
        report: dict[str, object] = {
            "unfinished": c.worker.unfinished,
            "forks": c.forks == [os.getpid()],
        }
        c.served.clear()
        c.put("child")  # the parent's lock is still held: the child's is a new one
        report["flushed"] = c.worker.flush(10)
        report["served"] = c.served
        return report

    report = in_forked_child(child)
    release.set()
    holder.join(10)
    assert report == {"unfinished": 0, "forks": True, "flushed": True, "served": ["child"]}
    hold.set()
    assert c.worker.flush(10)
    assert c.served == ["parent", "parent-queued"]  # the parent's, served by the parent


def test_fit_to_deadline_leaves_the_grace_only_what_the_deadline_has_left() -> None:
    import time

    now = time.monotonic()
    timeout, grace = fit_to_deadline(now + 100, 3.0, 2.0)
    assert (timeout, grace) == (3.0, 2.0)  # both fit
    timeout, grace = fit_to_deadline(now + 4, 3.0, 2.0)
    assert timeout == 3.0
    assert 0 < grace < 1.0
    assert fit_to_deadline(now - 1, 3.0, 2.0) == (0.0, 0.0)  # nothing left


@pytest.mark.parametrize(("value", "expected"), [("7", 7.0), ("0", 0.0), (" 2.5 ", 2.5), ("", 5.0)])
def test_the_exit_deadline_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: float
) -> None:
    monkeypatch.setenv("LIVESCORE_EXIT_TIMEOUT", value)
    assert exit_timeout() == expected


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_exit_deadline_is_a_warning_and_the_default(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    monkeypatch.setenv("LIVESCORE_EXIT_TIMEOUT", value)
    with caplog.at_level(logging.WARNING, logger="livescore"):
        assert exit_timeout() == 5.0
    assert "LIVESCORE_EXIT_TIMEOUT" in caplog.text


EXIT_SCRIPT = """
import atexit
import sys
import time

from livescore._background import BackgroundWorker, Consumer, add_exit_stage

atexit.register(lambda: print("registered before the thread started", flush=True))


def stage(name, spend):
    def run(deadline):
        print(name, round(deadline - time.monotonic()), flush=True)
        time.sleep(spend)
    return run


add_exit_stage(1, stage("second", 0))
add_exit_stage(0, stage("first", 2))


class Item:
    seq = 0


class Finisher(Consumer):
    def handle(self, batch):
        with worker.lock:
            for item in batch:
                worker.finish_locked(item)


finisher = Finisher()
worker = BackgroundWorker("probe", finisher, max_items=1)
with worker.lock:
    worker.put_locked(Item())
worker.start_pending()  # registers the exit hook as the newest atexit handler
"""


def test_the_exit_stages_run_in_order_within_one_deadline_before_older_exit_hooks(
    tmp_path: Path,
) -> None:
    script = tmp_path / "exit_stages.py"
    script.write_text(textwrap.dedent(EXIT_SCRIPT), encoding="utf-8")
    env = {**os.environ, "LIVESCORE_EXIT_TIMEOUT": "30"}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, second, last = done.stdout.splitlines()
    assert first == "first 30"
    # The second stage sees what the first left of the same deadline (it spent 2 s).
    name, left = second.split()
    assert name == "second"
    assert int(left) <= 28
    assert last == "registered before the thread started"


def test_a_worker_holds_its_consumer_weakly() -> None:
    # The consumer holds its worker, and threads waiting on the worker (an event loop's
    # helpers, slow to leave after a shutdown on a loaded machine) hold it too: through a
    # strong reference to the consumer they kept it alive (the dispatcher outlived its
    # shutdown now and then under load).
    consumer = ServingDouble(max_items=1)
    worker = consumer.worker
    ref = weakref.ref(consumer)
    del consumer
    gc.collect()
    assert ref() is None
    assert worker.shutdown(1, grace=1) == []  # a worker whose consumer is gone still stops
