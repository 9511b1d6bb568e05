"""The OTLP receiver under hostile load, with real clients on 127.0.0.1: slow bodies,
idle and surplus connections, gzip bombs, hostile JSON, ids of the wrong length, a slow
forward endpoint. Nothing here measures time: each test asks what was answered."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from livescore.collect import OTLPReceiver, SpanPipeline, _receiver
from livescore.live import LiveDispatcher
from livescore.scorers import create_keyword_coverage_scorer
from livescore.traces import AssemblyLimits

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


class Receiving:
    """A receiver feeding a pipeline and a dispatcher with a code scorer (no judge)."""

    def __init__(self, limits: AssemblyLimits | None = None, **receiver: Any) -> None:
        # limits: what the pipeline's assembler holds; the rest are the receiver's options
        self.dispatcher = LiveDispatcher([create_keyword_coverage_scorer()], register_atexit=False)
        self.pipeline = SpanPipeline(
            self.dispatcher, limits or AssemblyLimits(quiet_period=0.2), finish_on_root=False
        )
        self.receiver = OTLPReceiver(self.pipeline, port=0, **receiver).start()
        self.endpoint = self.receiver.url + "/v1/traces"

    def close(self) -> None:
        self.receiver.stop(5)
        self.pipeline.shutdown(5)
        self.dispatcher.shutdown(5)


@pytest.fixture
def receive() -> Iterator[Callable[..., Receiving]]:
    """Makes receivers (with the receiver's keyword arguments); closes them after."""
    made: list[Receiving] = []

    def make(**receiver: Any) -> Receiving:
        made.append(Receiving(**receiver))
        return made[-1]

    yield make
    for receiving in made:
        receiving.close()


def span_json(span_id: int, trace: str = TRACE, **extra: Any) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": f"{span_id:016x}",
        "name": "chat",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        **extra,
    }


def request_body(*spans: dict[str, Any]) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}).encode()


