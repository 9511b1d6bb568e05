"""Phoenix's own hallucination evaluator over benchmark items, against one judge server.

Run by ``bench/judge_quality.py --judge local`` with the Python of the judge's environment,
where ``arize-phoenix-evals`` is installed (its pins stay out of the project's)::

    python bench/_phoenix_judge.py REQUEST.json RESULTS.jsonl

``REQUEST.json``: ``{"base_url", "model", "template", "max_tokens", "items": [{"id",
"context", "question", "output"}]}``. ``template`` names Phoenix's evaluator:
``"hallucination"`` (``HallucinationEvaluator``: the response against everything the
assistant had, here the context and the question) or ``"faithfulness"``
(``FaithfulnessEvaluator``: query, context, response). Each result line: ``{"id", "score"
(1.0 hallucinated / unfaithful, 0.0 not), "label", "explanation", "tokens", "error"}``.

Phoenix asks for its label through structured output (``json_schema``), then, on an HTTP
400, through tool calling. llama.cpp's server answers ``json_schema`` with an HTTP 500,
which Phoenix does not read as a refusal, so its OpenAI adapter starts here on the tool
calling its discovery would settle on (the same label, explanation and choices; the
server constrains the arguments to the schema).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _evaluator(template: str, llm: Any, max_tokens: int) -> Any:
    if template == "hallucination":
        from phoenix.evals.metrics.hallucination import HallucinationEvaluator

        return HallucinationEvaluator(llm=llm, temperature=0.0, max_tokens=max_tokens)
    if template == "faithfulness":
        from phoenix.evals.metrics.faithfulness import FaithfulnessEvaluator

        return FaithfulnessEvaluator(llm=llm, temperature=0.0, max_tokens=max_tokens)
    raise SystemExit(f"unknown Phoenix template {template!r}")


def _inputs(template: str, item: dict[str, Any]) -> dict[str, str]:
    question = (item.get("question") or "").strip()
    if template == "faithfulness":
        return {"input": question, "context": item["context"], "output": item["output"]}
    # The hallucination evaluator grounds the response in everything the assistant had:
    # here the retrieved context, then the user's message (when there is one).
    record = f"Retrieved context:\n{item['context']}"
    if question:
        record += f"\n\nUser: {question}"
    return {"input": record, "output": item["output"]}


def main(argv: list[str]) -> int:
    request_path, results_path = argv[1], argv[2]
    with open(request_path, encoding="utf-8") as file:
        request = json.load(file)
    import openai
    from phoenix.evals import LLM
    from phoenix.evals.llm.types import ObjectGenerationMethod

    tokens = [0]

    def count(response: Any) -> None:
        response.read()
        try:
            usage = json.loads(response.content).get("usage") or {}
        except ValueError:
            return
        tokens[0] += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)

    llm = LLM(
        provider="openai",
        model=request["model"],
        base_url=request["base_url"],
        api_key="not-needed",
        timeout=float(request.get("timeout", 900)),
        sync_client_kwargs={
            "http_client": openai.DefaultHttpxClient(event_hooks={"response": [count]})
        },
    )
    # See the module docstring: llama.cpp answers json_schema with a 500, not a 400.
    llm._sync_adapter._preferred_method = ObjectGenerationMethod.TOOL_CALLING
    template = request["template"]
    evaluator = _evaluator(template, llm, int(request["max_tokens"]))
    with open(results_path, "w", encoding="utf-8") as out:
        for item in request["items"]:
            tokens[0] = 0
            row: dict[str, Any] = {"id": item["id"]}
            try:
                (score,) = evaluator.evaluate(_inputs(template, item))
            except Exception as exc:  # a failed item is reported, and the run goes on
                row.update(score=None, label=None, error=f"{type(exc).__name__}: {exc}"[:300])
            else:
                bad = score.label in ("hallucinated", "unfaithful")
                row.update(
                    score=1.0 if bad else 0.0,
                    label=score.label,
                    explanation=(score.explanation or "")[:500],
                )
            row["tokens"] = tokens[0]
            out.write(json.dumps(row) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
