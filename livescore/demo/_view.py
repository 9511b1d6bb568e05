"""The demo's terminal trace view, built from the spans that were actually exported.

What the tree shows is what a tracing dashboard receives: the run's ``invoke_agent`` span,
its ``execute_tool`` children and the ``evaluation`` spans beneath it, with their
``gen_ai.evaluation.*`` attributes. The tool spans carry no arguments or results (content
stays out of spans by default), so those are joined in from the agent's own messages by
tool call id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.text import Text
from rich.tree import Tree

from livescore.otel import attributes as A
from livescore.runs import Run, get_assistant_message, get_user_message
from livescore.scoring import ScoreResult

if TYPE_CHECKING:  # the SDK is the application's; the demo only reads its finished spans
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = (
    "RunView",
    "ScoreView",
    "ToolView",
    "build_run_views",
    "render_run",
    "render_scored_run",
    "short",
)


def short(value: Any, limit: int = 110) -> str:
    """One line of at most ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class ToolView:
    """An ``execute_tool`` span, with the call's arguments and result from the messages."""

    name: str
    call_id: str | None
    failed: bool
    args: Any = None
    result: Any = None


@dataclass(slots=True)
class ScoreView:
    """An ``evaluation`` span's attributes."""

    scorer: str
    status: str
    score: float | None
    label: str | None
    explanation: str | None
    error_type: str | None
    skip_reason: str | None
    judge_calls: int
    judge_tokens: int
    claims_total: int | None
    claims_hallucinated: int | None
    span_id: str
    parent_span_id: str | None
    error: str | None = None  # why a score failed (from a ScoreResult; spans keep it apart)


@dataclass(slots=True)
class RunView:
    """One agent run as exported: its span, tool spans and evaluation spans."""

    name: str
    trace_id: str
    span_id: str
    tools: list[ToolView] = field(default_factory=list)
    scores: list[ScoreView] = field(default_factory=list)


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def _attrs(span: ReadableSpan) -> Mapping[str, Any]:
    return span.attributes or {}


def _text(attributes: Mapping[str, Any], key: str) -> str | None:
    return str(attributes[key]) if key in attributes else None


def _score_view(span: ReadableSpan) -> ScoreView:
    a = _attrs(span)
    value = a.get(A.GEN_AI_EVALUATION_SCORE_VALUE)
    calls = a.get(A.LIVESCORE_JUDGE_CALLS)
    tokens_in = a.get(A.LIVESCORE_JUDGE_INPUT_TOKENS) or 0
    tokens_out = a.get(A.LIVESCORE_JUDGE_OUTPUT_TOKENS) or 0
    total = a.get(A.LIVESCORE_CLAIMS_TOTAL)
    bad = a.get(A.LIVESCORE_CLAIMS_HALLUCINATED)
    return ScoreView(
        scorer=str(a.get(A.GEN_AI_EVALUATION_NAME, span.name)),
        status=str(a.get(A.LIVESCORE_STATUS, "scored")),
        score=float(value) if isinstance(value, int | float) else None,
        label=_text(a, A.GEN_AI_EVALUATION_SCORE_LABEL),
        explanation=_text(a, A.GEN_AI_EVALUATION_EXPLANATION),
        error_type=_text(a, A.ERROR_TYPE),
        skip_reason=_text(a, A.LIVESCORE_SKIP_REASON),
        judge_calls=int(calls) if isinstance(calls, int) else 0,
        judge_tokens=int(tokens_in) + int(tokens_out),
        claims_total=int(total) if isinstance(total, int) else None,
        claims_hallucinated=int(bad) if isinstance(bad, int) else None,
        span_id=_hex(span.context.span_id, 16) if span.context else "",
        parent_span_id=_hex(span.parent.span_id, 16) if span.parent else None,
    )


def build_run_views(
    spans: Sequence[ReadableSpan], tool_calls: Mapping[str, tuple[Any, Any]] | None = None
) -> list[RunView]:
    """Group exported spans into runs: agent span → tool spans and evaluation spans.

    Args:
        spans: Finished spans (from an in-memory exporter).
        tool_calls: ``call id → (args, result)`` from the agent's messages.
    """
    tool_calls = tool_calls or {}
    runs: dict[str, RunView] = {}
    for span in spans:
        if _attrs(span).get(A.GEN_AI_OPERATION_NAME) == A.OPERATION_INVOKE_AGENT and span.context:
            sid = _hex(span.context.span_id, 16)
            runs[sid] = RunView(
                name=str(_attrs(span).get(A.GEN_AI_AGENT_NAME, span.name)),
                trace_id=_hex(span.context.trace_id, 32),
                span_id=sid,
            )
    for span in spans:
        parent = _hex(span.parent.span_id, 16) if span.parent else None
        if parent not in runs:
            continue
        a = _attrs(span)
        operation = a.get(A.GEN_AI_OPERATION_NAME)
        if operation == A.OPERATION_EXECUTE_TOOL:
            call_id = a.get(A.GEN_AI_TOOL_CALL_ID)
            args, result = tool_calls.get(str(call_id), (None, None))
            runs[parent].tools.append(
                ToolView(
                    name=str(a.get(A.GEN_AI_TOOL_NAME, span.name)),
                    call_id=str(call_id) if call_id else None,
                    failed=A.ERROR_TYPE in a,
                    args=args,
                    result=result,
                )
            )
        elif operation == A.OPERATION_EVALUATION:
            runs[parent].scores.append(_score_view(span))
    for run in runs.values():
        run.scores.sort(key=lambda s: s.scorer)
    return list(runs.values())


