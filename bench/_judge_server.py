"""The benchmarks' judge: an OpenAITestServer in its own process, answering every request of
the hallucination scorer after the latency its model name asks for (``bench-judge@0.2``).

Prints its base URL on the first line, then serves until its stdin closes.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from _common import bench_reply

from livescore.testing import OpenAITestServer, _server


def _no_delay(handler: type[Any]) -> None:
    # The handler writes a reply's headers and body in two writes; with Nagle's algorithm on
    # and the client's delayed ACK, the body then waits ~40 ms on loopback. A real server
    # does not add that to every judge call, so the benchmark's judge must not either.
    # Setting TCP_NODELAY twice is harmless, should OpenAITestServer set it itself.
    setup = handler.setup

    def setup_without_delay(self: Any) -> None:
        setup(self)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    handler.setup = setup_without_delay


def main() -> None:
    _no_delay(_server._Handler)
    with OpenAITestServer(responder=bench_reply) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # returns at EOF: the benchmark is done


if __name__ == "__main__":
    main()
