"""How many of the question's keywords does the agent's answer cover?

Three questions go to an agent; ``run_evals`` scores each answer with the keyword coverage
scorer and prints the score, label and reason of each, then the mean. Keyword coverage is
plain code (no judge, no cost), so by default the agent is a small deterministic function.
To score a real model's answers instead, point the example at any OpenAI-compatible server:

    python examples/keyword_coverage.py                     # the built-in agent
    export OPENAI_API_KEY=sk-...                             # or a dummy key for a local server
    export OPENAI_BASE_URL=http://127.0.0.1:8000/v1          # unset: api.openai.com
    python examples/keyword_coverage.py --agent-model gpt-4o-mini

The agent model may also come from ``LIVESCORE_AGENT_MODEL``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable

from livescore import ItemResult, run_evals_sync
from livescore.scorers import create_keyword_coverage_scorer

DATA = [
    {"input": "JavaScript frameworks like React and Vue"},
    {"input": "TypeScript offers interfaces, generics, and type inference"},
    {
        "input": "Machine learning models require data preprocessing, feature engineering, "
        "and hyperparameter tuning"
    },
]

# What the built-in agent says: one full answer, two that leave keywords out.
ANSWERS = {
    DATA[0]["input"]: (
        "The most popular JavaScript framework choices are React.js and Vue.js. React "
        "focuses on components; Vue offers a gentle learning curve."
    ),
    DATA[1]["input"]: (
        "TypeScript adds static typing to JavaScript: you describe object shapes with an "
        "interface, write reusable code with generic functions, and the compiler infers types "
        "for you when you leave annotations out."
    ),
    DATA[2]["input"]: (
        "A machine learning model is only as good as its data. Preprocess the data first "
        "(cleaning, scaling), then engineer features, and finally tune the hyperparameters "
        "with cross-validation."
    ),
}


def faq_agent(question: str) -> str:
    """The built-in agent: a canned answer per question."""
    return ANSWERS.get(question, "Sorry, I can only answer the example questions.")


def model_agent(model: str) -> Callable[[str], Awaitable[str]]:
    """An agent that asks ``model`` on the OpenAI-compatible server of the environment."""
    from openai import AsyncOpenAI

    async def answer(question: str) -> str:
        # A client per question, closed on the event loop it ran on. A local server needs
        # no key, but the client insists on one.
        async with AsyncOpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "unused") as client:
            reply = await client.chat.completions.create(
                model=model.removeprefix("openai/"),
                messages=[
                    {"role": "system", "content": "Answer in three or four sentences."},
                    {"role": "user", "content": question},
                ],
            )
        return reply.choices[0].message.content or ""

    return answer


def print_item(item: ItemResult) -> None:
    """``on_item_complete``: print one item's score, label and reason."""
    if item.error is not None:
        print(f"[{item.index}] agent failed: {item.error}")
        return
    result = item.scores["keyword-coverage"]
    if not result.ok:
        print(f"[{item.index}] {result.status}: {result.error or result.reason}")
        return
    print(f"[{item.index}] {item.input}")
    print(f"    answer: {item.output}")
    print(f"    score:  {result.score:.2f} ({result.label})")
    print(f"    reason: {result.reason}")


def main(argv: list[str] | None = None) -> int:
    """Run the example; returns an exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--agent-model",
        default=os.environ.get("LIVESCORE_AGENT_MODEL"),
        help="answer with this model on the OpenAI-compatible server of OPENAI_BASE_URL "
        "(default: $LIVESCORE_AGENT_MODEL; none: the built-in agent)",
    )
    args = parser.parse_args(argv)

    scorer = create_keyword_coverage_scorer()
    target = model_agent(args.agent_model) if args.agent_model else faq_agent
    result = run_evals_sync(DATA, [scorer], target=target, on_item_complete=print_item)

    aggregate = result.scores[scorer.id]
    if aggregate.mean is None:
        print("no scores")
        return 1
    print(f"mean keyword coverage: {aggregate.mean:.2f} over {aggregate.scored} answers")
    return 0 if aggregate.scored == len(DATA) else 1


if __name__ == "__main__":
    sys.exit(main())