def post(url: str, body: bytes, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def connect(receiver: OTLPReceiver) -> socket.socket:
    return socket.create_connection(("127.0.0.1", receiver.port), timeout=60)


def closed_by_peer(sock: socket.socket, within: float = 60.0) -> bool:
    """Whether the receiver closes ``sock`` (EOF or reset) within ``within`` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass  # an answer (a 408), then the close
    except TimeoutError:
        return False
    except OSError:
        return True  # reset
    return True


class SlowClient(threading.Thread):
    """Sends a request's headers, then its body one byte at a time, slowly; keeps what the
    receiver answered."""

    def __init__(self, receiver: OTLPReceiver, length: int = 1_000, pause: float = 0.2):
        super().__init__(daemon=True)
        self.sock = connect(receiver)
        self.length = length
        self.pause = pause
        self.sent = 0
        self.answer = b""
        self.stop = threading.Event()

    def run(self) -> None:
        head = (
            f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {self.length}\r\n\r\n"
        )
        try:
            self.sock.sendall(head.encode())
            while self.sent < self.length and not self.stop.is_set():
                self.sock.sendall(b" ")
                self.sent += 1
                time.sleep(self.pause)
        except OSError:
            pass  # closed by the receiver: what a too-slow body gets
        try:
            self.sock.settimeout(60)
            self.answer = self.sock.recv(4096)
        except OSError:
            pass
        finally:
            self.sock.close()


def test_slow_bodies_hold_no_decoding_slot_and_are_cut_off(
    receive: Callable[..., Receiving],
) -> None:
    receiving = receive(body_timeout=3.0)
    slow = [SlowClient(receiving.receiver) for _ in range(4)]
    for client in slow:
        client.start()
    deadline = time.monotonic() + 30
    while min(c.sent for c in slow) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        # Four bodies trickling in (more than the decoding pool's slots): a well-behaved
        # client is answered as if they were not there.
        statuses = [post(receiving.endpoint, request_body(span_json(n + 1)))[0] for n in range(20)]
        assert statuses == [200] * 20
    finally:
        for client in slow:
            client.join(60)
    # Each slow body was cut off (408) long before its thousandth byte.
    assert all(c.answer.startswith(b"HTTP/1.1 408") for c in slow), [c.answer for c in slow]
    assert all(c.sent < c.length for c in slow)
    assert receiving.receiver.stats().bodies_too_slow == 4
    assert receiving.receiver.stats().requests[408] == 4


def test_idle_connections_and_trickling_headers_are_closed(
    receive: Callable[..., Receiving],
) -> None:
    receiving = receive(idle_timeout=1.0)
    idle = [connect(receiving.receiver) for _ in range(20)]
    trickling = connect(receiving.receiver)
    trickling.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")
    stop = threading.Event()

    def trickle() -> None:
        try:
            while not stop.is_set():
                trickling.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.2)
        except OSError:
            pass

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        assert all(closed_by_peer(sock) for sock in idle)
        assert closed_by_peer(trickling)
    finally:
        stop.set()
        thread.join(10)
        for sock in [*idle, trickling]:
            sock.close()
    assert post(receiving.endpoint, request_body(span_json(1)))[0] == 200


def test_connections_past_the_cap_are_closed_as_they_are_accepted(
    receive: Callable[..., Receiving],
) -> None:
    receiving = receive(max_connections=8)
    held = [connect(receiving.receiver) for _ in range(8)]
    try:
        deadline = time.monotonic() + 30
        while len(receiving.receiver._runner.server.connections) < 8:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        extra = connect(receiving.receiver)
        assert closed_by_peer(extra)
        extra.close()
        assert receiving.receiver.stats().connections_refused >= 1
    finally:
        for sock in held:
            sock.close()
    # Room again: a normal client is served (retrying while the closes are seen).
    deadline = time.monotonic() + 30
    status: int | None = None
    while status != 200 and time.monotonic() < deadline:
        try:
            status = post(receiving.endpoint, request_body(span_json(1)))[0]
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    assert status == 200


def test_gzip_bombs_stop_at_the_cap_and_others_are_served(
    receive: Callable[..., Receiving], monkeypatch: pytest.MonkeyPatch
) -> None:
    receiving = receive(max_body_bytes=1024 * 1024)
    inflating: set[str] = set()  # the threads the receiver inflates on

    class ZlibSpy:
        """A test double of the zlib module that notes the thread it inflates on."""

        def __getattr__(self, name: str) -> Any:
            return getattr(zlib, name)

        def decompressobj(self, *args: Any) -> Any:
            inflating.add(threading.current_thread().name)
            return zlib.decompressobj(*args)

    monkeypatch.setattr(_receiver, "zlib", ZlibSpy())
    bomb = gzip.compress(b" " * (256 * 1024 * 1024), compresslevel=9)  # 256 MiB inflated
    answers: list[int] = []

    def send_bomb() -> None:
        answers.append(post(receiving.endpoint, bomb, **{"Content-Encoding": "gzip"})[0])

    bombs = [threading.Thread(target=send_bomb) for _ in range(2)]
    for thread in bombs:
        thread.start()
    small = [post(receiving.endpoint, request_body(span_json(n + 1)))[0] for n in range(5)]
    for thread in bombs:
        thread.join(60)
    assert answers == [413, 413]
    assert small == [200] * 5
    # A compressed body larger than the cap is refused as well, though it inflates to less
    # (stored, not compressed: gzip's own framing makes it larger than what it holds).
    inner = request_body(span_json(1, name="x" * (1024 * 1024 - 230)))
    assert len(inner) < 1024 * 1024
    too_big = gzip.compress(inner, compresslevel=0)
    assert len(too_big) > 1024 * 1024
    assert post(receiving.endpoint, too_big, **{"Content-Encoding": "gzip"})[0] == 413
    # gzip and deflate bodies within the cap are read.
    body = request_body(span_json(99))
    assert post(receiving.endpoint, gzip.compress(body), **{"Content-Encoding": "gzip"})[0] == 200
    assert (
        post(receiving.endpoint, zlib.compress(body), **{"Content-Encoding": "deflate"})[0] == 200
    )
    assert receiving.receiver.stats().requests[413] == 3
    # Never on the event loop's thread: on the decoding pool.
    assert inflating
    assert all(name.startswith("livescore-decode") for name in inflating), inflating


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 200_000 + b"]" * 200_000,
        request_body(span_json(1, attributes=[{"key": "n", "value": {"intValue": 1}}])).replace(
            b'"intValue": 1', b'"intValue": Infinity'
        ),
        request_body(span_json(1)).replace(
            b'"startTimeUnixNano": "1"', b'"startTimeUnixNano": -Infinity'
        ),
    ],
    ids=["deep", "infinity-int", "infinity-time"],
)
def test_hostile_json_is_answered_400_and_counted(
    receive: Callable[..., Receiving], body: bytes
) -> None:
    receiving = receive()
    status, answer = post(receiving.endpoint, body)
    assert status == 400
    assert json.loads(answer)["code"] == 3
    assert receiving.receiver.stats().requests == {400: 1}
    assert post(receiving.endpoint, request_body(span_json(1)))[0] == 200


def test_ids_of_the_wrong_length_are_rejected_not_padded(receive: Callable[..., Receiving]) -> None:
    receiving = receive()
    short = {"traceId": "abc"}
    padded = {"traceId": "0abc"}
    status, answer = post(
        receiving.endpoint,
        request_body(span_json(1, **short), span_json(2, **padded), span_json(3)),
    )
    assert status == 200
    assert json.loads(answer)["partialSuccess"]["rejectedSpans"] == "2"
    stats = receiving.receiver.stats()
    assert (stats.spans_accepted, stats.spans_rejected) == (1, 2)


def test_requests_refused_before_their_body_is_read_are_counted(
    receive: Callable[..., Receiving],
) -> None:
    receiving = receive()
    receiving.pipeline.shutdown(5)  # a stopped pipeline has no room: 429 before reading
    assert post(receiving.endpoint, request_body(span_json(1)))[0] == 429
    stats = receiving.receiver.stats()
    assert stats.requests == {429: 1}


class SlowEndpoint:
    """A test double of a forward endpoint that takes every body and answers late."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1/traces"
        self.release = threading.Event()
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)  # read nothing, answer nothing until released

    def close(self) -> None:
        for conn in self.connections:
            conn.close()
        self.sock.close()


