"""Write data/hallucination/expertqa_rag_200.jsonl: 200 claims of retrieval-augmented answers.

The source is ExpertQA (Malaviya et al., NAACL 2024; MIT licence): experts asked questions
of their field, systems answered, and each answer's claims were judged by an expert against
the evidence the claim cites. Only the two retrieve-and-read systems are taken
(``rr_gs_gpt4``, ``rr_sphere_gpt4``: GPT-4 answering over passages retrieved for the
question), so each item is a RAG answer's claim beside the retrieved passages it cites.

Label: ``hallucinated`` 0 where the expert judged the claim completely supported by its
evidence (``support == "Complete"``), 1 where only partly (``"Partial"`` or
``"Incomplete"``). Claims citing no evidence (``"Missing"``) have no context to check
against and are left out, as are ``"N/A"`` ones. Only items whose evidence is at most
:data:`MAX_CONTEXT_CHARS` characters are kept, so one item fits the local judge's context
window and costs about as much as an item of the other three sets; then 100 of each label,
seeded. The expert labels are noisier than the other sets' (an expert sometimes marked a
claim partly supported from their own knowledge of the field): read its figures as a floor.

Run: ``python bench/corpus/make_expertqa_slice.py RAND_TEST.jsonl DOMAIN_TEST.jsonl`` with
the two files ``data/lfqa/rand_test.jsonl`` and ``data/lfqa/domain_test.jsonl`` of the
ExpertQA repository at commit :data:`SOURCE_COMMIT`; their SHA-256 are checked.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "data" / "hallucination" / "expertqa_rag_200.jsonl"
SOURCE_COMMIT = "1aa7ba81bd4c083c12ef1aa2fee338f6cb60fa87"
SOURCE_SHA256 = {
    "rand_test.jsonl": "022d6c19bdd91fb33c3185ef59f9c18510655c15598061e631c434487aa07b28",
    "domain_test.jsonl": "7a1895dbcf16c4fc135116996d1bdb22412b8d791e620241ac9e80729d55ea6b",
}
SYSTEMS = ("rr_gs_gpt4", "rr_sphere_gpt4")
MAX_CONTEXT_CHARS = 2000
PER_LABEL = 100
SEED = 20261206
LABELS = {"Complete": 0, "Partial": 1, "Incomplete": 1}


def candidates(path: Path) -> list[dict[str, Any]]:
    """Every claim of ``path`` that fits: one row each, in file order."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        record = json.loads(line)
        for system in SYSTEMS:
            answer = record["answers"].get(system)
            if not answer:
                continue
            for index, claim in enumerate(answer.get("claims") or []):
                label = LABELS.get(claim.get("support") or "")
                # The same passage is often cited twice ([2] [3]): once is enough.
                evidence = list(dict.fromkeys(claim.get("evidence") or []))
                context = "\n\n".join(e.strip() for e in evidence)
                output = (claim.get("claim_string") or "").strip()
                if label is None or not context or not output:
                    continue
                if len(context) > MAX_CONTEXT_CHARS:
                    continue
                rows.append(
                    {
                        "id": f"expertqa-{path.stem.split('_')[0]}-{number}-{system}-{index}",
                        "dataset": "ExpertQA",
                        "task": "rag",
                        "context": context,
                        "question": record["question"].strip(),
                        "output": output,
                        "hallucinated": label,
                        "meta": {"system": system, "support": claim["support"]},
                    }
                )
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("Run: ")[1].strip(), file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for given in map(Path, argv[1:]):
        digest = hashlib.sha256(given.read_bytes()).hexdigest()
        if SOURCE_SHA256.get(given.name) != digest:
            print(f"{given}: SHA-256 {digest} is not the pinned one", file=sys.stderr)
            return 1
        rows += candidates(given)
    rng = random.Random(SEED)
    picked = []
    for label in (0, 1):
        pool = [r for r in rows if r["hallucinated"] == label]
        picked += rng.sample(pool, min(PER_LABEL, len(pool)))
    # Balanced: as many of each label as the rarer one has (100 unless the source shrank).
    per_label = min(sum(r["hallucinated"] == label for r in picked) for label in (0, 1))
    balanced = [
        r for label in (0, 1) for r in [p for p in picked if p["hallucinated"] == label][:per_label]
    ]
    rng.shuffle(balanced)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in balanced))
    print(f"wrote {len(balanced)} items ({per_label} per label) to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
