"""The benchmarks' judge: an OpenAITestServer in its own process, answering every request of
the hallucination scorer after the latency its model name asks for (``bench-judge@0.2``).

Prints its base URL on the first line, then serves until its stdin closes.
"""

from __future__ import annotations

import sys

from _common import bench_reply

from livescore.testing import OpenAITestServer


def main() -> None:
    with OpenAITestServer(responder=bench_reply) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # returns at EOF: the benchmark is done


if __name__ == "__main__":
    main()
