"""Shared pieces of the evals tests: an in-memory OTel SDK and a scripted judge responder."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from livescore import PromptStep, create_scorer
from livescore.scoring import Scorer, StepContext


@dataclass
class InMemoryTracing:
    provider: TracerProvider
    exporter: InMemorySpanExporter

    @classmethod
    def create(cls) -> InMemoryTracing:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        return cls(provider, exporter)

    def spans(self, operation: str | None = None) -> list[ReadableSpan]:
        spans = list(self.exporter.get_finished_spans())
        if operation is None:
            return spans
        return [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == operation]


def length_scorer(id: str = "short") -> Scorer:
    """1.0 for answers under 20 characters, else 0.0; labelled."""
    return create_scorer(
        id=id,
        description="1 when the answer is short",
        generate_score=lambda ctx: float(len(ctx.output_text) < 20),
        label=lambda score: "short" if score else "long",
    )


def context_echo_scorer(seen: list[list[str] | None]) -> Scorer:
    """Records the context it was given; scores the number of context items."""

    def score(ctx: StepContext) -> float:
        seen.append(ctx.context)
        return float(len(ctx.context or ()))

    from livescore.evals._run_evals import get_item_context

    return create_scorer(
        id="context-size",
        description="how many context items reached the scorer",
        generate_score=score,
        get_context=get_item_context,
    )


def hallucination_responder(body: dict[str, Any]) -> Any:
    """Answers the hallucination scorer's three prompts like a careful judge would.

    Claims are the output's sentences; a claim is hallucinated when it contains "WRONG" or
    "drone" (the demo's unsupported claim); the reason names the score.
    """
    prompt = str(body["messages"][-1]["content"])
    if "<claims>" in prompt:
        claims = re.findall(r'<claim index="\d+">(.*?)</claim>', prompt, re.S)
        verdicts = []
        for claim in claims:
            bad = "WRONG" in claim or "drone" in claim.lower()
            verdicts.append(
                {
                    "statement": claim,
                    "verdict": "yes" if bad else "no",
                    "reason": "the context does not say so" if bad else "the context states it",
                }
            )
        return {"verdicts": verdicts}
    if "List the factual claims" in prompt:
        found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.S)
        text = found.group(1) if found else ""
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", text) if s.strip()]}
    start = re.search(r'Start with "(The score is [^"]+ because)"', prompt)
    opening = start.group(1) if start else "The score is unknown because"
    return f"{opening} the scripted judge counted the unsupported claims."


class Verdict(BaseModel):
    score: float


def judged_scorer(judge: Any) -> Scorer:
    """A judge scorer: one call an item, the judge's ``{"score": ...}`` its score."""
    return create_scorer(
        id="judged",
        description="the judge decides",
        model=judge,
        generate_score=PromptStep(
            description="score it",
            output_schema=Verdict,
            create_prompt=lambda ctx: f"score {ctx.output_text}",
        ),
    )