def test_forwarding_to_a_slow_endpoint_is_bounded_by_bytes(
    receive: Callable[..., Receiving],
) -> None:
    endpoint = SlowEndpoint()
    receiving = receive(forward=endpoint.url, max_forward_bytes=2 * 1024 * 1024)
    try:
        pad = "x" * (512 * 1024)
        bodies = [
            request_body(span_json(n + 1, trace=f"{n + 1:032x}", name=pad)) for n in range(10)
        ]
        assert [post(receiving.endpoint, body)[0] for body in bodies] == [200] * 10
        stats = receiving.receiver.stats()
        # ~0.5 MiB each: three or four fit in 2 MiB; the rest are not forwarded, counted.
        assert stats.forward_dropped >= 6
        assert receiving.receiver._forward_bytes <= 2 * 1024 * 1024
    finally:
        endpoint.close()


def agent_span(n: int) -> dict[str, Any]:
    """A whole one-span run (its own trace)."""
    text = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]
    for key, role, content in (
        ("gen_ai.input.messages", "user", f"question {n}?"),
        ("gen_ai.output.messages", "assistant", "It is sunny."),
    ):
        value = json.dumps([{"role": role, "content": content}])
        text.append({"key": key, "value": {"stringValue": value}})
    return span_json(1, trace=f"{n + 1:032x}", attributes=text)


def test_a_trace_answered_200_is_never_evicted_for_room(
    receive: Callable[..., Receiving],
) -> None:
    # 300 whole traces from 4 concurrent clients, 50 open traces allowed, a quiet period
    # longer than the flood: past the limit the receiver answers 429 (the exporter retries)
    # or finishes the oldest trace early; a trace it answered 200 is always assembled.
    receiving = receive(limits=AssemblyLimits(max_traces=50, quiet_period=30))
    accepted: list[int] = []
    refused: list[int] = []

    def client(first: int) -> None:
        for n in range(first, 300, 4):
            status = post(receiving.endpoint, request_body(agent_span(n)))[0]
            (accepted if status == 200 else refused).append(n)

    clients = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(120)
    assert refused  # 429 was sent before the limit
    assert receiving.pipeline.shutdown(60)
    assembly = receiving.pipeline.stats().assembly
    assert assembly.traces_evicted == {}
    assert assembly.traces_finished == len(accepted)
    assert assembly.runs_assembled == len(accepted)


def test_a_trace_split_between_two_receivers_is_counted_as_partial(
    receive: Callable[..., Receiving],
) -> None:
    # A round-robin balancer in front of two receivers: the agent span goes to one, its
    # model call to the other. Neither sees the whole trace; the one whose span names a
    # parent it never got counts the trace as partial.
    first = receive(limits=AssemblyLimits(quiet_period=0.2))
    second = receive(limits=AssemblyLimits(quiet_period=0.2))
    reader = InMemoryMetricReader()
    second.pipeline.report_metrics(MeterProvider(metric_readers=[reader]))
    root = agent_span(7)
    child = span_json(2, trace=root["traceId"], parentSpanId=root["spanId"])
    whole = agent_span(8)
    assert post(first.endpoint, request_body(root))[0] == 200
    assert post(second.endpoint, request_body(child))[0] == 200
    assert post(second.endpoint, request_body(whole))[0] == 200
    for receiving in (first, second):
        assert receiving.pipeline.shutdown(30)
    assert first.pipeline.stats().assembly.traces_partial == 0
    stats = second.pipeline.stats().assembly
    assert (stats.traces_finished, stats.traces_partial) == (2, 1)
    # And on a metric, for an alert on a deployment without trace-id affinity.
    data = reader.get_metrics_data()
    assert data is not None
    points = [
        point.value
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "livescore.collect.partial_traces"
        for point in metric.data.data_points
    ]
    assert points == [1]
