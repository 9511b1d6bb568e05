"""A stand-in for Phoenix's ``POST /v1/span_annotations`` in a process of its own (benchmarks).

It accepts every batch (200) without storing it, so a benchmark measures the sink, not a
database. Prints its port on the first line of stdout, then serves until killed.
"""

from __future__ import annotations

import json
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Phoenix's server

    def setup(self) -> None:
        super().setup()
        # Headers and body leave in two writes: without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every reply (uvicorn, Phoenix's server, sets it).
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        count = len(json.loads(body)["data"])
        reply = json.dumps({"data": [{"id": str(i)} for i in range(count)]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()
