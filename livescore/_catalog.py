"""The scorer catalog: every scorer ``livescore eval --scorer NAME[:ARG]`` can build by name.

A scorer joins the catalog where it is defined: its module decorates a small build function
with :func:`catalog_entry`, which says what the scorer measures in one line, its family (its
page in the docs, ``docs/scorers/<family>.md``), whether it needs a judge, what its optional
argument means, which way is better, and the span attributes it sets. Nothing else names it:
the CLI's ``--scorer`` and its help, :func:`build_scorer`, the fleet worker's messages, the
tests and the docs read the catalog.

The catalog costs nothing at ``import livescore``, and listing it imports no scorer: the
built-in entries are read from the source of the modules of ``livescore.scorers`` and
``livescore.checks`` (the decorator's arguments are literals, so only that call is parsed:
a few milliseconds for all the modules, where importing them would cost a hundred), and a
scorer's module is imported only when the scorer is built. So the judge scorers' modules
(pydantic models, prompts) stay unloaded until used, and no index file lists the scorers:
a test checks that what is read from the source is what the module declares when it runs.

A plugin adds its own scorers with :func:`catalog_entry` in a module it imports, or with
:func:`register_scorer`.

Example:
    >>> from livescore.scorers import build_scorer, get_catalog_entry
    >>> entry = get_catalog_entry("keyword-coverage")
    >>> entry.family, entry.needs_judge, entry.usage()
    ('text', False, 'keyword-coverage[:REFERENCE]')
    >>> build_scorer("keyword-coverage:ground_truth").id
    'keyword-coverage'
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from livescore.judges import Judge
    from livescore.scoring import Scorer

__all__ = (
    "SCORER_FAMILIES",
    "BuildFunction",
    "CatalogEntry",
    "ScorerOptions",
    "build_scorer",
    "catalog_entry",
    "declared_entries",
    "find_catalog_entry",
    "get_catalog_entry",
    "one_of",
    "parse_scorer_spec",
    "register_scorer",
    "scorer_catalog",
    "scorer_span_attributes",
    "split_names",
)

JudgeMode = Literal["three_step", "one_call", "logprob"]

SCORER_FAMILIES: Mapping[str, str] = {
    "grounding": "Grounding: is the answer backed by its context",
    "context": "Context: was the retrieved context relevant, and well ordered",
    "answer": "Answer quality: relevance, similarity, prompt alignment, criteria",
    "safety": "Safety: toxicity and bias",
    "tools": "Tool use: the right tools, in the right order",
    "text": "Text comparison (code): keywords, completeness, similarity, tone",
    "checks": "Quick checks: pass/fail assertions on the answer and the tool calls",
}
"""The scorer families, in the order the catalog and the docs list them: ``family`` →
the title of its page, ``docs/scorers/<family>.md``. A plugin's entry may name another
family; it is listed after these."""

# Packages whose modules declare the built-in entries (read from their source, see above).
_PROVIDERS = ("livescore.scorers", "livescore.checks")


@dataclasses.dataclass(frozen=True, slots=True)
class ScorerOptions:
    """What the command line resolved for every scorer it builds.

    Attributes:
        judge: The judge for entries that need one (``None`` when no model is configured;
            :func:`build_scorer` refuses judge entries then).
        mode: ``"three_step"``, ``"one_call"`` or ``"logprob"`` (hallucination and faithfulness).

    Example:
        >>> ScorerOptions().mode
        'three_step'
    """

    judge: Judge | None = None
    mode: JudgeMode = "three_step"

    def require_judge(self) -> Judge:
        """The judge, for a build function of an entry with ``needs_judge``.

        Raises:
            ValueError: No judge (:func:`build_scorer` checks it first).
        """
        if self.judge is None:
            raise ValueError("this scorer needs a judge model")
        return self.judge


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
        family: Its family, one of :data:`SCORER_FAMILIES` for the built-in scorers: the
            docs page ``docs/scorers/<family>.md`` that documents it.
        span_attributes: The attributes the scorer sets on its score span, beyond the ones
            every score carries: name → what it holds.
        factory: The public function that makes the scorer in Python
            (``"livescore.scorers.create_faithfulness_scorer"``), for the docs.
        examples: Specs that build it, as typed after ``--scorer``
            (``"keyword-coverage:ground_truth"``), for the docs and the tests.
        origin: Where the entry is declared, ``"module:function"`` (``None`` for an entry
            made by hand).
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
    origin: str | None = None

    def usage(self) -> str:
        """``NAME``, ``NAME[:ARG]`` or ``NAME:ARG`` as typed on the command line."""
        if self.argument is None:
            return self.name
        meta = self.argument.split(":", 1)[0].strip() or "ARG"
        return f"{self.name}:{meta}" if self.argument_required else f"{self.name}[:{meta}]"


# The fields catalog_entry() takes besides the name, with their types: what a declaration
# may say, checked the same way whether it is read from the source or run.
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


def _entry(
    name: str, build: BuildFunction, origin: str | None, fields: Mapping[str, Any]
) -> CatalogEntry:
    where = f" ({origin})" if origin else ""
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

    The arguments are those of :class:`CatalogEntry`. Write them as literals (strings,
    numbers, booleans, ``None``, tuples, a dict of strings): the built-in scorers' entries
    are read from their module's source, without importing it, when the catalog is listed.
    A plugin module's entry joins the catalog when the module is imported.

    Raises:
        ValueError: The name is taken or malformed (when the entry joins the catalog).
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
        entry = _entry(name, build, origin, fields)
        build.catalog_entry = entry  # type: ignore[attr-defined]  # read by the tests
        _CATALOG.add_runtime(entry)
        return build

    return decorate


@dataclasses.dataclass(frozen=True, slots=True)
class _LazyBuild:
    """A built-in entry's build function: imports its module on the first build."""

    module: str
    function: str

    def __call__(self, argument: str | None, options: ScorerOptions) -> Scorer:
        build: BuildFunction = getattr(importlib.import_module(self.module), self.function)
        return build(argument, options)