def _score_line(score: ScoreView) -> Text:
    line = Text()
    line.append("evaluation ", style="bold magenta")
    line.append(score.scorer, style="bold")
    if score.status == "scored" and score.score is not None:
        bad = score.scorer.startswith("hallucination") and score.score > 0
        line.append(f"  score {score.score:.2f}", style="bold red" if bad else "bold green")
        if score.label:
            line.append(f"  label {score.label}", style="red" if bad else "green")
        if score.claims_total is not None:
            line.append(
                f"  claims {score.claims_hallucinated or 0}/{score.claims_total} unsupported",
                style="dim",
            )
    elif score.status == "skipped":
        line.append("  skipped", style="yellow")
    else:
        line.append(f"  failed ({score.error_type or 'error'})", style="bold red")
    if score.judge_calls:
        calls = score.judge_calls
        usage = f"  · {calls} judge call{'' if calls == 1 else 's'}, {score.judge_tokens} tokens"
        line.append(usage, style="dim")
    return line


def render_run(
    index: int,
    run: RunView,
    question: str | None,
    answer: str | None,
    *,
    reason_chars: int = 400,
) -> Tree:
    """A rich tree of one run: question, answer, tool calls, evaluation spans (``None`` for
    the question and the answer, with no tools, shows the run's header and scores only)."""
    tree = Tree(
        Text.assemble(
            (f"Run {index}  ", "bold"),
            (f"invoke_agent {run.name}", "bold cyan"),
            (f"  trace {run.trace_id[:16]}…", "dim"),
        )
    )
    if question is not None:
        tree.add(Text.assemble(("question  ", "bold"), question))
    if answer is not None:
        tree.add(Text.assemble(("answer    ", "bold"), answer))
    for tool in run.tools:
        node = Text.assemble(
            ("execute_tool ", "bold blue"),
            (tool.name, "bold"),
            (f"({short(tool.args, 60)})" if tool.args is not None else "", ""),
        )
        if tool.failed:
            node.append("  failed", style="red")
        branch = tree.add(node)
        if tool.result is not None:
            branch.add(Text("→ " + short(tool.result), style="dim"))
    if not run.scores:
        tree.add(Text("no evaluation span (scoring did not finish in time)", style="yellow"))
    for score in run.scores:
        branch = tree.add(_score_line(score))
        detail = score.explanation or score.skip_reason or score.error
        if detail:
            text = detail if len(detail) <= reason_chars else detail[: reason_chars - 1] + "…"
            branch.add(Text(text, style="italic"))
    return tree


def _score_view_of(result: ScoreResult) -> ScoreView:
    attributes = result.attributes
    total = attributes.get(A.LIVESCORE_CLAIMS_TOTAL)
    bad = attributes.get(A.LIVESCORE_CLAIMS_HALLUCINATED)
    failed = result.status == "failed"
    return ScoreView(
        scorer=result.scorer_id,
        status=result.status,
        score=result.score,
        label=result.label,
        explanation=result.reason if result.status == "scored" else None,
        error_type=result.error_type if failed else None,
        skip_reason=result.reason if result.status == "skipped" else None,
        judge_calls=result.usage.calls,
        judge_tokens=result.usage.input_tokens + result.usage.output_tokens,
        claims_total=total if isinstance(total, int) else None,
        claims_hallucinated=bad if isinstance(bad, int) else None,
        span_id="",
        parent_span_id=None,
        error=(result.error or result.error_type or "error") if failed else None,
    )


def render_scored_run(
    index: int, run: Run, results: Sequence[ScoreResult], *, first: bool = True
) -> Tree:
    """The demo's tree of a run, drawn from the run and its scores rather than from spans:
    the run's header (its name, trace), then, when ``first``, its question and answer
    (abbreviated) and tool calls, then each score with its label and reason (a failed one
    with why it failed). ``first=False`` draws the header and the scores only, for more
    scores of a run already shown.

    Example:
        >>> from rich.console import Console
        >>> from livescore.runs import Run
        >>> from livescore.scoring import ScoreResult
        >>> run = Run(input="Hi?", output="Hello.", name="greeter", trace_id="ab" * 16)
        >>> score = ScoreResult(run.run_id, "polite", score=1.0, label="yes", reason="Greets.")
        >>> Console(width=60).print(render_scored_run(1, run, [score]))
        Run 1  invoke_agent greeter  trace abababababababab…
        ├── question  Hi?
        ├── answer    Hello.
        └── evaluation polite  score 1.00  label yes
            └── Greets.
    """
    view = RunView(
        name=run.name or "agent",
        trace_id=(run.trace_id or "").lower().removeprefix("0x") or run.run_id,
        span_id=(run.span_id or "").lower(),
        scores=[_score_view_of(result) for result in results],
    )
    question = answer = None
    if first:
        for step in run.steps:
            call = step.tool_call
            if call is not None:
                view.tools.append(
                    ToolView(
                        name=call.name,
                        call_id=call.call_id,
                        failed=call.error is not None,
                        args=call.args,
                        result=call.result if call.error is None else call.error,
                    )
                )
        question = short(get_user_message(run) or run.input or "(no input)")
        answer = short(get_assistant_message(run) or run.output or "(no output)")
    return render_run(index, view, question, answer)
