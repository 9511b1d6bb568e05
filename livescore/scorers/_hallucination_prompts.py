"""What the grounding scorers share: :class:`ClaimsWording`, the one spec that hallucination and
faithfulness word differently; the hallucination scorer's system prompts; the logprob mode's
plain question, which both send."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from livescore.scorers._claims import DATA_RULE as _DATA_RULE
from livescore.scorers._claims import EXTRACT_SYSTEM, claims_extraction_step, extract_prompt
from livescore.scorers._context import context_items
from livescore.scorers._judge_spec import JudgePrompts, JudgeSpec, LogprobSpec, Shown
from livescore.scorers._judged import fmt
from livescore.scorers._prompting import block, item_blocks, one_per_item, quote, verdict_blocks
from livescore.scorers._verdicts import tally
from livescore.scoring import StepContext

__all__ = (
    "EXTRACT_SYSTEM",
    "LOGPROB_CHOICES",
    "LOGPROB_SYSTEM",
    "ONE_CALL_SYSTEM",
    "REASON_SYSTEM",
    "VERDICT_SYSTEM",
    "ClaimsWording",
    "extract_prompt",
    "logprob_prompt",
    "quote",
)

_JUDGING_RULES = """\
Decide each claim with the context as your only source of truth:
- Do not use your own knowledge of the world. A claim that is true in reality but not \
backed by the context is still unsupported.
- "yes" (hallucinated): the claim contradicts the context, or the context does not contain \
what is needed to back it.
- "no" (not hallucinated): the context states the claim or it follows plainly from what \
the context states.
- Hedged wording ("may", "might", "probably", "likely") is acceptable when the fact it \
hedges is in the context ("no"), and is a hallucination when that fact is not ("yes").
- Loose precision is not a hallucination: a vaguer date ("early 2007" for "January 9, \
2007"), a reasonable rounding or approximation of a number, or leaving details out is \
"no". A date, number or name that disagrees with the context is "yes".
- Subjective or evaluative claims ("pioneering", "the best", "widely loved") are "yes" \
unless the context itself says so."""


VERDICT_SYSTEM = f"""\
You are a strict fact-checker. You compare claims with a context and decide, for each \
claim, whether it is a hallucination.

{_JUDGING_RULES}

{_DATA_RULE}

Return exactly one verdict per claim, in the order given. Each verdict has "statement" \
(the claim, copied), "verdict" ("yes" or "no", lower case) and "reason" (one short \
sentence: the part of the context that backs or contradicts the claim, or what is \
missing).

Answer with JSON only: {{"verdicts": [{{"statement": "...", "verdict": "yes", "reason": \
"..."}}]}}"""


REASON_SYSTEM = f"""\
You explain the result of a hallucination check to the developer of an AI system, in \
plain, concise English. You write two or three sentences of plain text, no lists, no \
JSON.

{_DATA_RULE}"""


ONE_CALL_SYSTEM = f"""\
You are a strict fact-checker. You review an AI system's output against a context in \
three moves, and give all three in one JSON answer.

1. "claims": break the output into the factual claims it makes. A claim is a single \
statement that could be checked as true or false (facts, names, numbers, dates, events, \
relations, evaluations stated as facts). Split sentences that say several things, make \
each claim stand alone, keep the output's wording, precision and hedging. Leave out \
greetings, questions and text that asserts nothing. An output with no checkable claim \
gives an empty list.
2. "verdicts": one verdict per claim, in the same order, each with "statement" (the \
claim, copied), "verdict" ("yes" = hallucinated, "no" = not hallucinated) and "reason" \
(one short sentence).
3. "reason": two or three sentences for the developer that name the hallucinated claims \
and why, or say that every claim is backed by the context. Do not give a numeric score.

{_JUDGING_RULES}

{_DATA_RULE}

