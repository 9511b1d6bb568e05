"""The scorer catalog: the scorers ``livescore eval --scorer NAME[:ARG]`` can build by name.

Each entry says what the scorer measures in one line, whether it needs a judge, what its
optional argument means, which way is better, and how to build it. The build function
imports its factory only when called, so the catalog costs nothing at import time.

Adding a scorer to the command line is one :func:`register_scorer` call in this module (or
in a plugin); the CLI reads the catalog and never names a scorer itself.

Example:
    >>> from livescore.scorers import build_scorer, scorer_catalog
    >>> [entry.name for entry in scorer_catalog()][:2]
    ['hallucination', 'keyword-coverage']
    >>> build_scorer("keyword-coverage:ground_truth").id
    'keyword-coverage'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from livescore.judges import Judge
    from livescore.scoring import Scorer

__all__ = (
    "CatalogEntry",
    "ScorerOptions",
    "build_scorer",
    "get_catalog_entry",
    "parse_scorer_spec",
    "register_scorer",
    "scorer_catalog",
)

JudgeMode = Literal["three_step", "one_call"]


@dataclass(frozen=True, slots=True)
class ScorerOptions:
    """What the command line resolved for every scorer it builds.

    Attributes:
        judge: The judge for entries that need one (``None`` when no model is configured;
            :func:`build_scorer` refuses judge entries then).
        mode: ``"three_step"`` or ``"one_call"`` for judge scorers that have both forms.

    Example:
        >>> ScorerOptions().mode
        'three_step'
    """

    judge: Judge | None = None
    mode: JudgeMode = "three_step"


BuildFunction = Callable[[str | None, ScorerOptions], "Scorer"]
"""``build(argument, options) -> Scorer``: ``argument`` is the text after ``NAME:``
(``None`` without one). Raise ``ValueError`` with a clear message for a bad argument."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One scorer the command line can build.

    Attributes:
        name: What users type after ``--scorer`` (``"keyword-coverage"``).
        summary: One line for ``--help``: what it measures.
        build: ``build(argument, options) -> Scorer``.
        needs_judge: Whether it calls an LLM judge (then ``options.judge`` is set).
        argument: What ``NAME:ARG`` means, for ``--help`` (``"REFERENCE: input or
            ground_truth"``); ``None`` when the scorer takes no argument.
        argument_required: Whether ``NAME`` alone is an error.
        higher_is_better: ``False`` for scorers where a high score is bad (hallucination):
            ``--fail-under`` applies to the others, ``--fail-over`` to these.
        score_range: The lowest and highest score it gives (thresholds are checked against
            it).
        predicts: The dataset label its score predicts: a 0/1 field that marks a defect
            (``"hallucinated"``, ``"toxic"``). On data with that label the CLI reports
            accuracy, F1 and AUROC for the scorer: where higher is worse a high score
            predicts the defect, where higher is better (faithfulness) a low one does.
    """

    name: str
    summary: str
    build: BuildFunction
    needs_judge: bool = False
    argument: str | None = None
    argument_required: bool = False
    higher_is_better: bool = True
    score_range: tuple[float, float] = (0.0, 1.0)
    predicts: str | None = None

    def usage(self) -> str:
        """``NAME``, ``NAME[:ARG]`` or ``NAME:ARG`` as typed on the command line."""
        if self.argument is None:
            return self.name
        meta = self.argument.split(":", 1)[0].strip() or "ARG"
        return f"{self.name}:{meta}" if self.argument_required else f"{self.name}[:{meta}]"


_CATALOG: dict[str, CatalogEntry] = {}


def register_scorer(entry: CatalogEntry, *, replace: bool = False) -> CatalogEntry:
    """Add ``entry`` to the catalog (a plugin may add its own scorers).

    Raises:
        ValueError: The name is taken (pass ``replace=True`` to override) or malformed.

    Example:
        >>> from livescore import create_scorer
        >>> entry = register_scorer(CatalogEntry(
        ...     name="doc-example-length", summary="1 for short answers",
        ...     build=lambda arg, opts: create_scorer(
        ...         id="doc-example-length", description="short answers",
        ...         generate_score=lambda ctx: float(len(ctx.output_text) < 20)),
        ... ))
        >>> build_scorer("doc-example-length").id
        'doc-example-length'
    """
    name = entry.name
    if not name or name != name.strip() or ":" in name or any(c.isspace() for c in name):
        raise ValueError(f"a catalog name is one word without ':', not {name!r}")
    low, high = entry.score_range
    if not low < high:
        raise ValueError(f"{name}: score_range must be (low, high) with low < high")
    if name in _CATALOG and not replace:
        raise ValueError(f"the scorer catalog already has {name!r}")
    _CATALOG[name] = entry
    return entry


def scorer_catalog() -> tuple[CatalogEntry, ...]:
    """Every registered entry, in registration order (the built-in ones first)."""
    return tuple(_CATALOG.values())


def get_catalog_entry(name: str) -> CatalogEntry:
    """The entry called ``name``.

    Raises:
        ValueError: No such entry; the message lists close names and every name.
    """
    try:
        return _CATALOG[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(_CATALOG), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(
            f"unknown scorer {name!r}{hint} (choose from {', '.join(_CATALOG)})"
        ) from None


def parse_scorer_spec(spec: str) -> tuple[CatalogEntry, str | None]:
    """Split ``"NAME[:ARG]"`` into its entry and argument, checking the argument's presence.

    Raises:
        ValueError: Unknown name, an argument for a scorer that takes none, or a missing
            required argument.

    Example:
        >>> entry, arg = parse_scorer_spec("keyword-coverage:ground_truth")
        >>> entry.name, arg
        ('keyword-coverage', 'ground_truth')
    """
    name, sep, argument = spec.strip().partition(":")
    entry = get_catalog_entry(name.strip())
    value: str | None = argument.strip() if sep else None
    if value == "":
        raise ValueError(f"{spec!r}: nothing after ':' (use {entry.usage()})")
    if value is not None and entry.argument is None:
        raise ValueError(f"the {entry.name} scorer takes no argument (use {entry.name})")
    if value is None and entry.argument_required:
        raise ValueError(f"the {entry.name} scorer needs an argument: {entry.usage()}")
    return entry, value


def build_scorer(spec: str, options: ScorerOptions | None = None) -> Scorer:
    """Build the scorer that ``spec`` (``"NAME[:ARG]"``) names.

    Raises:
        ValueError: A bad spec or argument, or a judge entry without ``options.judge``.
    """
    entry, argument = parse_scorer_spec(spec)
    options = options or ScorerOptions()
    if entry.needs_judge and options.judge is None:
        raise ValueError(f"the {entry.name} scorer needs a judge model")
    return entry.build(argument, options)


# -- the built-in entries -------------------------------------------------------------------


def _build_hallucination(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.runs import get_run_context
    from livescore.scorers._hallucination import create_hallucination_scorer

    assert options.judge is not None  # build_scorer checked it
    # The item's context, else the run's tool results and retrieved documents.
    return create_hallucination_scorer(
        model=options.judge, get_context=get_run_context, judge_mode=options.mode
    )


def _build_keyword_coverage(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._keyword_coverage import create_keyword_coverage_scorer

    reference = argument or "input"
    if reference not in ("input", "ground_truth"):
        raise ValueError(
            f"keyword-coverage compares with 'input' or 'ground_truth', not {reference!r}"
        )
    return create_keyword_coverage_scorer(reference=reference)  # type: ignore[arg-type]


register_scorer(
    CatalogEntry(
        name="hallucination",
        summary="share of the answer's claims the context does not support (context: "
        "the item's, else the run's tool results)",
        build=_build_hallucination,
        needs_judge=True,
        higher_is_better=False,
        predicts="hallucinated",
    )
)
register_scorer(
    CatalogEntry(
        name="keyword-coverage",
        summary="share of the reference's keywords the answer covers (code, no judge)",
        build=_build_keyword_coverage,
        argument="REFERENCE: input (default) or ground_truth",
    )
)


# -- code scorers and quick checks (no judge) ------------------------------------------------


def _names(argument: str | None, what: str) -> list[str]:
    names = [n.strip() for n in (argument or "").split(",")]
    if not all(names):
        raise ValueError(f"{what}: a comma-separated list of tool names, not {argument!r}")
    return names


def _reference(argument: str | None, default: str, allowed: tuple[str, ...], name: str) -> str:
    value = argument or default
    if value not in allowed:
        raise ValueError(f"{name} compares with {' or '.join(allowed)}, not {value!r}")
    return value


def _build_completeness(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._completeness import create_completeness_scorer

    reference = _reference(argument, "input", ("input", "ground_truth"), "completeness")
    return create_completeness_scorer(reference=reference)  # type: ignore[arg-type]


def _build_content_similarity(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._content_similarity import create_content_similarity_scorer

    allowed = ("auto", "input", "ground_truth")
    reference = _reference(argument, "auto", allowed, "content-similarity")
    return create_content_similarity_scorer(reference=reference)  # type: ignore[arg-type]


def _build_textual_difference(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._textual_difference import create_textual_difference_scorer

    allowed = ("auto", "input", "ground_truth")
    reference = _reference(argument, "auto", allowed, "textual-difference")
    return create_textual_difference_scorer(reference=reference)  # type: ignore[arg-type]


def _build_tone(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._tone import create_tone_scorer

    reference: str | float | None = argument
    if argument is not None:
        try:
            reference = float(argument)
        except ValueError:
            reference = argument  # a reference text
    return create_tone_scorer(reference)


def _build_tool_call_accuracy(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._tool_call_accuracy import create_tool_call_accuracy_scorer

    names = _names(argument, "tool-call-accuracy")
    if len(names) == 1:
        return create_tool_call_accuracy_scorer(expected_tool=names[0])
    return create_tool_call_accuracy_scorer(expected_tool_order=names)


def _build_trajectory(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._trajectory import create_trajectory_scorer

    return create_trajectory_scorer(expected_steps=_names(argument, "trajectory"))


def _build_check(name: str) -> BuildFunction:
    def build(argument: str | None, options: ScorerOptions) -> Scorer:
        from livescore import checks

        # The argument is part of the id: `--scorer includes:refund --scorer includes:sorry`
        # are two scorers, with two names on their spans and in the summary.
        id = name if argument is None else f"{name}:{argument}"
        if name in ("includes", "excludes", "equals", "matches", "similarity"):
            assert argument is not None  # argument_required
            factory = getattr(checks, f"{name.replace('-', '_')}_scorer")
            return factory(argument, id=id)  # type: ignore[no-any-return]
        if name == "called-tool":
            return checks.called_tool_scorer(_names(argument, name)[0], id=id)
        if name == "did-not-call":
            return checks.did_not_call_scorer(_names(argument, name)[0], id=id)
        if name == "tool-order":
            return checks.tool_order_scorer(_names(argument, name), id=id)
        if name == "max-tool-calls":
            try:
                limit = int(argument or "")
            except ValueError:
                raise ValueError(f"max-tool-calls needs a whole number, not {argument!r}") from None
            return checks.max_tool_calls_scorer(limit, id=id)
        if name == "no-tool-errors":
            return checks.no_tool_errors_scorer()
        return checks.used_no_tools_scorer()

    return build


register_scorer(
    CatalogEntry(
        name="completeness",
        summary="share of what the reference asks about (keywords, names, numbers) the answer "
        "covers",
        build=_build_completeness,
        argument="REFERENCE: input (default) or ground_truth",
    )
)
register_scorer(
    CatalogEntry(
        name="content-similarity",
        summary="Dice similarity of character bigrams, answer vs reference (Mastra's values)",
        build=_build_content_similarity,
        argument="REFERENCE: auto (ground truth, else input), input or ground_truth",
    )
)
register_scorer(
    CatalogEntry(
        name="textual-difference",
        summary="2·LCS / total length of answer and reference (1 = the same text)",
        build=_build_textual_difference,
        argument="REFERENCE: auto (ground truth, else input), input or ground_truth",
    )
)
register_scorer(
    CatalogEntry(
        name="tone",
        summary="tone consistency across the answer's sentences, or against a reference tone "
        "(VADER)",
        build=_build_tone,
        argument="TONE: a reference text, or a number from -1 to 1",
    )
)
register_scorer(
    CatalogEntry(
        name="tool-call-accuracy",
        summary="1 when the agent called the expected tool (or tools, in order), else 0",
        build=_build_tool_call_accuracy,
        argument="TOOLS: a tool name, or A,B,C for an expected order",
        argument_required=True,
    )
)
register_scorer(
    CatalogEntry(
        name="trajectory",
        summary="accuracy × efficiency × failure handling of the agent's tool calls",
        build=_build_trajectory,
        argument="STEPS: the expected tool calls, A,B,C",
        argument_required=True,
    )
)
for _name, _summary, _argument in (
    ("includes", "1 when the answer contains TEXT (case ignored)", "TEXT: what to look for"),
    ("excludes", "1 when the answer does not contain TEXT (case ignored)", "TEXT: what to avoid"),
    ("equals", "1 when the answer equals TEXT (case and spacing ignored)", "TEXT: the answer"),
    ("matches", "1 when the answer matches REGEX", "REGEX: all after the first ':'"),
    ("similarity", "1 when the answer is at least 0.8 similar to TEXT", "TEXT: the reference"),
    ("called-tool", "1 when the agent called TOOL", "TOOL: a tool name"),
    ("did-not-call", "1 when the agent never called TOOL", "TOOL: a tool name"),
    ("tool-order", "1 when the agent called the tools in this order", "TOOLS: A,B,C"),
    ("max-tool-calls", "1 when the agent made at most N tool calls", "N: a whole number"),
    ("no-tool-errors", "1 when no tool call failed", None),
    ("used-no-tools", "1 when the agent called no tool", None),
):
    register_scorer(
        CatalogEntry(
            name=_name,
            summary=f"check: {_summary}",
            build=_build_check(_name),
            argument=_argument,
            argument_required=_argument is not None,
        )
    )


# -- the LLM-judged scorers of issue 14 (each factory is imported when it is built) ----------


def _judge_of(options: ScorerOptions) -> Judge:
    assert options.judge is not None  # build_scorer and the CLI check it
    return options.judge


def _build_faithfulness(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.runs import get_run_context
    from livescore.scorers._faithfulness import create_faithfulness_scorer

    return create_faithfulness_scorer(
        model=_judge_of(options), get_context=get_run_context, judge_mode=options.mode
    )


def _build_answer_relevancy(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._answer_relevancy import create_answer_relevancy_scorer

    return create_answer_relevancy_scorer(model=_judge_of(options), judge_mode=options.mode)


def _build_answer_similarity(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._answer_similarity import create_answer_similarity_scorer

    return create_answer_similarity_scorer(model=_judge_of(options), judge_mode=options.mode)


def _build_context_relevance(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._context_relevance import create_context_relevance_scorer

    return create_context_relevance_scorer(model=_judge_of(options), judge_mode=options.mode)


def _build_context_precision(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._context_precision import create_context_precision_scorer

    return create_context_precision_scorer(model=_judge_of(options), judge_mode=options.mode)


def _build_toxicity(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._toxicity import create_toxicity_scorer

    return create_toxicity_scorer(model=_judge_of(options), judge_mode=options.mode)


def _build_bias(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._bias import create_bias_scorer

    return create_bias_scorer(model=_judge_of(options), judge_mode=options.mode)


def _build_prompt_alignment(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._prompt_alignment import create_prompt_alignment_scorer

    mode = argument or "user"
    if mode not in ("user", "system", "both"):
        raise ValueError(f"prompt-alignment judges against user, system or both, not {mode!r}")
    return create_prompt_alignment_scorer(
        model=_judge_of(options),
        mode=mode,  # type: ignore[arg-type]
        judge_mode=options.mode,
    )


def _build_tool_call_accuracy_llm(argument: str | None, options: ScorerOptions) -> Scorer:
    import json
    from pathlib import Path

    from livescore.scorers._tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm

    assert argument is not None  # required
    path = Path(argument)
    tools: list[object]
    if argument.endswith(".json") or path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read the tools file {argument!r}: {exc}") from None
        if not isinstance(loaded, list):
            raise ValueError(f"{argument}: expected a JSON list of {{name, description}} objects")
        tools = list(loaded)
    else:
        tools = list(_names(argument, "tool-call-accuracy-llm"))
    return create_tool_call_accuracy_scorer_llm(
        model=_judge_of(options), available_tools=tools, judge_mode=options.mode
    )


def _build_criteria(argument: str | None, options: ScorerOptions) -> Scorer:
    from livescore.scorers._criteria import create_criteria_scorer

    assert argument is not None  # required
    return create_criteria_scorer(
        model=_judge_of(options), criteria=argument, judge_mode=options.mode
    )


register_scorer(
    CatalogEntry(
        name="faithfulness",
        summary="share of the answer's claims the context backs (context: the item's, else "
        "the run's tool results); claims shared with hallucination",
        build=_build_faithfulness,
        needs_judge=True,
        predicts="hallucinated",
    )
)
register_scorer(
    CatalogEntry(
        name="answer-relevancy",
        summary="share of the answer's statements relevant to the question",
        build=_build_answer_relevancy,
        needs_judge=True,
        predicts="irrelevant",
    )
)
register_scorer(
    CatalogEntry(
        name="answer-similarity",
        summary="how closely the answer conveys the item's ground_truth, unit by unit",
        build=_build_answer_similarity,
        needs_judge=True,
    )
)
register_scorer(
    CatalogEntry(
        name="context-relevance",
        summary="how relevant the context was to the question, and how well the answer used it",
        build=_build_context_relevance,
        needs_judge=True,
    )
)
register_scorer(
    CatalogEntry(
        name="context-precision",
        summary="mean average precision of the context order: useful pieces first",
        build=_build_context_precision,
        needs_judge=True,
    )
)
register_scorer(
    CatalogEntry(
        name="toxicity",
        summary="share of the answer's statements that are toxic",
        build=_build_toxicity,
        needs_judge=True,
        higher_is_better=False,
        predicts="toxic",
    )
)
register_scorer(
    CatalogEntry(
        name="bias",
        summary="share of the answer's own opinions that are biased",
        build=_build_bias,
        needs_judge=True,
        higher_is_better=False,
        predicts="biased",
    )
)
register_scorer(
    CatalogEntry(
        name="prompt-alignment",
        summary="how well the answer follows its prompt: intent, requirements, "
        "completeness, format and tone",
        build=_build_prompt_alignment,
        needs_judge=True,
        argument="MODE: user (default), system or both",
    )
)
register_scorer(
    CatalogEntry(
        name="tool-call-accuracy-llm",
        summary="whether the agent called the right tools for the request, judged",
        build=_build_tool_call_accuracy_llm,
        needs_judge=True,
        argument="TOOLS: tool names separated by commas, or a JSON file of {name, "
        "description} objects",
        argument_required=True,
    )
)
register_scorer(
    CatalogEntry(
        name="criteria",
        summary="share of the checks of your criterion the answer meets",
        build=_build_criteria,
        needs_judge=True,
        argument="CRITERION: what a good answer does, in plain words",
        argument_required=True,
    )
)
