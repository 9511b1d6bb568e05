"""The LLM tool-call accuracy scorer: were the agent's tool choices right for the request?
The judge-based sibling of :func:`~livescore.scorers.create_tool_call_accuracy_scorer`."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, create_model

from livescore._catalog import ScorerOptions, catalog_entry, split_names
from livescore._text import DEFAULT_MAX_TEXT_CHARS
from livescore._tool_calls import RecordedCall, describe_calls, read_tool_calls
from livescore.judges import Judge
from livescore.otel import attributes as A
from livescore.pii import RedactSpec
from livescore.scorers._judged import AnalysisJudging, JudgeMode, fmt, round2
from livescore.scorers._prompting import block, data_rule, one_per_item, quote
from livescore.scoring import CalibrationSpec, NotScorable, PromptStep, Scorer, StepContext

__all__ = (
    "AvailableTool",
    "ToolCallEvaluation",
    "ToolCallEvaluations",
    "ToolCallOneCallAnswer",
    "create_tool_call_accuracy_scorer_llm",
)

_ARGS_CHARS = 500  # per call: enough to see what was asked, not a payload


@dataclass(frozen=True, slots=True)
class AvailableTool:
    """A tool the agent could call: its name and what it does."""

    name: str
    description: str = ""

    @classmethod
    def of(cls, tool: object) -> AvailableTool:
        """Read a tool from a ``"name: description"`` string, a mapping (``name`` or ``id``,
        ``description``), an object with ``name`` and ``description`` (a LangChain tool), or
        a function (its name and the first line of its docstring).

        Example:
            >>> AvailableTool.of("get_weather: the weather in a city")
            AvailableTool(name='get_weather', description='the weather in a city')
        """
        name: object
        description: object
        if isinstance(tool, str):
            name, _, description = tool.partition(":")
        elif isinstance(tool, Mapping):
            name, description = tool.get("name") or tool.get("id"), tool.get("description")
        elif hasattr(tool, "name"):
            name, description = tool.name, getattr(tool, "description", "")
        elif callable(tool):
            name = getattr(tool, "__name__", "")
            description = (inspect.getdoc(tool) or "").split("\n", 1)[0]
        else:
            raise TypeError(
                "each available tool must be a 'name: description' string, a mapping with "
                f"name and description, a tool object or a function, not {type(tool).__name__}"
            )
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"an available tool has no name: {tool!r}")
        return cls(name.strip(), str(description or "").strip())


class ToolCallEvaluation(BaseModel):
    """One tool call: was it appropriate for the request (Mastra's fields)."""

    tool_called: str
    was_appropriate: bool
    reasoning: str


class ToolCallEvaluations(BaseModel):
    """The analysis answer: one evaluation per call, and the tools that were missing.

    Each scorer narrows ``missing_tools`` to the names of its available tools (an enum in
    the JSON schema): a judge with structured output cannot name a tool that does not
    exist, and one without it gets a corrective retry."""

    evaluations: list[ToolCallEvaluation]
    missing_tools: list[str]


class ToolCallOneCallAnswer(ToolCallEvaluations):
    """The one-call answer: the evaluations, the missing tools, and the reason."""

    reason: str


def _with_tool_names(schema: type[BaseModel], names: Sequence[str]) -> type[BaseModel]:
    # The same name and fields, with missing_tools limited to the available tools.
    names_type: Any = Literal[tuple(names)]  # a Literal built at run time
    return create_model(
        schema.__name__,
        __base__=schema,
        __doc__=schema.__doc__,
        missing_tools=(list[names_type], ...),
    )


# -- prompts ----------------------------------------------------------------------------------

_TAGS = ("input", "output", "tools", "tool", "tool_calls", "tool_call")

_RULES = """\
Judge the tool choices against what the user explicitly asked:
- A call is appropriate when it serves the request directly: the tool provides what was \
asked, or a step the request needs. A call that is merely related, or helpful for \
something the user did not ask, is not appropriate. A failed call is judged by the \
choice of tool, not by its failure.
- "missing_tools": available tools the request clearly needed that the agent did not call \
(names exactly as listed). None when the calls cover the request.
- With no call at all: if the request was specific and a listed tool could serve it, \
that tool is missing; if the request was too vague to act on and the answer asks for \
what is needed, no tool is missing."""

ANALYZE_SYSTEM = f"""\
You evaluate whether an AI agent chose the right tools for a user's request.

{_RULES}

{data_rule(_TAGS)}

Return exactly one evaluation per tool call, in the order of the calls, each with \
"tool_called" (its name), "was_appropriate" (true or false) and "reasoning" (one short \
sentence); then "missing_tools".

Answer with JSON only: {{"evaluations": [{{"tool_called": "...", "was_appropriate": true, \
"reasoning": "..."}}], "missing_tools": []}}"""

REASON_SYSTEM = f"""\
You explain the result of a tool-selection check to the developer of an AI agent, in one \
or two plain sentences, no lists, no JSON.

{data_rule(_TAGS)}"""

ONE_CALL_SYSTEM = f"""\
You evaluate whether an AI agent chose the right tools for a user's request, and explain, \
in one JSON answer.

{_RULES}

"evaluations": exactly one per tool call, in the order of the calls, each with \
"tool_called", "was_appropriate" and "reasoning". "missing_tools": as above. "reason", \
last: one or two sentences for the developer. Do not give a numeric score.

{data_rule(_TAGS)}

Answer with JSON only: {{"evaluations": [...], "missing_tools": [], "reason": "..."}}"""


def _calls_block(calls: Sequence[RecordedCall]) -> str:
    lines = []
    for i, call in enumerate(calls, start=1):
        args = json.dumps(call.args, ensure_ascii=False, default=str)
        if len(args) > _ARGS_CHARS:
            args = args[:_ARGS_CHARS] + "…"
        outcome = "succeeded" if call.ok else f"failed: {call.error}"
        lines.append(
            f'<tool_call index="{i}" name="{quote(call.name)}">arguments: {quote(args)}; '
            f"{quote(outcome)}</tool_call>"
        )
    body = "\n".join(lines) or "(the agent called no tool)"
    return f"<tool_calls>\n{body}\n</tool_calls>"


# -- the scorer -------------------------------------------------------------------------------


def _calls(ctx: StepContext) -> list[RecordedCall]:
    return cast(list[RecordedCall], ctx.state["calls"])


class _ToolChoices(AnalysisJudging):
    """The LLM tool-call accuracy scorer's steps, for one list of available tools."""

    name = "tool-call-accuracy-llm"
    reason_system = REASON_SYSTEM
    description = "Whether the agent called the right tools for the request (LLM judge)"

    def __init__(self, tools: list[AvailableTool]) -> None:
        names = [tool.name for tool in tools]
        self.analysis_schema = _with_tool_names(ToolCallEvaluations, names)
        self.one_call_schema = _with_tool_names(ToolCallOneCallAnswer, names)
        tools_lines = "\n".join(
            f'<tool name="{quote(t.name)}">{quote(t.description) or "(no description)"}</tool>'
            for t in tools
        )
        self.tools_block = f"<tools>\n{tools_lines}\n</tools>"

    def preprocess(self, ctx: StepContext) -> dict[str, Any]:
        # Before any call; a run without user text at all is not scorable (StepContext's rule).
        if not ctx.input_text.strip():
            raise NotScorable("the input is empty: no request to judge the tool calls by")
        calls = ctx.state["calls"] = read_tool_calls(ctx.run)
        return {
            "tool_calls": [call.to_dict() for call in calls],
            "actual_tools": [call.name for call in calls],
        }

    def analysis_prompt(self, ctx: StepContext, one_call: bool) -> str:
        calls = _calls(ctx)
        if calls:
            count = one_per_item(len(calls), "call", "calls", verb="give", answer="evaluation")
            count += ', then "missing_tools"'
        else:
            count = 'The agent called no tool: give an empty "evaluations" list and decide '
            count += '"missing_tools"'
        if one_call:
            shape = '{"evaluations": [...], "missing_tools": [...], "reason": "..."}'
        else:
            shape = '{"evaluations": [{"tool_called": ..., "was_appropriate": true | false, '
            shape += '"reasoning": ...}], "missing_tools": [...]}'
        return (
            "Evaluate the tool calls in the <tool_calls> block, made by an agent for the user's "
            "request in the <input> block, with the tools in the <tools> block available; its "
            f"final answer is in the <output> block.\n\n{block('input', ctx.input_text)}\n\n"
            f"{self.tools_block}\n\n{_calls_block(calls)}\n\n{block('output', ctx.output_text)}"
            f"\n\n{count}, as JSON only: {shape}."
        )

    def check_count(self, answer: Any, ctx: StepContext) -> None:
        expected = len(_calls(ctx))
        if len(answer.evaluations) != expected:
            raise ValueError(
                f"expected exactly {expected} evaluations, one per tool call in the given "
                f"order, but got {len(answer.evaluations)}"
            )

    def analyze(self, one_call: bool) -> PromptStep[Any]:
        return PromptStep(
            description=(
                "Judge each tool call, find missing tools, and explain"
                if one_call
                else "Judge each tool call and find missing tools"
            ),
            output_schema=self.one_call_schema if one_call else self.analysis_schema,
            system=ONE_CALL_SYSTEM if one_call else ANALYZE_SYSTEM,
            create_prompt=lambda ctx: self.analysis_prompt(ctx, one_call),
            validate=self.check_count,
            parse=self.keep,
        )

    def analysis_of(self, answer: Any, ctx: StepContext) -> dict[str, Any]:
        evaluations = [
            # The call decides which tool an evaluation is about, not the judge's copy.
            {**evaluation.model_dump(), "tool_called": call.name}
            for evaluation, call in zip(answer.evaluations, _calls(ctx), strict=True)
        ]
        return {
            "evaluations": evaluations,
            "missing_tools": list(dict.fromkeys(answer.missing_tools)),
        }

    def score(self, ctx: StepContext) -> float:
        analysis = ctx.analyze_step_result
        total = len(analysis["evaluations"])
        appropriate = sum(1 for e in analysis["evaluations"] if e["was_appropriate"])
        missing = len(analysis["missing_tools"])
        ctx.flags["tool_calls_total"] = total
        ctx.flags["tool_calls_appropriate"] = appropriate
        ctx.flags["tools_missing"] = missing
        ctx.attributes[A.LIVESCORE_TOOL_CALLS_TOTAL] = total
        ctx.attributes[A.LIVESCORE_TOOL_CALLS_APPROPRIATE] = appropriate
        ctx.attributes[A.LIVESCORE_TOOLS_MISSING] = missing
        if total == 0:
            return 0.0 if missing else 1.0
        return round2(appropriate / (total + missing))

    def label(self, score: float) -> str:
        return "correct" if score >= 1 else "partial" if score > 0 else "incorrect"

    def reason_prompt(self, ctx: StepContext) -> str:
        analysis, score_text = ctx.analyze_step_result, fmt(ctx.score)
        items = "\n".join(
            f'<tool_call name="{quote(e["tool_called"])}" '
            f'appropriate="{str(e["was_appropriate"]).lower()}">{quote(e["reasoning"])}</tool_call>'
            for e in analysis["evaluations"]
        )
        missing = ", ".join(quote(t) for t in analysis["missing_tools"]) or "none"
        return (
            f"A tool-selection check scored an agent {score_text} on a scale from 0 to 1 "
            "(appropriate calls over calls plus missing tools).\n\n"
            f"{block('input', ctx.input_text)}\n\n<tool_calls>\n{items or '(none)'}\n"
            f"</tool_calls>\nMissing tools: {missing}\n\n"
            f'Explain the score in one sentence that starts with "The score is {score_text} '
            'because".'
        )

    def summary(self, ctx: StepContext) -> str:
        calls, missing = _calls(ctx), ctx.analyze_step_result["missing_tools"]
        if not calls and missing:
            what = f"the agent called no tool although the request needed {', '.join(missing)}"
        elif not calls:
            what = "the agent rightly called no tool"
        else:
            appropriate = ctx.flags["tool_calls_appropriate"]
            what = f"{appropriate} of {len(calls)} calls were appropriate ({describe_calls(calls)})"
            if missing:
                verb = "was" if len(missing) == 1 else "were"
                what += f" and {', '.join(missing)} {verb} missing"
        return f"The score is {fmt(ctx.score)} because {what}."


def create_tool_call_accuracy_scorer_llm(
    *,
    model: str | Judge,
    available_tools: Sequence[object],
    judge_mode: JudgeMode = "three_step",
    id: str = "tool-call-accuracy-llm",
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    judge_options: Mapping[str, Any] | None = None,
    redact: RedactSpec | None = None,
    calibration: CalibrationSpec | None = None,
) -> Scorer:
    """Score whether the agent called the right tools for the request, judged by an LLM.

    Reads the run's tool calls (``Run.steps``: failed calls and requested-but-never-run
    calls included, as the code scorer does) and asks the judge whether each one served
    the user's explicit request, and which available tools the request needed but the
    agent did not call. Score = appropriate calls / (calls + missing tools): an agent that
    calls one right tool but skips a needed one gets 0.5 (Mastra ignores missing tools
    once any call was made). No call: 0 when a tool was needed, 1 when none was. Higher is
    better.

    Args:
        available_tools: The agent's tools, in the forms :meth:`AvailableTool.of` reads:
            ``"name: description"`` strings, mappings, LangChain tools or functions.

    The other arguments are those of :func:`~livescore.scorers.judge_scorer`.

    Returns:
        A scorer whose ``preprocess_step_result`` holds the run's ``"tool_calls"`` (each
        ``{"name", "ok", "error"}``) and ``"actual_tools"``, its ``analyze_step_result`` the
        ``"evaluations"`` (one per call) and ``"missing_tools"`` (available tools only: a judge
        without structured output gets a corrective retry), labelled ``correct`` (1),
        ``partial`` or ``incorrect`` (0). A run without a request is skipped.

    Raises:
        ValueError: No available tools, a tool without a name, or two tools with one name.
        TypeError: A tool in a form it cannot read.

    Example:
        >>> from livescore import Run, Step, ToolCall
        >>> from livescore.testing import ScriptedJudge
        >>> answer = {"evaluations": [{"tool_called": "get_weather", "was_appropriate": True,
        ...                            "reasoning": "Asked for."}], "missing_tools": []}
        >>> judge = ScriptedJudge([answer, "The score is 1 because it answers the request."])
        >>> scorer = create_tool_call_accuracy_scorer_llm(
        ...     model=judge, available_tools=["get_weather: current weather in a city",
        ...                                   "book_flight: book a flight"])
        >>> run = Run(input="Weather in Oslo?", output="Sunny.", steps=[
        ...     Step(kind="tool", tool_call=ToolCall("get_weather", args={"city": "Oslo"},
        ...                                          result="sunny"))])
        >>> result = scorer.run_sync(run)
        >>> result.score, result.label
        (1.0, 'correct')
    """
    arguments = dict(locals())  # passed on to AnalysisJudging.scorer, but for the tools
    del arguments["available_tools"]
    if isinstance(available_tools, str | bytes) or not isinstance(available_tools, Sequence):
        raise TypeError("available_tools must be a list of tools")
    tools = [AvailableTool.of(tool) for tool in available_tools]
    if not tools:
        raise ValueError("available_tools is empty: list the tools the agent can call")
    names = [tool.name for tool in tools]
    if len(set(names)) != len(names):
        raise ValueError(f"available_tools names a tool twice: {names}")
    return _ToolChoices(tools).scorer(**arguments)


# -- in the catalog ---------------------------------------------------------------------------


@catalog_entry(
    "tool-call-accuracy-llm",
    family="tools",
    summary="whether the agent called the right tools for the request, judged",
    needs_judge=True,
    argument="TOOLS: tool names separated by commas, or a JSON file of {name, description} objects",
    argument_required=True,
    factory="livescore.scorers.create_tool_call_accuracy_scorer_llm",
    span_attributes={
        "livescore.tool_calls.total": "tool calls judged",
        "livescore.tool_calls.appropriate": "tool calls that suit the request",
        "livescore.tools.missing": "tools the agent should have called and did not",
    },
    examples=("tool-call-accuracy-llm:search,book",),
)
def _build(argument: str | None, options: ScorerOptions) -> Scorer:
    assert argument is not None  # required
    path = Path(argument)
    tools: list[Any]
    if argument.endswith(".json") or path.is_file():
        try:
            tools = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read the tools file {argument!r}: {exc}") from None
        if not isinstance(tools, list):
            raise ValueError(f"{argument}: expected a JSON list of {{name, description}} objects")
    else:
        tools = split_names(argument, "tool-call-accuracy-llm")
    return create_tool_call_accuracy_scorer_llm(
        model=options.require_model(), available_tools=tools, judge_mode=options.judge_mode
    )
