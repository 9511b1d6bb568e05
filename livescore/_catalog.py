"""The scorer catalog: every scorer ``livescore eval --scorer NAME[:ARG]`` can build by name.

A scorer joins the catalog where it is defined: its module decorates a small build function
with :func:`catalog_entry`, which says what the scorer measures in one line, its family (its
page in the docs, ``docs/scorers/<family>.md``), whether it needs a judge, what its optional
argument means, which way is better, and the span attributes it sets. The decorator
registers the entry when its module is imported. Nothing else names the scorer: the CLI's
``--scorer`` and its help, :func:`build_scorer`, the fleet worker's messages, the tests and
the docs' scorer tables read the catalog.

The first time the catalog is listed or a name is looked up, it imports every module of
``livescore.scorers`` and ``livescore.checks`` (``pkgutil``), then the modules that
installed plugins name under the entry point group ``livescore.scorers``: about a hundred
milliseconds, paid by the command line and the fleet worker, never by ``import livescore``
or ``import livescore.scorers``.

A plugin declares its scorers the same way, in a module its distribution names::

    [project.entry-points."livescore.scorers"]
    acme = "acme_scorers.catalog"

Example:
    >>> from livescore.scorers import build_scorer, scorer_catalog
    >>> entry = next(e for e in scorer_catalog() if e.name == "keyword-coverage")
    >>> entry.family, entry.needs_judge, entry.usage()
    ('text', False, 'keyword-coverage[:REFERENCE]')
    >>> build_scorer("keyword-coverage:ground_truth").id
    'keyword-coverage'
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import pkgutil
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from livescore.judges import Judge
    from livescore.scoring import Scorer

__all__ = (
    "PLUGINS_GROUP",
    "SCORER_FAMILIES",
    "BuildFunction",
    "CatalogEntry",
    "ScorerOptions",
    "build_scorer",
    "catalog_entry",
    "find_catalog_entry",
    "get_catalog_entry",
    "one_of",
    "parse_scorer_spec",
    "scorer_catalog",
    "scorer_span_attributes",
    "split_names",
)

_log = logging.getLogger("livescore.scorers")

JudgeMode = Literal["three_step", "one_call", "logprob"]

SCORER_FAMILIES: Mapping[str, str] = {
    "grounding": "Grounding: is the answer backed by its context",
    "context": "Context: was the retrieved context relevant, and well ordered",
    "answer": "Answer quality: relevance, similarity, prompt alignment, criteria",
    "safety": "Safety: toxicity and bias",
    "tools": "Tool use: the right tools, in the right order",
    "text": "Text comparison (code): keywords, completeness, similarity, tone",
    "checks": "Quick checks: pass/fail assertions on the answer and the tool calls",
    "conversation": "Conversations: whole sessions, scored when they go quiet",
}
"""The scorer families, in the order the catalog and the docs list them: ``family`` →
the title of its page, ``docs/scorers/<family>.md``. A plugin's entry may name another
family; it is listed after these."""

PLUGINS_GROUP = "livescore.scorers"
"""The entry point group whose entries name plugin modules that declare catalog entries."""

# The packages whose modules declare the built-in entries.
_PROVIDERS = ("livescore.scorers", "livescore.checks")
# Marks the plugins' entry points as read (beside the packages imported).
_PLUGINS_READ = f"entry points of {PLUGINS_GROUP}"


@dataclasses.dataclass(frozen=True, slots=True)
class ScorerOptions:
    """What the command line resolved for every scorer it builds.

    Attributes:
        model: The judge for entries that need one (``None`` when no model is configured;
            :func:`build_scorer` refuses judge entries then).
        judge_mode: ``"three_step"`` or ``"one_call"`` for judge scorers that have both
            forms (their ``judge_mode=``), or ``"logprob"`` (hallucination and faithfulness).

    Example:
        >>> ScorerOptions().judge_mode
        'three_step'
    """

    model: Judge | None = None
    judge_mode: JudgeMode = "three_step"

    def require_model(self) -> Judge:
        """The judge, for a build function of an entry with ``needs_judge``.

        Raises:
            ValueError: No judge (:func:`build_scorer` checks it first).
        """
        if self.model is None:
            raise ValueError("this scorer needs a judge model")
        return self.model


BuildFunction = Callable[[str | None, ScorerOptions], "Scorer"]
"""``build(argument, options) -> Scorer``: ``argument`` is the text after ``NAME:``
(``None`` without one). Raise ``ValueError`` with a clear message for a bad argument."""


@dataclasses.dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One scorer the command line can build.

    Attributes:
        name: What users type after ``--scorer`` (``"keyword-coverage"``).
        summary: One line for ``--help``: what it measures.
        build: ``build(argument, options) -> Scorer``.
        needs_judge: Whether it calls an LLM judge (then ``options.model`` is set).
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
        family: Its family, one of :data:`SCORER_FAMILIES` for the built-in scorers: the
            docs page ``docs/scorers/<family>.md`` that documents it.
        span_attributes: The attributes the scorer sets on its score span, beyond the ones
            every score carries: name → what it holds.
        factory: The public function that makes the scorer in Python
            (``"livescore.scorers.create_faithfulness_scorer"``), for the docs.
        examples: Specs that build it, as typed after ``--scorer``
            (``"keyword-coverage:ground_truth"``), for the docs and the tests.
        origin: Where the entry is declared, ``"module:function"``.
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
    family: str = "custom"
    span_attributes: Mapping[str, str] = dataclasses.field(default_factory=dict, hash=False)
    factory: str | None = None
    examples: tuple[str, ...] = ()
    origin: str = ""

    def usage(self) -> str:
        """``NAME``, ``NAME[:ARG]`` or ``NAME:ARG`` as typed on the command line."""
        if self.argument is None:
            return self.name
        meta = self.argument.split(":", 1)[0].strip() or "ARG"
        return f"{self.name}:{meta}" if self.argument_required else f"{self.name}[:{meta}]"


# The fields catalog_entry() takes besides the name, with their types.
_FIELDS: Mapping[str, tuple[type, ...]] = {
    "summary": (str,),
    "family": (str,),
    "needs_judge": (bool,),
    "argument": (str, type(None)),
    "argument_required": (bool,),
    "higher_is_better": (bool,),
    "score_range": (tuple,),
    "predicts": (str, type(None)),
    "span_attributes": (dict,),
    "factory": (str, type(None)),
    "examples": (tuple,),
}


def _entry(name: str, build: BuildFunction, origin: str, fields: Mapping[str, Any]) -> CatalogEntry:
    where = f" ({origin})"
    for key, value in fields.items():
        kinds = _FIELDS.get(key)
        if kinds is None:
            raise TypeError(f"catalog entry {name!r}{where}: unknown field {key!r}")
        if not isinstance(value, kinds):
            raise TypeError(f"catalog entry {name!r}{where}: {key} cannot be {value!r}")
    values = dict(fields)
    if "score_range" in values:
        low, high = values["score_range"]
        values["score_range"] = (float(low), float(high))
    attributes = values.get("span_attributes", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in attributes.items()):
        raise TypeError(f"catalog entry {name!r}{where}: span_attributes maps names to text")
    return CatalogEntry(name=name, build=build, origin=origin, **values)


def catalog_entry(
    name: str,
    *,
    summary: str,
    family: str,
    needs_judge: bool = False,
    argument: str | None = None,
    argument_required: bool = False,
    higher_is_better: bool = True,
    score_range: tuple[float, float] = (0.0, 1.0),
    predicts: str | None = None,
    span_attributes: dict[str, str] | None = None,
    factory: str | None = None,
    examples: tuple[str, ...] = (),
) -> Callable[[BuildFunction], BuildFunction]:
    """Declare the decorated ``build(argument, options) -> Scorer`` as the catalog's ``name``.

    The arguments are those of :class:`CatalogEntry`. The entry joins the catalog when the
    module is imported: for the built-in scorers, the first time the catalog is read; for a
    plugin, when it is imported or named under the entry point group ``livescore.scorers``.

    Raises:
        ValueError: The name is taken by another function, or malformed.
        TypeError: A field has the wrong type.

    Example:
        >>> from livescore import create_scorer
        >>> @catalog_entry("doc-example-short", family="checks", summary="1 for short answers")
        ... def build_short(argument, options):
        ...     return create_scorer(
        ...         id="doc-example-short", description="short answers",
        ...         generate_score=lambda ctx: float(len(ctx.output_text) < 20))
        >>> build_scorer("doc-example-short").run_sync({"input": "q", "output": "ok"}).score
        1.0
    """
    fields: dict[str, Any] = {"summary": summary, "family": family}
    defaults = {
        "needs_judge": (needs_judge, False),
        "argument": (argument, None),
        "argument_required": (argument_required, False),
        "higher_is_better": (higher_is_better, True),
        "score_range": (score_range, (0.0, 1.0)),
        "predicts": (predicts, None),
        "span_attributes": (span_attributes, None),
        "factory": (factory, None),
        "examples": (examples, ()),
    }
    fields.update({key: value for key, (value, default) in defaults.items() if value != default})

    def decorate(build: BuildFunction) -> BuildFunction:
        origin = f"{build.__module__}:{build.__qualname__}"
        _register(_entry(name, build, origin, fields))
        return build

    return decorate


# -- the catalog --------------------------------------------------------------------------------

# Every entry registered so far, by name; the packages already imported for theirs. One lock:
# importing a module during discovery registers its entries on the same thread.
_entries: dict[str, CatalogEntry] = {}
_discovered: set[str] = set()
_lock = threading.RLock()


def _register(entry: CatalogEntry) -> None:
    name = entry.name
    if not name or name != name.strip() or ":" in name or any(c.isspace() for c in name):
        raise ValueError(f"a catalog name is one word without ':', not {name!r}")
    low, high = entry.score_range
    if not low < high:
        raise ValueError(f"{name}: score_range must be (low, high) with low < high")
    with _lock:
        taken = _entries.get(name)
        if taken is not None and taken.origin != entry.origin:
            raise ValueError(
                f"the scorer catalog already has {name!r} (from {taken.origin}), "
                f"so {entry.origin} cannot declare it"
            )
        _entries[name] = entry  # the same function again: its module was imported anew


def _import_package(package: str) -> None:
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(getattr(module, "__path__", ()), f"{package}."):
        importlib.import_module(info.name)


def _catalog() -> dict[str, CatalogEntry]:
    """Every entry, after importing the modules that declare the built-in ones and the
    plugins' (once per process)."""
    with _lock:
        for package in _PROVIDERS:
            if package not in _discovered:
                _discovered.add(package)
                _import_package(package)
        if _PLUGINS_READ not in _discovered:
            _discovered.add(_PLUGINS_READ)
            for point in entry_points(group=PLUGINS_GROUP):
                try:
                    importlib.import_module(point.value.partition(":")[0])
                except Exception as exc:  # a broken plugin costs its own scorers only
                    _log.warning(
                        "scorer plugin %r (%s) cannot be imported: %s", point.name, point.value, exc
                    )
        return _entries


