"""What the fleet guarantees when workers die, jobs repeat, workers stop, or jobs are bad.

Every test runs real ``livescore worker`` processes against a real Redis server; the
scores are counted where they arrive, at an OTLP receiver.
"""

from __future__ import annotations

import threading

import pytest
from fleet_support import Fleet, SlowJudge, done_pairs, wait_for
from fleet_support import job_record as _record
from fleet_support import make_run as _run

from livescore.fleet._dramatiq import DramatiqPublisher
from livescore.testing import OpenAITestServer

pytestmark = pytest.mark.slow


def test_a_worker_killed_mid_score_loses_nothing_and_duplicates_nothing(fleet: Fleet) -> None:
    judge = SlowJudge(hold=4)
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        doomed = fleet.start_worker("--scorer-concurrency", "4")
        publisher = DramatiqPublisher(fleet.url, "livescore")
        runs = [_run(i) for i in range(8)]
        for i, run in enumerate(runs):
            publisher.publish(_record(run, "judged", "keyword-coverage", job_id=f"job-{i}"))
        # Four jobs are on the doomed worker: their judge calls are held mid-flight, and
        # their quick keyword-coverage pairs were exported and marked done. Kill it there.
        wait_for(lambda: judge.arrived >= 4, 30, "the doomed worker's judge calls")
        wait_for(lambda: done_pairs(fleet.url, "keyword-coverage") >= 4, 30, "quick pairs done")
        doomed.kill()
        judge.release.set()
        fleet.start_worker("--scorer-concurrency", "4")
        pairs = {(r.run_id, sid) for r in runs for sid in ("judged", "keyword-coverage")}
        fleet.wait_for_pairs(pairs, timeout=60)
        counts = fleet.pair_counts()
        assert set(counts) == pairs
        assert max(counts.values()) == 1, counts
        publisher.close()


def test_a_job_delivered_twice_is_scored_once(fleet: Fleet) -> None:
    judge = SlowJudge(hold=2)
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        fleet.start_worker("--scorer-concurrency", "4")
        fleet.start_worker("--scorer-concurrency", "4")
        publisher = DramatiqPublisher(fleet.url, "livescore")
        run = _run(1)
        record = _record(run, "judged", job_id="job-twice")
        # The same job twice at once (an agent that republished): one copy waits for the
        # other's judge call, then sees the pair done.
        publisher.publish(record)
        publisher.publish(record)
        wait_for(lambda: judge.arrived >= 1, 30, "the first judge call")
        judge.release.set()
        fleet.wait_for_pairs({(run.run_id, "judged")})
        # ... and once more after it is done.
        publisher.publish(record)
        later = _run(2)
        publisher.publish(_record(later, "judged", job_id="job-later"))
        fleet.wait_for_pairs({(later.run_id, "judged")})
        counts = fleet.pair_counts()
        assert counts[(run.run_id, "judged")] == 1
        assert judge.arrived == 2  # one judge call per pair, not per delivery
        publisher.close()


def test_sigterm_finishes_scores_in_flight_and_requeues_the_rest(fleet: Fleet) -> None:
    judge = SlowJudge(hold=2)
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        stopping = fleet.start_worker("--scorer-concurrency", "2", "--drain-timeout", "20")
        publisher = DramatiqPublisher(fleet.url, "livescore")
        runs = [_run(i) for i in range(10)]
        for i, run in enumerate(runs):
            publisher.publish(_record(run, "judged", job_id=f"job-{i}"))
        wait_for(lambda: judge.arrived >= 2, 30, "two scores in flight")
        stopping.process.send_signal(15)  # SIGTERM, as a container runtime stops it
        # The two scores in flight finish after the signal, within the drain timeout.
        threading.Timer(0.5, judge.release.set).start()
        assert stopping.process.wait(timeout=60) == 0, stopping.output()
        # The jobs it held (two scoring, two waiting for a scoring slot) were finished;
        # the ones it had only prefetched went back to the queue.
        before = fleet.pair_counts()
        assert len(before) == 4, stopping.output()
        # The rest went back to the queue: another worker scores them, nothing twice.
        fleet.start_worker("--scorer-concurrency", "4")
        pairs = {(r.run_id, "judged") for r in runs}
        fleet.wait_for_pairs(pairs)
        counts = fleet.pair_counts()
        assert set(counts) == pairs, counts
        assert max(counts.values()) == 1, counts
        publisher.close()