Answer with JSON only: {{"claims": ["..."], "verdicts": [{{"statement": "...", "verdict": \
"no", "reason": "..."}}], "reason": "..."}}"""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsWording:
    """What a grounding scorer says that the other does not: both judge the output's claims
    against the context (the same claims request, the same logprob question), in their own
    words. In a template, ``{yes}``, ``{no}`` and ``{unsure}`` count the verdicts that say
    that word, and ``{total}`` the claims.

    Attributes:
        one_call_schema: The one-call answer's schema, where it is not the derived one.
        decide: What the verdict prompt asks of each claim.
        found: The reason prompt's finding (a template; ``{score}`` and ``{scale}`` too).
        explain: What the reason prompt asks the judge to name.
        attribute: The reason prompt's name for a verdict's word.
        only: The reason for a single claim, by its verdict; its keys, in order, are the
            verdict words the verdict prompt offers.
        backed: The verdict that the context backs a claim.
        unbacked: The verdict a logprob "no" (not everything supported) gives the output.
        all_backed: The reason when every claim is backed (a template); ``share`` otherwise.
        empty: Why an empty output gets its score; ``no_claims``: one without claims.
        logprob: The logprob reason's finding: ``{unsupported}`` (or ``{supported}``), the
            judge's probability that the context does not (does) back every claim.
    """

    verdict_system: str
    reason_system: str
    one_call_system: str
    one_call_schema: type[BaseModel] | None = None
    decide: str
    found: str
    explain: str
    attribute: str
    only: Mapping[str, str]
    backed: str
    unbacked: str
    all_backed: str
    share: str
    empty: str
    no_claims: str
    logprob: str

    def spec(self, **own: Any) -> JudgeSpec:
        """The grounding scorer in these words, ``own`` the rest of its spec: the output's
        claims (the same request for both scorers: a run's memo sends it once) judged
        against the context, in three steps, one call or one logprob word."""
        return JudgeSpec(
            family="grounding",
            items="claims",
            noun="claim",
            grounded=True,
            always_explain=True,
            extract=claims_extraction_step,
            prompts=JudgePrompts(
                verdict_system=self.verdict_system,
                reason_system=self.reason_system,
                one_call_system=self.one_call_system,
                verdict=self.verdict_prompt,
                reason=self.reason_prompt,
                one_call=_one_call_prompt,
                one_call_schema=self.one_call_schema,
            ),
            logprob=LogprobSpec(
                system=LOGPROB_SYSTEM,
                prompt=logprob_prompt,
                choices=LOGPROB_CHOICES,
                verdicts={"yes": self.backed, "no": self.unbacked},
                reason=self.logprob_reason,
            ),
            no_items_reason=self.no_claims_reason,
            count_reason=self.count_reason,
            **own,
        )

    def verdict_prompt(self, shown: Shown) -> str:
        words = " | ".join(f'"{word}"' for word in self.only)
        return (
            f"Decide for each claim in the <claims> block {self.decide}.\n\n"
            f"{shown.context.block}\n\n{item_blocks('claims', 'claim', shown.items)}\n\n"
            f"{one_per_item(len(shown.items), 'claim', 'claims')}, as JSON only: "
            f'{{"verdicts": [{{"statement": ..., "verdict": {words}, "reason": ...}}]}}.'
        )

    def reason_prompt(self, shown: Shown) -> str:
        verdicts, score = shown.verdicts, shown.score_text
        found = self._filled(self.found, verdicts, score=score, scale=f"{shown.scale:g}")
        listed = verdict_blocks(verdicts, "claim", word=self.attribute)
        return (
            f"{found}\n\n<verdicts>\n{listed}\n</verdicts>\n\n"
            f'Explain the score. Start with "The score is {score} because", name the '
            f"{self.explain}."
        )

    def count_reason(self, ctx: StepContext) -> str:
        verdicts = ctx.analyze_step_result["verdicts"]
        total = len(verdicts)
        if not context_items(ctx):
            what = (
                "no context was given, so none of the "
                f"{'1 claim' if total == 1 else f'{total} claims'} can be backed by it"
            )
        elif total == 1:
            what = self.only[verdicts[0]["verdict"]]
        elif all(verdict["verdict"] == self.backed for verdict in verdicts):
            what = self.all_backed.format(total=total)
        else:
            what = self._filled(self.share, verdicts)
        return f"The score is {fmt(ctx.score)} because {what}."

    def no_claims_reason(self, ctx: StepContext) -> str:
        why = self.no_claims if ctx.output_text.strip() else self.empty
        return f"The score is {fmt(ctx.score)} because {why}."

    def logprob_reason(self, ctx: StepContext, unsupported: float) -> str:
        score = fmt(ctx.score)
        if not ctx.flags.get("verdict_from_logprobs"):
            word = "no" if unsupported >= 0.5 else "yes"
            return (
                f"The score is {score} because the judge answered {word} to whether the "
                "context supports every statement (it gave no token probabilities, so the "
                "score is 0 or the scale)."
            )
        finding = self.logprob.format(unsupported=unsupported, supported=1 - unsupported)
        return (
            f"The score is {score} because the judge puts a probability of {finding} (one "
            "word, read from its token probabilities)."
        )

    def _filled(self, template: str, verdicts: Sequence[Mapping[str, Any]], **more: str) -> str:
        counted = tally(verdicts)
        counts = {word: counted[word] for word in self.only}
        return template.format(total=len(verdicts), **counts, **more)


def _one_call_prompt(shown: Shown) -> str:
    return (
        "Check the text in the <output> block against the <context> block: list its claims, "
        "give one verdict per claim, and explain the result.\n\n"
        f"{shown.context.block}\n\n"
        f"{block('output', shown.output)}\n\n"
        'Answer with JSON only: {"claims": [...], "verdicts": [...], "reason": "..."}.'
    )


# -- logprob mode: one word on the whole output ------------------------------------------------

# The good word first: the question asks whether the context supports every statement, so
# "yes" is good (a "yes" that means "bad" confuses small judges).
LOGPROB_CHOICES = ("yes", "no")

# One sentence, no rules: chosen over a rules prompt by leave-one-set-out over four labelled
# sets (docs/evals/judge-quality.md), it ranks better on every set, holds up better on data it
# was not chosen on, and costs a quarter to a half of the tokens.
LOGPROB_SYSTEM = "You check whether an answer is supported by a context."


def logprob_prompt(output: str, context: str, question: str | None) -> str:
    """The logprob-mode prompt: is every statement of ``output`` supported by ``context``?
    ``question`` comes first where there is one: a short answer ("Arthur's Magazine") only
    makes claims with its question. No markup to quote: the reply is one of two words.

    Example:
        >>> print(logprob_prompt("Paris.", "Paris is the capital of France.", "Capital?"))
        Context:
        Paris is the capital of France.
        <BLANKLINE>
        Question: Capital?
        <BLANKLINE>
        Answer: Paris.
        <BLANKLINE>
        Is every statement in the answer supported by the context? Answer yes or no.
    """
    question = (question or "").strip()
    asked = f"Question: {question}\n\n" if question else ""
    return (
        f"Context:\n{context}\n\n{asked}Answer: {output}\n\n"
        "Is every statement in the answer supported by the context? Answer yes or no."
    )
