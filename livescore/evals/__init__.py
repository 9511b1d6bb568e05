"""Offline evaluation: the live scorers over a dataset (``run_evals``), datasets, reports.

How :func:`~livescore.evals.run_evals` reads items and runs them:

Each item is a mapping with ``input`` (or ``question``, the benchmark files' name for
it) and any of ``output`` (a ready answer), ``ground_truth``, ``context`` (a string or
list of strings: static ground truth), ``id``, ``metadata`` and ``steps`` (the steps
behind a ready output, :class:`~livescore.runs.Step` objects or ``Run.to_dict`` step
dicts, for tool scorers). Any other key is kept in the item's metadata, and one
``UserWarning`` per call names every such key (a typo such as ``"inptu"`` shows up
there, also when it leaves the item without an input, which fails the item as
``invalid_item`` with an error naming it). A :class:`~livescore.Run` is accepted as an
item too. These are the rules ``livescore eval`` reads a dataset line by.

Conversations: an item with ``turns`` (a list of ``{"input", "output"}`` objects, each
with optional ``tool_calls``, read by :meth:`Conversation.from_turns
<livescore.runs.Conversation.from_turns>`; ``id`` becomes the conversation id) is a
whole conversation. Conversation scorers (``level="conversation"``) judge it whole, as
live when it goes quiet; run scorers judge its last turn. Its span (``eval_item``) has
a child span per turn (``eval_turn N``), both with ``gen_ai.conversation.id`` and
``session.id``; its conversation scores nest under the last turn's span and link to
every turn's. A conversation scorer given a plain item judges it as a conversation of
one turn. The outputs come from the data: with a ``target``, such an item fails
(``invalid_item``).

Context: the ground truth judge scorers read by default is
:func:`livescore.get_run_context`: the item's ``context`` when it has one (kept in
``run.metadata["context"]``), else the run's own evidence, i.e. the tool results and
retrieved documents of the agent's run, exactly as in live scoring.

Targets:
    * an agent an installed integration can run: with ``livescore-langchain``, a
      LangChain Runnable or ``create_agent`` agent, run through ``acapture_run`` so the
      scorers see its tool calls and results. A text input becomes
      ``{"messages": [{"role": "user", "content": text}]}`` when the runnable's input
      has ``messages`` (as an agent's does);
    * any callable ``(input) -> output``, sync (run in a worker thread) or async; it may
      return a :class:`~livescore.Run` to hand over its own steps;
    * ``None``: every item must carry ``output``. With a target, an item's ``output`` is
      ignored.

Every score goes through :meth:`Scorer.score <livescore.Scorer.score>`, the one
non-raising call: a target that raises, a malformed item or a failing scorer is
recorded on the item (``item.error``, ``item.scores[id].status == "failed"``, with the
failed step) and counted in the aggregates; nothing aborts the run.
``on_item_complete`` is called once per item in completion order; what it raises is
logged and kept in ``item.callback_error``, never fatal.

Tracing: with an OpenTelemetry SDK (``tracer_provider=`` or the global one), each item is
a traced run (an ``invoke_agent {name}`` span around the target, an ``eval_item`` span
for ready outputs, carrying ``livescore.eval.id`` and ``livescore.eval.item.index``) and
each score goes to the emitter (an evaluation span beneath it with
``livescore.source = "eval"``, exactly like live scores). Without an SDK nothing is
recorded.

What the command line does with its flags, ``run_evals`` does with arguments: a cost cap
with an estimate first (``max_cost``, :func:`~livescore.evals.estimate_cost`), a stop when
the judge is unreachable, running totals instead of every item (``keep_items=False``, with
:class:`~livescore.evals.ResultsFile` for the items), quality against labels
(:meth:`EvalResult.label_quality <livescore.evals.EvalResult.label_quality>`) and
calibration (``calibration=``, :func:`~livescore.evals.fit_calibration`).

Example:
    >>> from livescore import create_scorer
    >>> from livescore.evals import run_evals_sync
    >>> short = create_scorer(
    ...     id="short", description="1 when the answer is short",
    ...     generate_score=lambda ctx: float(len(ctx.output_text) < 20),
    ... )
    >>> run_evals_sync([{"input": "2+2?", "output": "4"}], [short]).scores["short"].mean
    1.0
"""

from livescore.evals._calibrate import calibrate_scorers, fit_calibration
from livescore.evals._compare import (
    BaselineError,
    Comparison,
    ItemChange,
    ScorerComparison,
    load_baseline,
    summary_markdown,
)
from livescore.evals._cost import CostEstimate, sample_indices
from livescore.evals._dataset import Dataset, DatasetProblem, load_dataset
from livescore.evals._labels import LabelQuality
from livescore.evals._quality import (
    BinaryQuality,
    SplitThreshold,
    binary_quality,
    cohen_kappa,
    split_threshold,
)
from livescore.evals._report import QualityRow, render_report, write_report
from livescore.evals._result import (
    EvalCollector,
    EvalResult,
    HistogramBin,
    ItemFailure,
    ItemResult,
    LabelledItem,
    ScoreAggregate,
    ScoreDistribution,
)
from livescore.evals._results_file import ResultsFile
from livescore.evals._run_evals import (
    OnItemComplete,
    Target,
    estimate_cost,
    run_evals,
    run_evals_sync,
)
from livescore.evals._targets import AgentTarget, TargetAdapter, resolve_target

__all__ = (
    "AgentTarget",
    "BaselineError",
    "BinaryQuality",
    "Comparison",
    "CostEstimate",
    "Dataset",
    "DatasetProblem",
    "EvalCollector",
    "EvalResult",
    "HistogramBin",
    "ItemChange",
    "ItemFailure",
    "ItemResult",
    "LabelQuality",
    "LabelledItem",
    "OnItemComplete",
    "QualityRow",
    "ResultsFile",
    "ScoreAggregate",
    "ScoreDistribution",
    "ScorerComparison",
    "SplitThreshold",
    "Target",
    "TargetAdapter",
    "binary_quality",
    "calibrate_scorers",
    "cohen_kappa",
    "estimate_cost",
    "fit_calibration",
    "load_baseline",
    "load_dataset",
    "render_report",
    "resolve_target",
    "run_evals",
    "run_evals_sync",
    "sample_indices",
    "split_threshold",
    "summary_markdown",
    "write_report",
)
