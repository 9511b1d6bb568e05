"""BackgroundQueue: the bounded queue and thread under the dispatcher and every sink.

Each test drives a small owner of its own (a ``serve`` function and items) to pin one rule:
overflow, the lazily started thread, wake-ups, linger, flush (inline without a thread),
shutdown with and without a stuck thread, a forked child, and the exit stages sharing one
deadline.
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from forking import in_forked_child

from livescore._background import BackgroundQueue, exit_timeout, fit_to_deadline

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Item:
    name: str
    seq: int = 0
    done: threading.Event = field(default_factory=threading.Event)


class Owner:
    """A test double of a queue's owner: its thread serves items one by one.

    ``hold`` (when set) keeps the thread on the item it took until the event opens;
    ``served`` lists what was finished, in order.
    """

    def __init__(self, hold: threading.Event | None = None, **options: object) -> None:
        self.hold = hold
        self.served: list[str] = []
        self.taken = threading.Event()
        self.threads: set[int] = set()
        self.q: BackgroundQueue[Item] = BackgroundQueue(
            "test-queue",
            self.serve,
            **options,  # type: ignore[arg-type]
        )

    def serve(self, generation: int) -> None:
        self.threads.add(threading.get_ident())
        q = self.q
        while True:
            with q.lock:
                if q.aborted:
                    return
                if not q.queue:
                    if q.stopping:
                        return
                    q.idle_locked()
                    q.park_locked(generation)
                    continue
                item = q.queue.popleft()
            self.taken.set()
            if self.hold is not None:
                self.hold.wait(30)
            with q.lock:
                if q.finish_locked(item):
                    self.served.append(item.name)

    def put(self, name: str) -> Item | None:
        """Put an item; returns what the queue evicted. Refused items raise."""
        with self.q.lock:
            if not self.q.admits_locked():
                raise OverflowError(name)
            evicted = self.q.put_locked(Item(name))
        assert self.q.start_pending()
        return evicted


@pytest.fixture
def owners() -> Iterator[list[Owner]]:
    made: list[Owner] = []
    yield made
    for owner in made:
        if owner.hold is not None:
            owner.hold.set()
        owner.q.shutdown(5, flush=owner.q.flush, grace=1)


def new(made: list[Owner], **options: object) -> Owner:
    options.setdefault("max_items", 100)
    owner = Owner(**options)  # type: ignore[arg-type]
    made.append(owner)
    return owner


def test_items_are_served_in_order_by_one_thread_started_on_the_first_put(
    owners: list[Owner],
) -> None:
    owner = new(owners)
    assert not owner.q.running
    for n in range(5):
        owner.put(f"i{n}")
    assert owner.q.flush(10)
    assert owner.served == ["i0", "i1", "i2", "i3", "i4"]
    assert len(owner.threads) == 1
    assert owner.q.unfinished == 0


def test_a_full_queue_refuses_new_items_or_evicts_the_oldest(owners: list[Owner]) -> None:
    hold = threading.Event()
    refusing = new(owners, max_items=2, hold=hold)
    refusing.put("taken")
    assert refusing.taken.wait(10)  # on the thread: no longer queued
    refusing.put("a")
    refusing.put("b")
    with pytest.raises(OverflowError):
        refusing.put("c")

    evicting = new(owners, max_items=2, overflow="drop_oldest", hold=hold)
    evicting.put("taken")
    assert evicting.taken.wait(10)
    evicting.put("a")
    evicting.put("b")
    evicted = evicting.put("c")
    assert evicted is not None
    assert evicted.name == "a"
    with evicting.q.lock:
        assert evicting.q.finish_locked(evicted)  # the owner counts it as dropped
    hold.set()
    assert refusing.q.flush(10)
    assert evicting.q.flush(10)
    assert refusing.served == ["taken", "a", "b"]
    assert evicting.served == ["taken", "b", "c"]


def test_an_unfinished_bound_counts_items_the_thread_holds(owners: list[Owner]) -> None:
    hold = threading.Event()
    owner = new(owners, max_items=2, bound="unfinished", hold=hold)
    owner.put("taken")
    assert owner.taken.wait(10)
    owner.put("a")
    with pytest.raises(OverflowError):
        owner.put("b")  # one taken and one queued: two unfinished
    hold.set()
    assert owner.q.flush(10)
    owner.put("b")
    assert owner.q.flush(10)


def test_a_sleeping_thread_wakes_for_a_first_item_and_a_full_batch_only() -> None:
    wakes: list[int] = []
    parked = threading.Event()
    q: BackgroundQueue[Item]

    def serve(generation: int) -> None:  # looks at the queue, takes nothing
        with q.lock:
            while not q.stopping:
                q.idle_locked()
                parked.set()
                q.park_locked(generation)
                wakes.append(len(q.queue))

    def put(name: str) -> None:
        with q.lock:
            q.put_locked(Item(name))
        assert q.start_pending()

    q = BackgroundQueue("peek", serve, max_items=100, wake_at=3)
    try:
        put("start")
        assert parked.wait(10)  # started, and asleep
        with q.lock:
            q.discard_locked()
            parked.clear()
        put("i0")  # a first item: wakes it
        assert parked.wait(10)
        parked.clear()
        put("i1")  # neither a first item nor a full batch: it sleeps on
        with q.lock:
            assert q._idle  # (the flag a waking put clears)
        put("i2")  # a batch of 3: wakes it
        assert parked.wait(10)
    finally:
        with q.lock:
            q.discard_locked()
        q.shutdown(5, flush=q.flush, grace=1)
    assert wakes[:2] == [1, 3]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    for _ in range(1000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"never saw {what}")


def test_a_woken_thread_lingers_until_a_flush_wants_the_work(owners: list[Owner]) -> None:
    owner = new(owners, linger=60.0)
    owner.put("first")
    assert owner.q.flush(10)  # started: the thread serves at once, then sleeps
    owner.put("second")  # wakes it: it waits a minute for company...
    wait_for(lambda: owner.q._lingering, "the thread lingering")
    assert owner.served == ["first"]
    assert owner.q.flush(10)  # ...unless a flush wants the work now
    assert owner.served == ["first", "second"]


def test_flush_times_out_while_the_thread_is_busy(owners: list[Owner]) -> None:
    hold = threading.Event()
    owner = new(owners, hold=hold)
    owner.put("slow")
    assert owner.taken.wait(10)
    assert owner.q.flush(0.05) is False
    hold.set()
    assert owner.q.flush(10) is True


def test_flush_on_the_queues_own_thread_returns_false_at_once() -> None:
    answers: list[bool] = []
    answered = threading.Event()
    q: BackgroundQueue[Item]

    def serve(generation: int) -> None:
        answers.append(q.flush(10))  # it would wait for itself
        with q.lock:
            for item in q.discard_locked():
                item.done.set()
            q.thread_ended_locked()
        answered.set()

    q = BackgroundQueue("self", serve, max_items=10)
    with q.lock:
        q.put_locked(Item("x"))
    assert q.start_pending()
    assert answered.wait(10)
    assert answers == [False]


def _refuse(self: threading.Thread) -> None:
    raise RuntimeError("can't create new thread at interpreter shutdown")


def test_without_a_thread_flush_works_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    inline_calls: list[int] = []
    q: BackgroundQueue[Item]

    def inline(target: int, deadline: float | None) -> bool:
        inline_calls.append(target)
        with q.lock:
            for item in list(q.queue):
                q.finish_locked(item)
            q.queue.clear()
        return True

    q = BackgroundQueue("inline", lambda generation: None, max_items=10, inline=inline)
    with monkeypatch.context() as patch:
        patch.setattr(threading.Thread, "start", _refuse)
        with q.lock:
            q.put_locked(Item("a"))
        assert q.start_pending() is False
        with q.lock:
            q.put_locked(Item("b"))
        assert q.start_pending() is True  # no thread was even tried: flush works inline
    assert not q.running
    assert q.flush(10)
    assert inline_calls == [2]
    assert q.unfinished == 0


def test_without_an_inline_drain_the_next_put_tries_a_thread_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    q: BackgroundQueue[Item] = BackgroundQueue("retry", lambda g: None, max_items=10)
    with monkeypatch.context() as patch:
        patch.setattr(threading.Thread, "start", _refuse)
        with q.lock:
            q.put_locked(Item("a"))
        assert q.start_pending() is False
        assert not q.running
        with q.lock:
            q.put_locked(Item("b"))
            assert q.running  # this put made a thread again
        assert q.start_pending() is False
    with q.lock:
        assert [item.name for item in q.discard_locked()] == ["a", "b"]


def test_a_thread_that_ended_is_replaced_by_the_next_put() -> None:
    ended = threading.Event()
    served: list[str] = []
    q: BackgroundQueue[Item]

    def serve_once(generation: int) -> None:  # serves what it finds, then ends
        with q.lock:
            while q.queue:
                item = q.queue.popleft()
                q.finish_locked(item)
                served.append(item.name)
            q.thread_ended_locked()
        ended.set()

    q = BackgroundQueue("once", serve_once, max_items=10)
    for name in ("first", "second"):
        ended.clear()
        with q.lock:
            q.put_locked(Item(name))
        assert q.start_pending()
        assert ended.wait(10)
        assert not q.running
    assert served == ["first", "second"]
    assert q.flush(1)


def test_shutdown_finishes_in_time_and_refuses_later_items(owners: list[Owner]) -> None:
    owner = new(owners)
    for n in range(3):
        owner.put(f"i{n}")
    assert owner.q.shutdown(10, flush=owner.q.flush, grace=1) == []
    assert owner.served == ["i0", "i1", "i2"]
    assert owner.q.closed
    assert owner.q.stopping
    assert not owner.q.aborted


def test_shutdown_past_its_deadline_aborts_and_hands_back_what_never_finished(
    owners: list[Owner],
) -> None:
    hold = threading.Event()
    owner = new(owners, hold=hold)
    owner.put("stuck")
    assert owner.taken.wait(10)
    owner.put("queued-1")
    owner.put("queued-2")
    aborted = threading.Event()
    threading.Thread(
        target=lambda: (owner.q.wait_for_abort(owner.q.generation), aborted.set()), daemon=True
    ).start()
    left = owner.q.shutdown(0.05, flush=owner.q.flush, grace=0.05)
    assert [item.name for item in left] == ["stuck", "queued-1", "queued-2"]
    assert owner.q.aborted
    assert aborted.wait(10)  # what waited for an abort (a task group to cancel) was told
    assert owner.q.unfinished == 0
    hold.set()  # the stuck item ends after all: it was given up, so it is not served
    owner.q.flush(10)
    assert owner.served == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_starts_empty_with_a_fresh_lock_and_a_thread_of_its_own(
    owners: list[Owner],
) -> None:
    hold = threading.Event()
    forks: list[int] = []
    owner = new(owners, hold=hold, on_fork=lambda: forks.append(os.getpid()))
    owner.put("parent")
    assert owner.taken.wait(10)
    owner.put("parent-queued")
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with owner.q.lock:
            locked.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_lock, daemon=True)
    holder.start()
    assert locked.wait(10)  # the parent's lock is held by a thread the child won't have

    def child() -> dict[str, object]:
        owner.hold = None  # the child's own items must not wait on the parent's event
        report: dict[str, object] = {
            "unfinished": owner.q.unfinished,
            "forks": forks == [os.getpid()],
        }
        owner.served.clear()
        owner.put("child")  # the parent's lock is still held: the child's is a new one
        report["flushed"] = owner.q.flush(10)
        report["served"] = owner.served
        return report

    report = in_forked_child(child)
    release.set()
    holder.join(10)
    assert report == {"unfinished": 0, "forks": True, "flushed": True, "served": ["child"]}
    hold.set()
    assert owner.q.flush(10)
    assert owner.served == ["parent", "parent-queued"]  # the parent's, served by the parent


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

from livescore._background import BackgroundQueue, add_exit_stage

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


q = BackgroundQueue("probe", lambda generation: None, max_items=1)
with q.lock:
    q.put_locked(Item())
q.start_pending()  # registers the exit hook as the newest atexit handler
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


class _Methods:
    """A test double of an owner that gives the queue its methods, holding the queue."""

    def __init__(self) -> None:
        self.q: BackgroundQueue[Item] = BackgroundQueue(
            "test-weak", self.serve, max_items=1, on_fork=self.reset, inline=self.drain
        )

    def serve(self, generation: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def drain(self, seq: int, deadline: float | None) -> bool:
        return True


def test_a_queue_holds_its_owners_methods_weakly() -> None:
    # The owner holds its queue, and threads waiting on the queue (the owner's helpers,
    # slow to leave after a shutdown on a loaded machine) hold it too: through a strong
    # reference to the owner's methods they kept the owner alive (the dispatcher outlived
    # its shutdown now and then under load).
    owner = _Methods()
    queue = owner.q
    ref = weakref.ref(owner)
    del owner
    gc.collect()
    assert ref() is None
    queue.shutdown(1, flush=queue.flush, grace=1)  # a queue whose owner is gone still stops
