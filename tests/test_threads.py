from __future__ import annotations

import gc
import threading
import weakref

import anyio

from livescore._threads import ThreadRecord, run_in_thread, weakly


def test_outside_a_recording_it_is_anyio_to_thread() -> None:
    async def main() -> tuple[int, threading.Thread]:
        return await run_in_thread(lambda a, b: a + b, 2, 3), await run_in_thread(
            threading.current_thread
        )

    total, ran_in = anyio.run(main)
    assert total == 5
    assert ran_in is not threading.current_thread()


def test_the_recorded_threads_are_joined_once_their_loop_ended() -> None:
    record = ThreadRecord()
    ran_in: list[threading.Thread] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(run_in_thread, lambda: ran_in.append(threading.current_thread()))

    with record.recording():
        anyio.run(main)
    assert record.join(10)
    assert len(ran_in) == 3
    assert not any(thread.is_alive() for thread in ran_in)


def test_a_call_abandoned_on_cancel_is_not_waited_for_past_the_timeout() -> None:
    record = ThreadRecord()
    release = threading.Event()

    async def main() -> None:
        with anyio.move_on_after(0.05):
            await run_in_thread(release.wait, abandon_on_cancel=True)

    with record.recording():
        anyio.run(main)
    try:
        assert not record.join(0.1)  # the thread still blocks in release.wait
    finally:
        release.set()
    assert record.join(10)


def test_weakly_keeps_nothing_alive_and_reads_the_method_at_each_call() -> None:
    calls: list[tuple[str, int]] = []

    class Owner:
        def wait(self, generation: int) -> None:
            calls.append(("wait", generation))

    owner = Owner()
    call = weakly(owner, "wait")
    call(1)
    owner.wait = lambda generation: calls.append(("patched", generation))  # type: ignore[method-assign]
    call(2)
    ref = weakref.ref(owner)
    del owner
    gc.collect()
    assert ref() is None
    call(3)  # gone: nothing happens
    assert calls == [("wait", 1), ("patched", 2)]
