"""Hallucination verdicts on items with personal data injected agree with and without
redaction: a value changed in the answer is still a hallucination behind placeholders."""

from __future__ import annotations

import json
from typing import Any

import anyio
from _pii_support import claims_judge

from livescore import create_scorer, run_evals
from livescore.pii import PersonalDataRedactor
from livescore.scorers import create_hallucination_scorer
from livescore.testing import OpenAITestServer

PEOPLE = [
    ("Margaret Thornton", "margaret.thornton@example.org", "+1 415 555 0142", "ACC-204518"),
    ("Daniel Okafor", "d.okafor@example.com", "+1 212 555 0187", "ACC-771203"),
    ("Priya Raman", "priya.raman@example.net", "+1 617 555 0123", "ACC-390017"),
    ("Tomas Lindqvist", "tomas.l@example.org", "+1 312 555 0166", "ACC-118842"),
]
OTHER = {
    "name": "Helen Carter",
    "email": "h.carter@example.com",
    "phone": "+1 206 555 0199",
    "account": "ACC-665301",
}


def items() -> list[dict[str, Any]]:
    """Each person twice: once restated faithfully, once with one value changed."""
    made = []
    for index, (name, email, phone, account) in enumerate(PEOPLE):
        context = [
            f"Customer {name} holds account {account}.",
            f"Contact for {name}: e-mail {email}, phone {phone}.",
        ]
        facts = {"name": name, "email": email, "phone": phone, "account": account}
        changed = ("name", "email", "phone", "account")[index]
        for hallucinated in (False, True):
            said = {**facts, changed: OTHER[changed]} if hallucinated else facts
            output = (
                f"{said['name']} holds account {said['account']}. "
                f"{said['name']} can be reached at {said['email']} or {said['phone']}."
            )
            made.append(
                {"input": "How do I reach them?", "output": output, "context": context}
                | {"metadata": {"hallucinated": hallucinated}}
            )
    return made


def verdicts(redact: PersonalDataRedactor | None) -> tuple[list[bool], list[str]]:
    data = items()
    with OpenAITestServer(responder=claims_judge) as server:
        scorer = create_hallucination_scorer(model=server.judge())
        result = anyio.run(lambda: run_evals(data, [scorer], concurrency=2, redact=redact))
        sent = [json.dumps(r) for r in server.requests]
    scores = [item.scores["hallucination"].score for item in result.items]
    assert all(s is not None for s in scores)
    return [s is not None and s > 0 for s in scores], sent


def test_redaction_keeps_every_hallucination_verdict() -> None:
    labels = [bool(item["metadata"]["hallucinated"]) for item in items()]
    plain, _ = verdicts(None)
    redactor = PersonalDataRedactor(patterns={"ACCOUNT": r"\bACC-\d{6}\b"})
    redacted, sent = verdicts(redactor)
    assert plain == labels
    assert redacted == plain
    # And the judge never saw the values it judged.
    values = [v for person in PEOPLE for v in person] + list(OTHER.values())
    assert [v for v in values if any(v in request for request in sent)] == []


def test_a_conversation_keeps_one_placeholder_per_person_across_turns() -> None:
    seen: list[str] = []

    def read(ctx: Any) -> float:
        seen.extend(str(run.input) + " | " + str(run.output) for run in ctx.conversation.runs)
        return 1.0

    scorer = create_scorer(
        id="turns", description="what the turns say", level="conversation", generate_score=read
    )
    turns = [
        {"input": "I am Daniel Okafor.", "output": "Hello Daniel Okafor."},
        {"input": "Mail d.okafor@example.com please.", "output": "Sent to d.okafor@example.com."},
    ]
    redactor = PersonalDataRedactor(names=True)
    conversation = {"id": "c1", "turns": turns}
    result = scorer.with_redaction(redactor).run_sync(conversation)
    assert result.status == "scored"
    assert seen == [
        "I am <PERSON_1>. | Hello <PERSON_1>.",
        "Mail <EMAIL_1> please. | Sent to <EMAIL_1>.",
    ]
