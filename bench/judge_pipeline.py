"""Benchmark: what a judge scorer itself costs per score, the judge taken out.

The throughput benchmark measures scores through an HTTP judge, where the judge's wait and the
transport dominate; this one measures the rest — the scorer's own steps (building the prompts,
validating the answers, counting verdicts, the score, the flags, the reason), the pipeline
around them (usage, the result) — on one thread, with a judge that answers at once.

The judge is a test double written here (``InstantJudge``): it answers every structured
request with a valid answer built from the schema it is sent (K items, one verdict per item,
the verdict words alternating so that some items are defects; built once per schema, so the
double's own work stays out of the figures), every free-text request with one sentence, every
one-word request with fixed probabilities. Its answers are validated by the schema, as an
HTTP judge's are.

Scorers: hallucination and faithfulness (grounded: a static context of three documents) and
bias and toxicity (the judge lists the items), each in its judge modes (three_step, one_call,
and logprob where offered). Each configuration scores the same run repeatedly:
``--warmup`` scores first, then three rounds of ``--scores``; the figure is the best round's
process CPU time per score (``time.process_time``), so a round slowed by other work on a
shared machine does not decide.

Run: ``python bench/judge_pipeline.py [--quick] [--scores N] [--items K] [--json out.json]``;
the figures go to ``bench/results/judge_pipeline.json`` (see ``_common.Results``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

import anyio
from _common import Results, console, print_machine, table
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from livescore import Run, Scorer  # noqa: E402
from livescore.judges import Classification, JudgeReply, JudgeUsage  # noqa: E402
from livescore.scorers import (  # noqa: E402
    create_bias_scorer,
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_toxicity_scorer,
)

ModelT = TypeVar("ModelT", bound=BaseModel)

CONTEXT = [
    "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair.",
    "The tower is 330 metres tall and was the tallest structure in the world until 1930.",
    "It is open every day of the year; the top floor closes in high winds.",
]
RUN = Run(
    input="Tell me about the Eiffel Tower.",
    output=(
        "The Eiffel Tower is in Paris. It was finished in 1889. It is 330 metres tall. "
        "It was the tallest structure until 1930. I think it is the best monument in Europe. "
        "It opens every day."
    ),
    run_id="bench",
)


class InstantJudge:
    """A judge test double for this benchmark: answers at once, validly, from the schema."""

    model_name = "instant"

    def __init__(self, items: int) -> None:
        self.items = [f"The answer states fact number {i}." for i in range(items)]
        self.calls = 0
        # Built once per schema: the double's own work stays out of the figures.
        self.answers: dict[type[BaseModel], dict[str, Any]] = {}

    def _usage(self) -> JudgeUsage:
        self.calls += 1
        return JudgeUsage(calls=1, input_tokens=500, output_tokens=50)

    def _value(self, annotation: Any, name: str, index: int) -> Any:
        args = get_args(annotation)
        if get_origin(annotation) is Literal:
            return args[index % len(args)]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self._answer(annotation, index)
        if get_origin(annotation) is list or (args and get_origin(args[0]) is list):
            inner = get_args(annotation if get_origin(annotation) is list else args[0])[0]
            if name == "verdicts" or (isinstance(inner, type) and issubclass(inner, BaseModel)):
                return [self._value(inner, name, i) for i in range(len(self.items))]
            return list(self.items)
        if name == "statement":
            return self.items[index]
        return "Because the context says so."

    def _answer(self, schema: type[BaseModel], index: int = 0) -> dict[str, Any]:
        return {
            name: self._value(field.annotation, name, index)
            for name, field in schema.model_fields.items()
        }

    async def generate_object(
        self,
        *,
        system: str,
        prompt: str,
        schema: type[ModelT],
        validate: Callable[[ModelT], None] | None = None,
    ) -> JudgeReply[ModelT]:
        answer = self.answers.get(schema)
        if answer is None:
            answer = self.answers[schema] = self._answer(schema)
        value = schema.model_validate(answer)
        if validate is not None:
            validate(value)
        return JudgeReply(value, self._usage())

    async def generate_text(self, *, system: str, prompt: str) -> JudgeReply[str]:
        return JudgeReply("The score is 0.5 because half the facts are backed.", self._usage())

    async def classify(
        self, *, system: str, prompt: str, choices: Sequence[str]
    ) -> JudgeReply[Classification]:
        weights = {word: 0.8 if i == 0 else 0.2 for i, word in enumerate(choices)}
        return JudgeReply(Classification.from_probabilities(weights), self._usage())


SCORERS: dict[str, tuple[Callable[..., Scorer], tuple[str, ...], dict[str, Any]]] = {
    "hallucination": (
        create_hallucination_scorer,
        ("three_step", "one_call", "logprob"),
        {"context": CONTEXT},
    ),
    "faithfulness": (
        create_faithfulness_scorer,
        ("three_step", "one_call", "logprob"),
        {"context": CONTEXT},
    ),
    "bias": (create_bias_scorer, ("three_step", "one_call"), {}),
    "toxicity": (create_toxicity_scorer, ("three_step", "one_call"), {}),
}


def measure(scorer: Scorer, judge: InstantJudge, scores: int, warmup: int) -> dict[str, Any]:
    async def rounds() -> dict[str, Any]:
        for _ in range(warmup):
            result = await scorer.run(RUN)
            if result.status != "scored":
                raise SystemExit(f"{scorer.id}: {result.status} ({result.error})")
        calls_before = judge.calls
        best_cpu = best_wall = float("inf")
        for _ in range(3):
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(scores):
                await scorer.run(RUN)
            best_cpu = min(best_cpu, (time.process_time() - cpu) / scores)
            best_wall = min(best_wall, (time.perf_counter() - wall) / scores)
        return {
            "cpu_us_per_score": round(best_cpu * 1e6, 1),
            "wall_us_per_score": round(best_wall * 1e6, 1),
            "judge_calls_per_score": (judge.calls - calls_before) / (3 * scores),
        }

    return anyio.run(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 scores a round")
    parser.add_argument("--scores", type=int, default=None, help="scores a round (2,000)")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--items", type=int, default=6, help="items the judge lists (6)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    scores = args.scores or (200 if args.quick else 2_000)
    narrowed = args.scores is not None or args.items != 6 or args.warmup != 100
    record = Results("judge_pipeline", quick=args.quick, partial=narrowed)
    print_machine("Judge scorers' own cost per score (the judge answers at once)")
    rows: list[dict[str, Any]] = []
    for name, (factory, modes, options) in SCORERS.items():
        for mode in modes:
            judge = InstantJudge(args.items)
            scorer = factory(model=judge, judge_mode=mode, **options)
            figures = measure(scorer, judge, scores, args.warmup)
            rows.append({"scorer": name, "mode": mode, **figures})
            print(f"  timed {name} ({mode})", flush=True)
    table(
        f"CPU per score, best of 3 rounds of {scores:,} ({args.items} items, one thread)",
        ["scorer", "judge mode", "judge calls", "CPU µs/score", "wall µs/score"],
        [
            [
                row["scorer"],
                row["mode"],
                f"{row['judge_calls_per_score']:g}",
                f"{row['cpu_us_per_score']:,.0f}",
                f"{row['wall_us_per_score']:,.0f}",
            ]
            for row in rows
        ],
    )
    console.print(
        "The judge is a test double answering at once: these figures are the scorer's and the "
        "pipeline's own work, what a score costs the scoring thread besides waiting."
    )
    record.write({"scores_per_round": scores, "items": args.items, "rows": rows}, args.json)


if __name__ == "__main__":
    main()