def _order(entry: CatalogEntry) -> tuple[int, str, str]:
    families = list(SCORER_FAMILIES)
    rank = families.index(entry.family) if entry.family in SCORER_FAMILIES else len(families)
    return rank, entry.family, entry.name


def scorer_catalog() -> tuple[CatalogEntry, ...]:
    """Every entry, by family (in the order of :data:`SCORER_FAMILIES`), then by name.

    Example:
        >>> [entry.name for entry in scorer_catalog()][:2]
        ['faithfulness', 'hallucination']
    """
    return tuple(sorted(_catalog().values(), key=_order))


def find_catalog_entry(name: str) -> CatalogEntry | None:
    """The entry called ``name``, or ``None``.

    Example:
        >>> find_catalog_entry("toxicity").higher_is_better, find_catalog_entry("nope")
        (False, None)
    """
    return _catalog().get(name)


def get_catalog_entry(name: str) -> CatalogEntry:
    """The entry called ``name``.

    Raises:
        ValueError: No such entry; the message lists close names and every name.
    """
    entry = find_catalog_entry(name)
    if entry is not None:
        return entry
    import difflib

    names = [e.name for e in scorer_catalog()]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ValueError(f"unknown scorer {name!r}{hint} (choose from {', '.join(names)})")


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
        ValueError: A bad spec or argument, or a judge entry without ``options.model``.

    Example:
        >>> from livescore.testing import ScriptedJudge
        >>> build_scorer("keyword-coverage:ground_truth").id
        'keyword-coverage'
        >>> build_scorer("faithfulness", ScorerOptions(model=ScriptedJudge([]))).judge.model_name
        'scripted'
    """
    entry, argument = parse_scorer_spec(spec)
    options = options or ScorerOptions()
    if entry.needs_judge and options.model is None:
        raise ValueError(f"the {entry.name} scorer needs a judge model")
    return entry.build(argument, options)


def scorer_span_attributes() -> dict[str, dict[str, str]]:
    """Every span attribute a catalog scorer declares: name → {scorer name: what it holds}.

    The attributes every score carries are in :mod:`livescore.otel.attributes`.

    Example:
        >>> scorer_span_attributes()["livescore.claims.total"]["hallucination"]
        'claims judged'
    """
    found: dict[str, dict[str, str]] = {}
    for entry in scorer_catalog():
        for name, meaning in entry.span_attributes.items():
            found.setdefault(name, {})[entry.name] = meaning
    return dict(sorted(found.items()))


# -- arguments of build functions -------------------------------------------------------------


def split_names(argument: str | None, scorer: str) -> list[str]:
    """``"A,B,C"`` as ``["A", "B", "C"]``: tool names or steps.

    Raises:
        ValueError: An empty name.

    Example:
        >>> split_names("search, book", "trajectory")
        ['search', 'book']
    """
    names = [n.strip() for n in (argument or "").split(",")]
    if not all(names):
        raise ValueError(f"{scorer}: a comma-separated list of tool names, not {argument!r}")
    return names


def one_of(argument: str | None, default: str, allowed: tuple[str, ...], scorer: str) -> str:
    """``argument`` (``default`` when absent), checked to be one of ``allowed``.

    Raises:
        ValueError: Anything else.

    Example:
        >>> one_of(None, "input", ("input", "ground_truth"), "completeness")
        'input'
    """
    value = argument or default
    if value not in allowed:
        raise ValueError(f"{scorer} compares with {' or '.join(allowed)}, not {value!r}")
    return value
