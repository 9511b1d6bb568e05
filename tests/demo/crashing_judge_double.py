"""A test double for the local llama.cpp judge: an OpenAI-compatible server that dies.

It serves ``GET /v1/models`` (so the demo sees it start), prints a log line, then on its
first chat completion kills itself with SIGSEGV, as llama-cpp-python 0.3.36 does here.

    python crashing_judge_double.py PORT
"""

from __future__ import annotations

import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "smollm2-135m"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        print("llama_decode: ggml_compute_forward: fatal error in the first completion")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)

    def log_message(self, format: str, *args: object) -> None:
        print("request:", format % args)
        sys.stdout.flush()


if __name__ == "__main__":
    print("llama server double: loading model SmolLM2-135M (not really)")
    sys.stdout.flush()
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
