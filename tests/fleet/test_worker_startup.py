"""``livescore worker`` as an operator meets it: start-up errors (one line each, the
documented exit code, a start-up deadline), quiet logs, a stderr nobody reads, and the
broker's password kept out of ``ps``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from fleet_support import HERE, Fleet, SlowJudge, job_record, make_run

from livescore.cli._worker import EXIT_BROKER_UNAVAILABLE, EXIT_STARTUP_TIMEOUT
from livescore.fleet._dramatiq import DramatiqPublisher
from livescore.testing import OpenAITestServer, RedisTestServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _worker(
    *args: str, tmp: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "OTEL_SDK_DISABLED": "true",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "livescore.cli", "worker", *args],
        env=environ,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``error:`` line; no traceback anywhere."""
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, text
    return errors[0]


@pytest.mark.parametrize(
    ("spec", "code", "phrase"),
    [
        ("startup_scorers:raising", 2, "raised RuntimeError: the scorers' config file is missing"),
        ("startup_scorers:needs_arguments", 2, "needs arguments (judge_url)"),
        ("startup_scorers:exiting", 2, "called sys.exit(4)"),
        ("exiting_scorers:scorers", 2, "importing 'exiting_scorers' called sys.exit(3)"),
        ("startup_scorers:hanging", EXIT_STARTUP_TIMEOUT, "start-up did not finish within 3 s"),
    ],
)
def test_scorers_that_cannot_be_loaded_give_one_line_and_the_exit_code(
    spec: str, code: int, phrase: str, redis_server: RedisTestServer, tmp_path: Path
) -> None:
    deadline = ("--startup-timeout", "3") if code == EXIT_STARTUP_TIMEOUT else ()
    result = _worker(spec, "--broker", redis_server.url, *deadline, tmp=tmp_path)
    assert result.returncode == code, result.stderr
    assert phrase in _one_error_line(result)


def test_a_broker_that_is_away_is_waited_for_until_the_start_up_deadline(tmp_path: Path) -> None:
    result = _worker(
        "fleet_scorers:scorers", "--broker", "redis://127.0.0.1:9/0", "--startup-timeout", "3",
        tmp=tmp_path,
    )  # fmt: skip
    assert result.returncode == EXIT_BROKER_UNAVAILABLE, result.stderr
    assert "waiting for Redis" in result.stderr  # said while it waited
    line = _one_error_line(result)
    assert "did not take writes within 3 s" in line
    assert "unreachable" in line


def test_a_full_broker_is_waited_for_and_named(
    redis_server: RedisTestServer, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1")
    result = _worker(
        "fleet_scorers:scorers", "--broker", redis_server.url, "--startup-timeout", "3",
        tmp=tmp_path,
    )  # fmt: skip
    assert result.returncode == EXIT_BROKER_UNAVAILABLE, result.stderr
    assert "out of memory" in _one_error_line(result)
    client.close()


@pytest.mark.parametrize(
    ("broker", "phrase"),
    [
        ("http://127.0.0.1:9/", "broker must be a Redis URL"),
        ("redis://:wrong@{host}", "refused the credentials"),
    ],
)
def test_a_broker_url_that_cannot_work_is_a_usage_error_at_once(
    broker: str, phrase: str, redis_server: RedisTestServer, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.config_set("requirepass", "sekret")
    url = broker.format(host=f"127.0.0.1:{redis_server.port}/0")
    result = _worker("fleet_scorers:scorers", "--broker", url, tmp=tmp_path)
    assert result.returncode == 2, result.stderr
    line = _one_error_line(result)
    assert phrase in line
    assert "wrong" not in line  # the password is never printed
    client.close()


def test_logs_are_quiet_by_default(fleet: Fleet) -> None:
    judge = SlowJudge(hold=0)
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        worker = fleet.start_worker("--scorer-concurrency", "4")
        publisher = DramatiqPublisher(fleet.url, "livescore")
        runs = [make_run(i) for i in range(30)]
        for i, run in enumerate(runs):
            publisher.publish(job_record(run, "judged", job_id=f"job-{i}"))
        fleet.wait_for_pairs({(r.run_id, "judged") for r in runs})
        assert worker.terminate() == 0
        lines = worker.output().splitlines()
        # The start line and the stop line: no line per judge request (-v shows those).
        assert len(lines) == 2, lines
        assert "30 job(s)" in lines[-1]
        publisher.close()


def test_a_full_stderr_never_blocks_the_worker(fleet: Fleet) -> None:
    judge = SlowJudge(hold=0)
    with OpenAITestServer(responder=judge) as server:
        fleet.env["FLEET_TEST_JUDGE_URL"] = server.base_url
        # Every library's DEBUG lines, into a pipe nobody reads: it fills after 64 KB.
        worker = fleet.start_worker(
            "--scorer-concurrency", "8", "--log-level", "DEBUG", wait=False, stderr_pipe=True
        )
        publisher = DramatiqPublisher(fleet.url, "livescore")
        runs = [make_run(i) for i in range(150)]
        for i, run in enumerate(runs):
            publisher.publish(job_record(run, "judged", job_id=f"job-{i}"))
        fleet.wait_for_pairs({(r.run_id, "judged") for r in runs}, timeout=90)
        worker.process.send_signal(signal.SIGTERM)
        _, err = worker.process.communicate(timeout=60)
        assert worker.process.returncode == 0, err[-2000:]
        # Far more than the pipe holds was written while nobody read it: a worker writing
        # its logs itself would have stopped at the first 64 KB.
        assert len(err) > 4 * 65536, len(err)
        publisher.close()


def test_the_broker_password_stays_out_of_the_command_line(
    fleet: Fleet, redis_server: RedisTestServer
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.config_set("requirepass", "s3cret-pw")
    url = f"redis://:s3cret-pw@127.0.0.1:{redis_server.port}/0"
    worker = fleet.start_worker(
        "--scorer-concurrency", "2", broker_args=("--broker-env", "MY_REDIS"), env={"MY_REDIS": url}
    )
    cmdline = Path(f"/proc/{worker.pid}/cmdline").read_bytes()
    assert b"s3cret-pw" not in cmdline
    assert "s3cret-pw" not in worker.output()  # the start line masks it
    publisher = DramatiqPublisher(url, "livescore")
    run = make_run(1)
    publisher.publish(job_record(run, "keyword-coverage", job_id="job-1"))
    fleet.wait_for_pairs({(run.run_id, "keyword-coverage")})
    assert worker.terminate() == 0
    # Given on the command line, it works, and the worker says where it belongs.
    visible = fleet.start_worker("--scorer-concurrency", "2", broker_args=("--broker", url))
    assert "visible to every user" in visible.output()
    assert "s3cret-pw" not in visible.output()
    assert visible.terminate() == 0
    publisher.close()
    client.close()
