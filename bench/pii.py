"""Benchmark: personal-data redaction, both sides of the trade.

1. **Detection**: precision and recall per entity type of ``PersonalDataRedactor()`` (Presidio
   2.2 with spaCy's ``en_core_web_sm`` 3.8.0) on a synthetic labelled set generated here with
   Faker and a fixed seed: sentences from templates with known spans (names, e-mails, phone
   numbers, credit cards, IBANs, IP addresses, URLs, US SSNs, cities, and an account-number
   format given as a user pattern). Names from other locales (German, Spanish, Indian,
   Japanese and Chinese romanised by Faker, and in their own script) are measured apart: the
   English model misses some of them, and the table says how many.
   A gold span is found when a detection of the same type overlaps it; a detection is right
   when it overlaps a gold span of its type.
2. **Verdicts preserved**: hallucination scores of labelled items with personal data
   injected (a customer record in the context; an answer restating some of it, with one
   value changed in half the items to make a hallucination), judged with and without
   redaction by a scripted judge that checks each claim's names, numbers and e-mails against
   the context (``OpenAITestServer``, so the scorers' real requests are what it reads). The
   figures: agreement of the two verdicts, and each one's accuracy against the labels.
3. **Cost**: CPU time per score spent redacting a run (input, output and context) by text
   size, with and without the NER model, on one thread.

With ``--judge local`` the verdicts of section 2 come from the local judge of
``bench/judge_quality.py --judge local`` instead (Qwen2.5-Coder-1.5B on llama.cpp's server,
installed once into ``$LIVESCORE_CACHE``, else ``~/.cache/livescore``), in the hallucination
scorer's logprob mode: balanced accuracy and AUROC against the labels with and without
redaction, and how often the two verdicts agree. Hours of CPU for the full set on 2 cores, so
opt-in; it writes ``bench/results/pii_local.json`` and skips the detection and cost sections.

Run: ``python bench/pii.py [--quick] [--json out.json] [--judge local [--items N]]``.
"""

from __future__ import annotations

import argparse
import functools
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
from _common import Results, print_machine, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from faker import Faker  # noqa: E402

from livescore import Run, run_evals  # noqa: E402
from livescore.pii import PersonalDataRedactor, Pseudonyms  # noqa: E402
from livescore.scorers import create_hallucination_scorer  # noqa: E402
from livescore.testing import OpenAITestServer  # noqa: E402

SEED = 20260601
ACCOUNT_PATTERN = {"ACCOUNT": r"\bACC-\d{6}\b"}
# Presidio's names for the types, as the gold labels use them.
TYPES = (
    "PERSON",
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
    "URL",
    "US_SSN",
    "LOCATION",
    "ACCOUNT",
)
AREA_CODES = ("212", "312", "415", "617", "206", "303", "512", "646", "702", "818")
OTHER_LOCALES = ("de_DE", "es_ES", "en_IN", "ja_JP", "zh_CN")

# Templates: {slot} names a value of that type.
TEMPLATES = (
    "Please update the record of {PERSON}: the new e-mail is {EMAIL_ADDRESS}.",
    "{PERSON} called from {PHONE_NUMBER} about the delivery to {LOCATION}.",
    "Charge the card {CREDIT_CARD} and send the receipt to {EMAIL_ADDRESS}.",
    "Refund to IBAN {IBAN_CODE}, account {ACCOUNT}, holder {PERSON}.",
    "The login came from {IP_ADDRESS}; the user then opened {URL}.",
    "Our records list {PERSON} with social security number {US_SSN}.",
    "Hi, this is {PERSON} from {LOCATION}. My number is {PHONE_NUMBER}.",
    "Ticket for account {ACCOUNT}: customer {PERSON} ({EMAIL_ADDRESS}) cannot log in.",
)


def value(fake: Faker, kind: str) -> str:
    if kind == "PERSON":
        return str(fake.name())
    if kind == "EMAIL_ADDRESS":
        return str(fake.email())
    if kind == "PHONE_NUMBER":
        # A valid North American number (area and exchange codes start at 2), as real
        # ones are; phonenumbers rejects the rest, and Presidio with it.
        area = fake.random_element(AREA_CODES)
        exchange = f"{fake.random_int(2, 9)}{fake.numerify('##')}"
        return f"+1 {area} {exchange} {fake.numerify('####')}"
    if kind == "CREDIT_CARD":
        return str(fake.credit_card_number(card_type="visa16"))
    if kind == "IBAN_CODE":
        return str(fake.iban())
    if kind == "IP_ADDRESS":
        return str(fake.ipv4_public())
    if kind == "URL":
        return f"{fake.url()}account/{fake.numerify('####')}"
    if kind == "US_SSN":
        return str(fake.ssn())
    if kind == "LOCATION":
        return str(fake.city())
    if kind == "ACCOUNT":
        return f"ACC-{fake.numerify('######')}"
    raise ValueError(kind)


