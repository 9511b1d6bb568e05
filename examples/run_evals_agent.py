"""Evaluate a LangChain agent over a small dataset with ``run_evals``.

The agent (``langchain.agents.create_agent``) answers questions about cities with a real
tool, ``city_facts``; ``run_evals`` runs it on every item and scores each run with the same
scorers as live scoring: keyword coverage (code) and hallucination (an LLM judge checking the
answer against the tool results of that run, exactly as live).

    python examples/run_evals_agent.py                              # keyword coverage only
    export OPENAI_BASE_URL=http://127.0.0.1:8000/v1                 # any OpenAI-compatible server
    python examples/run_evals_agent.py --model openai/gpt-4o-mini   # + hallucination
    python examples/run_evals_agent.py --agent-model openai/gpt-4o-mini  # a real agent model
                                                                    # (pip install langchain-openai)

Without ``--agent-model`` a scripted chat model plays the agent's model: it really calls the
tool and answers from its result, and adds one claim the tool never said (Lyon's "third
largest airport in Europe") so the hallucination scorer has something to find.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from livescore import (
    EvalResult,
    JudgeConfigError,
    Scorer,
    get_run_context,
    run_evals_sync,
    write_report,
)
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer

FACTS = {
    "lyon": {"country": "France", "population": 522_000, "river": ["Rhône", "Saône"]},
    "porto": {"country": "Portugal", "population": 232_000, "river": ["Douro"]},
    "ghent": {"country": "Belgium", "population": 265_000, "river": ["Scheldt", "Leie"]},
}

DATA = [
    {"input": "Which rivers flow through Lyon?", "id": "lyon"},
    {"input": "How many people live in Porto?", "id": "porto"},
    {"input": "In which country is Ghent, and which rivers run through it?", "id": "ghent"},
]

UNSUPPORTED = "Lyon also has the third largest airport in Europe."


@tool
def city_facts(city: str) -> dict[str, Any]:
    """Facts about a city: country, population, rivers."""
    facts = FACTS.get(city.strip().lower())
    return {"city": city, **facts} if facts else {"error": f"no facts about {city!r}"}


def scripted_turn(messages: list[BaseMessage]) -> AIMessage:
    """The scripted model's turn: call city_facts for the city asked about, then answer."""
    if not isinstance(messages[-1], ToolMessage):
        question = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
        city = next(name for name in FACTS if name in question.lower())
        call = {"name": "city_facts", "args": {"city": city.title()}, "id": f"call_{city}"}
        return AIMessage(content="", tool_calls=[call])
    facts = json.loads(str(messages[-1].content))
    rivers = " and ".join(facts["river"])
    several = len(facts["river"]) > 1
    answer = (
        f"{facts['city']} is in the country of {facts['country']}, and about "
        f"{facts['population']:,} people live there. The river{'s' if several else ''} {rivers} "
        f"{'run' if several else 'runs'} through {facts['city']}."
    )
    if facts["city"] == "Lyon":
        answer += f" {UNSUPPORTED}"
    return AIMessage(content=answer)


def build_agent(agent_model: str | None) -> Any:
    """The city agent, with a real chat model when ``agent_model`` is given."""
    if agent_model:
        from langchain_openai import ChatOpenAI  # pip install langchain-openai

        model: Any = ChatOpenAI(model=agent_model.removeprefix("openai/"), temperature=0)
    else:
        from livescore_langchain.testing import ScriptedChatModel

        # Two turns per question (call the tool, then answer), each decided by scripted_turn.
        model = ScriptedChatModel(responses=[scripted_turn] * (2 * len(DATA)))
    return create_agent(model, tools=[city_facts], name="city-agent")


def build_scorers(judge_model: str | None, mode: str) -> list[Scorer]:
    scorers = [create_keyword_coverage_scorer()]
    if judge_model:
        model = judge_model if "/" in judge_model else f"openai/{judge_model}"
        scorers.insert(
            0,
            # Ground truth: what the tools returned in this very run (an item's own
            # "context" would win), as in live scoring.
            create_hallucination_scorer(model=model, get_context=get_run_context, judge_mode=mode),  # type: ignore[arg-type]
        )
    return scorers


def print_result(result: EvalResult) -> None:
    for item in result.items:
        print(f"\n[{item.id}] {item.input_text}")
        if item.error:
            print(f"  agent failed: {item.error}")
            continue
        print(f"  answer: {item.output_text}")
        for scorer_id, score in item.scores.items():
            shown = f"{score.score:.2f}" if score.score is not None else score.status
            label = f" ({score.label})" if score.label else ""
            print(f"  {scorer_id}: {shown}{label}")
            if score.reason:
                print(f"    {score.reason}")
    print("\nsummary")
    for scorer_id, agg in result.scores.items():
        mean = f"{agg.mean:.2f}" if agg.mean is not None else "–"
        print(
            f"  {scorer_id}: mean {mean}, scored {agg.scored}, failed {agg.failed}, "
            f"skipped {agg.skipped}, judge calls {agg.usage.calls}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default=os.environ.get("LIVESCORE_JUDGE_MODEL"),
        help="hallucination judge 'openai/<model>' (default: $LIVESCORE_JUDGE_MODEL)",
    )
    parser.add_argument("--judge-mode", choices=["three_step", "one_call"], default="three_step")
    parser.add_argument(
        "--agent-model",
        default=os.environ.get("LIVESCORE_AGENT_MODEL"),
        help="the agent's chat model 'openai/<model>' (default: a scripted model)",
    )
    parser.add_argument("--report", help="also write a self-contained HTML report here")
    args = parser.parse_args(argv)

    try:
        scorers = build_scorers(args.model, args.judge_mode)
    except JudgeConfigError as exc:
        print(f"judge configuration: {exc}", file=sys.stderr)
        return 2
    if not args.model:
        print("No judge model given (--model): hallucination is not scored, keyword coverage is.")

    result = run_evals_sync(DATA, scorers, target=build_agent(args.agent_model))
    print_result(result)
    if args.report:
        write_report(result, args.report, title="city agent evaluation")
        print(f"\nreport: {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
