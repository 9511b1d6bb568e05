"""Shared pieces of the personal-data tests: a run full of personal data, a judge that
checks claims against the context, and a search for any of the values in what was caught."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from livescore import Run
from livescore.pii import PersonalDataRedactor

NAME = "Margaret Thornton"
EMAIL = "margaret.thornton@example.org"
PHONE = "+1 415 555 0142"
SECRETS = (NAME, EMAIL, PHONE, "Thornton", "margaret.thornton", "555 0142")

CONTEXT = [
    f"Customer record: {NAME}, e-mail {EMAIL}, phone {PHONE}.",
    f"{NAME} opened her account in 2019.",
]
INPUT = f"Hi, I am {NAME} ({EMAIL}). When did I open my account?"
OUTPUT = f"{NAME} opened her account in 2019. We will call {PHONE}."

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
SPAN_ID = "b7ad6b7169203331"


def personal_run(**extra: Any) -> Run:
    return Run(input=INPUT, output=OUTPUT, trace_id=TRACE_ID, span_id=SPAN_ID, **extra)


@cache
def redactor() -> PersonalDataRedactor:
    """One real Presidio redactor (with spaCy's English NER) for the whole session."""
    return PersonalDataRedactor()


def leaks(caught: Iterable[Any]) -> list[str]:
    """The personal values found anywhere in ``caught`` (anything JSON can show)."""
    text = json.dumps(list(caught), default=repr, ensure_ascii=False)
    return [s for s in SECRETS if s.casefold() in text.casefold()]


_CLAIM = re.compile(r'<claim index="\d+">(.*?)</claim>', re.S)
_DOCUMENT = re.compile(r'<document index="\d+">\n(.*?)\n</document>', re.S)


def claims_judge(body: dict[str, Any]) -> Any:
    """A scripted judge for the hallucination scorer that reads the request it is sent.

    Claims are the output's sentences. A claim is supported when every word of it that
    names something (capitalised words, placeholders, numbers, e-mails) appears in the
    context: so a claim whose person, e-mail or number differs from the context's is a
    hallucination, with or without placeholders.
    """
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        context = " ".join(_DOCUMENT.findall(prompt))
        verdicts = []
        for claim in _CLAIM.findall(prompt):
            missing = [t for t in _names(claim) if t not in context]
            verdicts.append(
                {
                    "statement": claim,
                    "verdict": "yes" if missing else "no",
                    "reason": f"the context does not mention {missing}" if missing else "stated",
                }
            )
        return {"verdicts": verdicts}
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is unknown because"
    # A reason that quotes back what it read, as judges do: placeholders only, then.
    return f"{opening} of what I read: {prompt}"


_NAMING = re.compile(r"<[A-Z_]+_\d+>|[\w.+-]+@[\w.-]+|\+?\d[\d ]{3,}\d|\b[A-Z][a-z]+\b")


def _names(claim: str) -> list[str]:
    return [t.strip() for t in _NAMING.findall(claim) if t.strip() not in ("We", "The", "Her")]