def labelled_set(n: int, seed: int = SEED) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """``n`` sentences with their gold spans, the same for the same seed."""
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        template = rng.choice(TEMPLATES)
        text, spans, at = "", [], 0
        for match in re.finditer(r"\{(\w+)\}", template):
            text += template[at : match.start()]
            filled = value(fake, match.group(1))
            spans.append((len(text), len(text) + len(filled), match.group(1)))
            text += filled
            at = match.end()
        items.append((text + template[at:], spans))
    return items


def other_locale_names(per_locale: int, seed: int = SEED) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for locale in OTHER_LOCALES:
        fake = Faker(locale)
        fake.seed_instance(seed)
        names[locale] = [str(fake.name()) for _ in range(per_locale)]
    return names


def resolved(found: Any) -> list[tuple[int, int, str]]:
    """The findings Pseudonyms replaces: of overlapping ones, the longer (an e-mail's
    domain is also found as a URL; the e-mail is what is replaced)."""
    kept: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(found, key=lambda d: (-(d[1] - d[0]), d[0])):
        if not any(overlaps((start, end), (s, e)) for s, e, _ in kept):
            kept.append((start, end, kind))
    return kept


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def detection(redactor: PersonalDataRedactor, n: int) -> dict[str, Any]:
    gold_total: dict[str, int] = defaultdict(int)
    gold_found: dict[str, int] = defaultdict(int)
    predicted: dict[str, int] = defaultdict(int)
    predicted_right: dict[str, int] = defaultdict(int)
    for text, gold in labelled_set(n):
        found = [(s, e, t) for s, e, t in resolved(redactor(text)) if t in TYPES]
        for start, end, kind in gold:
            gold_total[kind] += 1
            if any(t == kind and overlaps((s, e), (start, end)) for s, e, t in found):
                gold_found[kind] += 1
        for start, end, kind in found:
            predicted[kind] += 1
            if any(t == kind and overlaps((s, e), (start, end)) for s, e, t in gold):
                predicted_right[kind] += 1
    rows = {}
    for kind in TYPES:
        rows[kind] = {
            "gold": gold_total[kind],
            "predicted": predicted[kind],
            "precision": round(predicted_right[kind] / predicted[kind], 3)
            if predicted[kind]
            else None,
            "recall": round(gold_found[kind] / gold_total[kind], 3) if gold_total[kind] else None,
        }
    return rows


def names_by_locale(redactor: PersonalDataRedactor, per_locale: int) -> dict[str, Any]:
    rows = {}
    for locale, names in other_locale_names(per_locale).items():
        found = 0
        for name in names:
            text = f"The parcel was signed for by {name} this morning."
            start = text.index(name)
            span = (start, start + len(name))
            if any(t == "PERSON" and overlaps((s, e), span) for s, e, t in redactor(text)):
                found += 1
        rows[locale] = {"names": len(names), "found": found, "recall": round(found / len(names), 3)}
    return rows


# -- 2. verdicts preserved -------------------------------------------------------------------

_CLAIM = re.compile(r'<claim index="\d+">(.*?)</claim>', re.S)
_DOCUMENT = re.compile(r'<document index="\d+">\n(.*?)\n</document>', re.S)
_NAMING = re.compile(r"<[A-Z_]+_\d+>|[\w.+-]+@[\w.-]+|\+?\d[\d -]{3,}\d|ACC-\d+|\b[A-Z][a-z]+\b")
_COMMON = frozenset({"The", "Her", "His", "Their", "We", "Your", "Yes", "Account", "Customer"})


def claims_judge(body: dict[str, Any]) -> Any:
    """A scripted judge: a claim is supported when every name, number and e-mail in it
    appears in the context (placeholders included)."""
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        context = " ".join(_DOCUMENT.findall(prompt))
        verdicts = []
        for claim in _CLAIM.findall(prompt):
            names = [t.strip() for t in _NAMING.findall(claim) if t.strip() not in _COMMON]
            bad = any(t not in context for t in names)
            verdicts.append({"statement": claim, "verdict": "yes" if bad else "no", "reason": "-"})
        return {"verdicts": verdicts}
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    return "The score is as counted."


