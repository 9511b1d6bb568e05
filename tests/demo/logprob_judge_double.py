"""A test double for the local judge's llama.cpp server: the OpenAI-compatible test server.

It answers the hallucination scorer's logprob prompt with token probabilities, as llama.cpp's
server does with ``--logits_all``: "no" (not every statement supported) is likely for an
answer that claims drone delivery (no tool result mentions drones), unlikely for the others.
It also answers ``GET /v1/models``, so the demo sees it start.

    python logprob_judge_double.py PORT
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from livescore.testing import OpenAITestServer, Reply


def respond(body: dict[str, Any]) -> Reply:
    prompt = str(body["messages"][-1]["content"]).lower()
    unsupported = 0.93 if "drone" in prompt else 0.04
    return Reply.token_probabilities({"no": unsupported, "yes": 1 - unsupported})


if __name__ == "__main__":
    with OpenAITestServer(responder=respond, port=int(sys.argv[1])):
        print("llama server double: serving the logprob judge (not really)", flush=True)
        threading.Event().wait()  # until the demo stops it (SIGTERM)