def test_at_the_drain_deadline_unfinished_jobs_go_back_to_the_queue(fleet: Fleet) -> None:
    judge = SlowJudge(hold=1)  # the first judge call hangs past the drain deadline
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        stopping = fleet.start_worker("--scorer-concurrency", "1", "--drain-timeout", "1")
        publisher = DramatiqPublisher(fleet.url, "livescore")
        run = _run(1)
        publisher.publish(_record(run, "judged", "keyword-coverage", job_id="job-1"))
        wait_for(lambda: judge.arrived >= 1, 30, "the judge call")
        assert stopping.terminate() == 0
        assert "1 handed back to the queue" in stopping.output(), stopping.output()
        judge.release.set()
        # Its quick pair was kept; the judged one is scored by the next worker, once.
        fleet.start_worker("--scorer-concurrency", "1")
        fleet.wait_for_pairs({(run.run_id, "judged"), (run.run_id, "keyword-coverage")})
        counts = fleet.pair_counts()
        assert counts == {(run.run_id, "judged"): 1, (run.run_id, "keyword-coverage"): 1}
        publisher.close()


def test_bad_jobs_become_failed_scores_with_a_clear_error_type(fleet: Fleet) -> None:
    worker = fleet.start_worker("--scorer-concurrency", "2")
    publisher = DramatiqPublisher(fleet.url, "livescore")
    run = _run(1, output="POISON in the answer")
    publisher.publish(_record(run, "raiser", "no-such-scorer", job_id="job-1"))
    future = _run(2)
    publisher.publish(_record(future, "keyword-coverage", job_id="job-2", version=99))
    pairs = {
        (run.run_id, "raiser"),
        (run.run_id, "no-such-scorer"),
        (future.run_id, "keyword-coverage"),
    }
    fleet.wait_for_pairs(pairs)
    spans = {
        (str(s.attributes["livescore.run.id"]), str(s.attributes["livescore.scorer.id"])): s
        for s in fleet.score_spans()
    }
    assert spans[(run.run_id, "raiser")].attributes["error.type"] == "ValueError"
    assert spans[(run.run_id, "no-such-scorer")].attributes["error.type"] == "unknown_scorer"
    newer = spans[(future.run_id, "keyword-coverage")].attributes
    assert newer["error.type"] == "unsupported_job_format"
    assert newer["livescore.status"] == "failed"
    # A failed score nests under its run like any other.
    assert spans[(run.run_id, "no-such-scorer")].parent_span_id == run.span_id
    publisher.close()
    assert worker.terminate() == 0
    # Two jobs, three scores: the summary counts each in its own unit (before: "2 job(s);
    # scored 0, failed 3", as if jobs had failed).
    summary = next(line for line in worker.output().splitlines() if " stopped: " in line)
    assert "stopped: 2 job(s) handled, 0 handed back to the queue" in summary, summary
    assert "scores: scored 0, failed 3, skipped 0, dropped 0" in summary, summary


def test_a_job_that_kills_its_worker_every_time_ends_as_poisoned_job(fleet: Fleet) -> None:
    publisher = DramatiqPublisher(fleet.url, "livescore")
    run = _run(1, output="POISON in the answer")
    publisher.publish(_record(run, "crasher", job_id="job-poison"))
    # Each delivery kills its worker; the third worker sees the limit and fails the pair.
    for _ in range(2):
        victim = fleet.start_worker("--max-deliveries", "2", wait=False)
        assert victim.process.wait(timeout=60) == 3, victim.output()
    fleet.start_worker("--max-deliveries", "2")
    fleet.wait_for_pairs({(run.run_id, "crasher")})
    (span,) = fleet.score_spans()
    assert span.attributes["error.type"] == "poisoned_job"
    publisher.close()