def injected_items(n: int, seed: int = SEED) -> list[dict[str, Any]]:
    """Items whose context is a customer record; half the answers change one value."""
    fake = Faker("en_US")
    fake.seed_instance(seed + 1)
    rng = random.Random(seed + 1)
    items = []
    for index in range(n):
        name, email = str(fake.name()), str(fake.email())
        phone = value(fake, "PHONE_NUMBER")
        account = value(fake, "ACCOUNT")
        context = [
            f"Customer {name} holds account {account}.",
            f"Contact for {name}: e-mail {email}, phone {phone}.",
        ]
        facts = {"name": name, "email": email, "phone": phone, "account": account}
        hallucinated = index % 2 == 1
        if hallucinated:
            changed = rng.choice(["name", "email", "phone", "account"])
            other = {
                "name": str(fake.name()),
                "email": str(fake.email()),
                "phone": value(fake, "PHONE_NUMBER"),
                "account": value(fake, "ACCOUNT"),
            }
            facts = {**facts, changed: other[changed]}
        output = (
            f"{facts['name']} holds account {facts['account']}. "
            f"{facts['name']} can be reached at {facts['email']} or {facts['phone']}."
        )
        items.append(
            {
                "input": f"How do I reach the holder of {account}?",
                "output": output,
                "context": context,
                "metadata": {"hallucinated": hallucinated},
            }
        )
    return items


def verdicts(redactor: PersonalDataRedactor, n: int) -> dict[str, Any]:
    items = injected_items(n)
    labels = [bool(item["metadata"]["hallucinated"]) for item in items]
    seen: dict[str, list[bool]] = {}
    with OpenAITestServer(responder=claims_judge) as server:
        scorer = create_hallucination_scorer(model=server.judge())
        for mode, redact in (("plain", None), ("redacted", redactor)):
            evaluate = functools.partial(run_evals, items, [scorer], concurrency=4, redact=redact)
            result = anyio.run(evaluate)
            scores = [item.scores["hallucination"].score for item in result.items]
            seen[mode] = [s is not None and s > 0 for s in scores]

    def share(a: list[bool], b: list[bool]) -> float:
        return round(sum(x == y for x, y in zip(a, b, strict=True)) / n, 3)

    return {
        "items": n,
        "hallucinated": sum(labels),
        "agreement": share(seen["plain"], seen["redacted"]),
        "accuracy_plain": share(seen["plain"], labels),
        "accuracy_redacted": share(seen["redacted"], labels),
    }


def local_verdicts(
    redactor: PersonalDataRedactor, n: int, *, base_url: str, model: str
) -> dict[str, Any]:
    """Section 2 with a real judge at ``base_url``, in the hallucination scorer's logprob
    mode (one judge call per score)."""
    from livescore.evals import binary_quality
    from livescore.judges import OpenAIJudge

    items = injected_items(n)
    labels = [bool(item["metadata"]["hallucinated"]) for item in items]
    rows: dict[str, Any] = {"items": n, "hallucinated": sum(labels), "mode": "logprob"}
    judge = OpenAIJudge(
        model,
        base_url=base_url,
        api_key="unused",
        timeout=600,
        max_retries=0,  # llama.cpp's server finishes an abandoned answer first
        max_concurrency=1,
        structured_output="json_object",
        temperature=0.0,
    )
    scorer = create_hallucination_scorer(model=judge, judge_mode="logprob")
    seen: dict[str, list[float | None]] = {}
    for mode, redact in (("plain", None), ("redacted", redactor)):
        started = time.perf_counter()
        evaluate = functools.partial(run_evals, items, [scorer], concurrency=1, redact=redact)
        result = anyio.run(evaluate)
        seen[mode] = [item.scores["hallucination"].score for item in result.items]
        scored = [(s, y) for s, y in zip(seen[mode], labels, strict=True) if s is not None]
        figures = binary_quality([y for _, y in scored], [s for s, _ in scored], threshold=0.5)
        balanced = figures.balanced_accuracy
        rows[mode] = {
            "scored": len(scored),
            "balanced_accuracy": None if balanced is None else round(balanced, 3),
            "auroc": None if figures.auroc is None else round(figures.auroc, 3),
            "wall_s": round(time.perf_counter() - started, 1),
        }
    both = [
        (a >= 0.5, b >= 0.5)
        for a, b in zip(seen["plain"], seen["redacted"], strict=True)
        if a is not None and b is not None
    ]
    rows["agreement"] = round(sum(a == b for a, b in both) / len(both), 3) if both else None
    return rows


