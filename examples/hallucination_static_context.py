"""Score an answer about the first iPhone against known facts (a static context).

Runs against any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama):

    export OPENAI_API_KEY=sk-...                      # or a dummy key for a local server
    export OPENAI_BASE_URL=http://127.0.0.1:8000/v1   # leave unset for api.openai.com
    python examples/hallucination_static_context.py --model gpt-4o-mini

The model may also come from ``LIVESCORE_JUDGE_MODEL``. Try ``--judge-mode one_call`` for a single
judge call per score, or ``--output "..."`` to score your own text.
"""

from __future__ import annotations

import argparse
import os
import sys

from livescore import JudgeConfigError, ScorerRunError
from livescore.scorers import create_hallucination_scorer

CONTEXT = [
    "The first iPhone was announced on January 9, 2007.",
    "It was released on June 29, 2007.",
    "Steve Jobs introduced it at Macworld.",
]

# Two facts right, one date wrong, one claim the context does not mention.
OUTPUT = (
    "Steve Jobs introduced the first iPhone at Macworld on January 9, 2007. "
    "It went on sale in June 2008 and sold one million units in its first weekend."
)


def main(argv: list[str] | None = None) -> int:
    """Score :data:`OUTPUT` against :data:`CONTEXT` and print the result; returns an exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default=os.environ.get("LIVESCORE_JUDGE_MODEL"),
        help="judge model as the server names it ('openai/' prefix optional); "
        "default: $LIVESCORE_JUDGE_MODEL",
    )
    parser.add_argument("--judge-mode", choices=["three_step", "one_call"], default="three_step")
    parser.add_argument("--output", default=OUTPUT, help="the answer to score")
    args = parser.parse_args(argv)
    if not args.model:
        parser.error("give the judge model with --model or LIVESCORE_JUDGE_MODEL")
    model = args.model if args.model.startswith("openai/") else f"openai/{args.model}"

    try:
        scorer = create_hallucination_scorer(
            model=model, context=CONTEXT, judge_mode=args.judge_mode
        )
        result = scorer.run_sync(
            {"input": "Tell me about the first iPhone.", "output": args.output}
        )
    except JudgeConfigError as exc:
        print(f"judge configuration: {exc}", file=sys.stderr)
        return 2
    except ScorerRunError as exc:
        print(f"scoring failed in step {exc.step!r} ({exc.error_type}): {exc}", file=sys.stderr)
        return 1

    if result.status == "skipped":
        print(f"not scorable: {result.reason}")
        return 0
    print(f"score:  {result.score} ({result.label})")
    print("claims:")
    for verdict in result.analyze_step_result["verdicts"]:
        mark = "HALLUCINATED" if verdict["verdict"] == "yes" else "supported"
        print(f"  - [{mark}] {verdict['statement']}  ({verdict['reason']})")
    print(f"reason: {result.reason}")
    print(f"judge:  {result.usage.calls} call(s), {result.usage.total_tokens} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