# -- reading the declarations from the source -------------------------------------------------

_DECORATOR = "\n@catalog_entry("
_DEF = re.compile(r"^def (\w+)\(", re.MULTILINE)


def _declarations(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """``(name, function, fields)`` of every ``@catalog_entry(...)`` in ``path``'s source.

    The decorator stands at the start of a line, right above the ``def`` of the function it
    declares; only that call is parsed (parsing whole modules would cost more than importing
    them).
    """
    text = "\n" + path.read_text(encoding="utf-8")  # a declaration on line 1 starts a line
    found = []
    start = text.find(_DECORATOR)  # str.find: several times faster than a regex here
    while start >= 0:
        where = f"{path}:{text.count(chr(10), 0, start) + 1}"
        function = _DEF.search(text, start)
        try:
            if function is None:
                raise SyntaxError("no def below")
            call = ast.parse(text[start + 2 : function.start()], mode="eval").body
        except SyntaxError:
            raise ValueError(
                f"{where}: @catalog_entry(...) must stand right above the def it declares"
            ) from None
        assert isinstance(call, ast.Call)
        try:
            (name,) = (ast.literal_eval(arg) for arg in call.args)
            fields = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
        except ValueError:
            raise ValueError(
                f"{where}: the arguments of catalog_entry() must be literals, the name first "
                "(the catalog reads them from the source, without importing the module)"
            ) from None
        found.append((name, function.group(1), fields))
        start = text.find(_DECORATOR, function.end())
    return found


def declared_entries(packages: Iterable[str] = _PROVIDERS) -> list[CatalogEntry]:
    """The entries declared in the modules of ``packages``, read from their source: each
    builds through a lazy import of its module. No module of ``packages`` is imported (the
    packages' parents may be)."""
    from importlib.util import find_spec

    entries = []
    for package in packages:
        spec = find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for path in sorted(Path(folder).glob("*.py")):
                module = f"{package}.{path.stem}" if path.stem != "__init__" else package
                for name, function, fields in _declarations(path):
                    build = _LazyBuild(module, function)
                    entries.append(_entry(name, build, f"{module}:{function}", fields))
    return entries


# -- the catalog --------------------------------------------------------------------------------


class _Catalog:
    """The entries by name: the built-in ones read once, on first use; the others as they
    are registered."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.packages = packages
        self._entries: dict[str, CatalogEntry] | None = None
        self._pending: list[CatalogEntry] = []  # decorated before the catalog was read
        self._lock = threading.RLock()

    def entries(self) -> dict[str, CatalogEntry]:
        with self._lock:
            if self._entries is None:
                self._entries = {}
                for entry in declared_entries(self.packages):
                    self._add(entry, replace=False)
                pending, self._pending = self._pending, []
                for entry in pending:
                    self._add(entry, replace=False)
            return self._entries

    def add_runtime(self, entry: CatalogEntry) -> None:
        with self._lock:
            if self._entries is None:
                self._pending.append(entry)
            else:
                self._add(entry, replace=False)

    def add(self, entry: CatalogEntry, *, replace: bool) -> None:
        with self._lock:
            self.entries()
            self._add(entry, replace=replace)

    def _add(self, entry: CatalogEntry, *, replace: bool) -> None:
        assert self._entries is not None
        name = entry.name
        if not name or name != name.strip() or ":" in name or any(c.isspace() for c in name):
            raise ValueError(f"a catalog name is one word without ':', not {name!r}")
        low, high = entry.score_range
        if not low < high:
            raise ValueError(f"{name}: score_range must be (low, high) with low < high")
        taken = self._entries.get(name)
        if taken is not None and not replace:
            if entry.origin is not None and taken.origin == entry.origin:
                return  # a built-in module, imported: its entry was read from its source
            raise ValueError(f"the scorer catalog already has {name!r}")
        self._entries[name] = entry


_CATALOG = _Catalog(_PROVIDERS)


def _order(entry: CatalogEntry) -> tuple[int, str, str]:
    families = list(SCORER_FAMILIES)
    rank = families.index(entry.family) if entry.family in SCORER_FAMILIES else len(families)
    return rank, entry.family, entry.name


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
    _CATALOG.add(entry, replace=replace)
    return entry


def scorer_catalog() -> tuple[CatalogEntry, ...]:
    """Every entry, by family (in the order of :data:`SCORER_FAMILIES`), then by name.

    Example:
        >>> [entry.name for entry in scorer_catalog()][:2]
        ['faithfulness', 'hallucination']
    """
    return tuple(sorted(_CATALOG.entries().values(), key=_order))


def find_catalog_entry(name: str) -> CatalogEntry | None:
    """The entry called ``name``, or ``None``.

    Example:
        >>> find_catalog_entry("toxicity").higher_is_better, find_catalog_entry("nope")
        (False, None)
    """
    return _CATALOG.entries().get(name)


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
        ValueError: A bad spec or argument, or a judge entry without ``options.judge``.
    """
    entry, argument = parse_scorer_spec(spec)
    options = options or ScorerOptions()
    if entry.needs_judge and options.judge is None:
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