def with_local_judge(redactor: PersonalDataRedactor, n: int) -> dict[str, Any]:
    """:func:`local_verdicts` on the local judge's server, installed once and started here."""
    from _judge_quality_local import MODEL_NAME, running_server
    from _local_model import ensure_judge_venv, ensure_model

    with running_server(ensure_judge_venv(), ensure_model(), "logprobs") as server:
        return local_verdicts(redactor, n, base_url=server.base_url, model=MODEL_NAME)


# -- 3. cost ---------------------------------------------------------------------------------


def cost(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    fake = Faker("en_US")
    fake.seed_instance(SEED + 2)
    rows = []
    for names in (True, False):
        redactor = PersonalDataRedactor(names=names, patterns=ACCOUNT_PATTERN)
        Pseudonyms(redactor).redact("warm up: Ann Lee, ann@example.com")  # loads the model
        for size in sizes:
            sentences = []
            while sum(len(s) + 1 for s in sentences) < size:
                text, _ = labelled_set(1, seed=SEED + len(sentences))[0]
                sentences.append(text)
            text = " ".join(sentences)[:size]
            # A score reads the input, the output and the context: a third of the text each.
            third = max(1, size // 3)
            parts = [text[:third], text[third : 2 * third], text[2 * third :]]
            timings = []
            for _ in range(repeats):
                started = time.process_time()
                p = Pseudonyms(redactor)
                p.redact_run(Run(input=parts[0], output=parts[1]))
                p.redact(parts[2])
                timings.append(time.process_time() - started)
            timings.sort()
            rows.append(
                {
                    "ner": names,
                    "chars": size,
                    "cpu_ms_median": round(timings[len(timings) // 2] * 1e3, 2),
                    "cpu_ms_best": round(timings[0] * 1e3, 2),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer items, fewer repeats")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument(
        "--judge", choices=["local"], default=None, help="verdicts from a real judge"
    )
    parser.add_argument("--items", type=int, default=40, help="items judged with --judge local")
    args = parser.parse_args()
    if args.judge == "local":
        record = Results("pii_local", quick=args.quick)
        print_machine("Personal-data redaction: verdicts of the local judge")
        local = with_local_judge(PersonalDataRedactor(patterns=ACCOUNT_PATTERN), args.items)
        print(local)
        record.write(
            {"seed": SEED, "judge": "Qwen2.5-Coder-1.5B (local)", "verdicts": local},
            json_path=args.json,
        )
        return
    record = Results("pii", quick=args.quick)
    print_machine("Personal-data redaction: detection, verdicts, cost")
    redactor = PersonalDataRedactor(patterns=ACCOUNT_PATTERN)
    n = 80 if args.quick else 400
    found = detection(redactor, n)
    table(
        f"Detection on {n} synthetic sentences (seed {SEED})",
        ["entity", "gold", "found", "precision", "recall"],
        [[k, v["gold"], v["predicted"], v["precision"], v["recall"]] for k, v in found.items()],
    )
    locales = names_by_locale(redactor, 10 if args.quick else 40)
    table(
        "Names from other locales (PERSON recall)",
        ["locale", "names", "found", "recall"],
        [[k, v["names"], v["found"], v["recall"]] for k, v in locales.items()],
    )
    kept = verdicts(redactor, 20 if args.quick else 100)
    table("Hallucination verdicts with and without redaction", list(kept), [list(kept.values())])
    spent = cost([200, 2_000, 20_000], 3 if args.quick else 10)
    table(
        "Redaction CPU per score (input, output, context)",
        ["NER", "chars", "median ms", "best ms"],
        [[r["ner"], r["chars"], r["cpu_ms_median"], r["cpu_ms_best"]] for r in spent],
    )
    record.write(
        {
            "seed": SEED,
            "detection": {"sentences": n, "types": found, "other_locales": locales},
            "verdicts": kept,
            "cost": spent,
        },
        json_path=args.json,
    )


if __name__ == "__main__":
    main()
