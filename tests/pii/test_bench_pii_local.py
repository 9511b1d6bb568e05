"""``bench/pii.py --judge local``: its wiring on the test server.

The real run needs the local judge (a 1.1 GB model, most of an hour of CPU), so it is opt-in.
Here the same function judges the injected-personal-data items through an
:class:`~livescore.testing.OpenAITestServer` whose "judge" calls a claim unsupported when a
name, e-mail, phone number or account number in the answer is missing from the context, and
the figures are checked: redaction must not change a verdict that placeholders preserve.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from _pii_support import redactor

from livescore.testing import OpenAITestServer, Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import pii as bench_pii

_TOKEN = re.compile(r"<[A-Z_]+_\d+>|[\w.+-]+@[\w.-]+|\+?\d[\d ()-]{5,}\d|ACC-\d{6}|[A-Z][a-z]+")


def one_word_judge(body: dict[str, Any]) -> Reply:
    """Unsupported when a token of the answer's naming words is not in the context."""
    prompt = str(body["messages"][-1]["content"])
    context = re.split(r"\n\n(?:Question|Answer): ", prompt, maxsplit=1)[0]
    answer = prompt.partition("\nAnswer: ")[2].partition("\n\nIs every statement")[0]
    missing = [t for t in _TOKEN.findall(answer) if t.strip() not in context]
    p_bad = 0.9 if missing else 0.1
    return Reply.token_probabilities({"no": p_bad, "yes": 1 - p_bad})


def test_local_verdicts_reports_both_modes_and_their_agreement() -> None:
    with OpenAITestServer(responder=one_word_judge) as server:
        rows = bench_pii.local_verdicts(redactor(), 6, base_url=server.base_url, model="test-model")
        requests = list(server.requests)
    assert rows["items"] == 6
    assert rows["hallucinated"] == 3
    assert len(requests) == 12  # one logprob call per item and mode
    for mode in ("plain", "redacted"):
        assert rows[mode]["scored"] == 6
        assert rows[mode]["balanced_accuracy"] == 1.0  # this judge reads every value
    assert rows["agreement"] == 1.0
    redacted_prompts = str(requests[6:])
    assert "<PERSON_1>" in redacted_prompts
