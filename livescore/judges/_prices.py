"""What a judge's tokens cost: :class:`Price`, price tables, and where a judge finds its price.

A price is written as OpenAI and most providers publish it: US dollars per million input
tokens and per million output tokens, with an optional third figure for cached input tokens
(the prompt prefix a provider served from its cache, billed lower, reported by the API as
``usage.prompt_tokens_details.cached_tokens``). A price table maps model names to prices,
``{"gpt-4o-mini": (0.15, 0.60, 0.075)}``.

A judge finds its price, first match wins, in: the ``prices=`` it was given (one price, or a
table), the ``prices=`` of its :class:`~livescore.judges.JudgeBudget`, the table named by the
``LIVESCORE_JUDGE_PRICES`` environment variable (a JSON file, or the JSON itself), and
:data:`DEFAULT_PRICES` (OpenAI's list prices of :data:`DEFAULT_PRICES_AS_OF`). In a table,
a model name matches itself, and a dated snapshot matches its family
(``gpt-4o-mini-2024-07-18`` is priced as ``gpt-4o-mini``; the longest such name wins).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from livescore._errors import JudgeConfigError

if TYPE_CHECKING:
    from livescore._usage import JudgeUsage

__all__ = (
    "DEFAULT_PRICES",
    "DEFAULT_PRICES_AS_OF",
    "PRICES_ENV",
    "Price",
    "PriceLike",
    "PriceTable",
    "find_price",
    "load_prices",
    "price_of",
    "price_table",
)

PRICES_ENV = "LIVESCORE_JUDGE_PRICES"
"""The environment variable naming a price table: a JSON file's path, or a JSON object."""

DEFAULT_PRICES_AS_OF = "2025-08-07"
"""When :data:`DEFAULT_PRICES` were read from OpenAI's published price list. Prices change:
give yours (``prices=``, ``LIVESCORE_JUDGE_PRICES``) when they matter."""


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens: input, output, and cached input when it is billed lower.

    Attributes:
        input: USD per million input (prompt) tokens.
        output: USD per million output (completion) tokens.
        cached_input: USD per million cached input tokens; ``None`` bills them as input.

    Example:
        >>> from livescore.judges import JudgeUsage
        >>> price = Price.of((0.15, 0.60, 0.075))
        >>> round(price.cost(JudgeUsage(input_tokens=2000, output_tokens=500)), 6)
        0.0006
    """

    input: float
    output: float
    cached_input: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input"):
            value = getattr(self, name)
            if value is None and name == "cached_input":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise JudgeConfigError(f"a price's {name} must be a number, not {value!r}")
            if not (math.isfinite(value) and value >= 0):
                raise JudgeConfigError(
                    f"a price's {name} must be a finite number of USD, 0 or more, not {value!r}"
                )

    @classmethod
    def of(cls, value: PriceLike) -> Price:
        """A price from ``(input, output)``, ``(input, output, cached_input)`` or a Price.

        Raises:
            JudgeConfigError: Not two or three non-negative numbers.
        """
        if isinstance(value, Price):
            return value
        if isinstance(value, Mapping):
            try:
                return cls(**{str(k): v for k, v in value.items()})
            except TypeError:
                raise JudgeConfigError(
                    "a price mapping has the keys input, output and optionally cached_input, "
                    f"not {sorted(map(str, value))}"
                ) from None
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise JudgeConfigError(
                "a price is (usd_per_million_input_tokens, usd_per_million_output_tokens"
                f"[, usd_per_million_cached_input_tokens]), not {value!r}"
            )
        if len(value) not in (2, 3):
            raise JudgeConfigError(
                f"a price has two or three figures (input, output[, cached input]), not {value!r}"
            )
        return cls(*value)

    def cost(self, usage: JudgeUsage) -> float:
        """What ``usage`` costs at this price, in USD.

        Cached input tokens are part of the input tokens (as the API reports them) and are
        billed at ``cached_input`` when it is set.
        """
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return (
            (usage.input_tokens - cached) * self.input
            + cached * cached_rate
            + usage.output_tokens * self.output
        ) / 1e6

    def as_tuple(self) -> tuple[float, ...]:
        """The price as written in a table."""
        if self.cached_input is None:
            return (self.input, self.output)
        return (self.input, self.output, self.cached_input)


PriceLike: TypeAlias = (
    Price | tuple[float, float] | tuple[float, float, float] | Sequence[float] | Mapping[str, Any]
)
"""A price as written: ``(input, output)``, ``(input, output, cached_input)`` (USD per
million tokens) or a :class:`Price`."""

PriceTable: TypeAlias = Mapping[str, PriceLike]
"""Prices by model name, ``{model_name: (usd_per_million_input_tokens,
usd_per_million_output_tokens[, usd_per_million_cached_input_tokens])}``."""


def _p(input: float, output: float, cached: float | None = None) -> Price:
    return Price(input, output, cached)


DEFAULT_PRICES: Mapping[str, Price] = {
    # OpenAI's standard-tier list prices as of DEFAULT_PRICES_AS_OF (USD per 1M tokens:
    # input, output, cached input).
    "gpt-5": _p(1.25, 10.00, 0.125),
    "gpt-5-mini": _p(0.25, 2.00, 0.025),
    "gpt-5-nano": _p(0.05, 0.40, 0.005),
    "gpt-4.1": _p(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "gpt-4o": _p(2.50, 10.00, 1.25),
    "gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "o3": _p(2.00, 8.00, 0.50),
    "o3-mini": _p(1.10, 4.40, 0.55),
    "o4-mini": _p(1.10, 4.40, 0.275),
    "gpt-3.5-turbo": _p(0.50, 1.50),
}
"""Prices of well-known judge models (OpenAI's list prices of :data:`DEFAULT_PRICES_AS_OF`).

Example:
    >>> DEFAULT_PRICES["gpt-4o-mini"].as_tuple()
    (0.15, 0.6, 0.075)
"""


def price_table(table: PriceTable, *, where: str = "prices") -> dict[str, Price]:
    """A checked copy of ``table``: model names to :class:`Price`.

    Raises:
        JudgeConfigError: A name is not a non-empty string, or a price is malformed.

    Example:
        >>> price_table({"llama3.2": (0, 0)})["llama3.2"]
        Price(input=0, output=0, cached_input=None)
    """
    if not isinstance(table, Mapping):
        raise JudgeConfigError(f"{where} must map model names to prices, not {table!r}")
    checked: dict[str, Price] = {}
    for name, value in table.items():
        if not isinstance(name, str) or not name.strip():
            raise JudgeConfigError(f"{where}: a model name must be a non-empty string")
        try:
            checked[name.strip()] = Price.of(value)
        except JudgeConfigError as exc:
            raise JudgeConfigError(f"{where}[{name!r}]: {exc}") from None
    return checked


def load_prices(source: str | os.PathLike[str]) -> dict[str, Price]:
    """Read a price table: a JSON file's path, or the JSON text itself (``{...}``).

    The JSON is an object of model names to ``[input, output]`` or ``[input, output,
    cached_input]`` (USD per million tokens).

    Raises:
        JudgeConfigError: The file cannot be read, or is not such an object.

    Example:
        >>> load_prices('{"my-judge": [0.2, 0.8]}')["my-judge"].output
        0.8
    """
    text = str(source)
    where = "the price table"
    if not text.lstrip().startswith("{"):
        where = text
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise JudgeConfigError(
                f"cannot read the price table {where!r}: {exc.strerror or exc}"
            ) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise JudgeConfigError(f"{where} is not valid JSON: {exc}") from None
    return price_table(data, where=where)


def _env_prices() -> dict[str, Price]:
    source = os.environ.get(PRICES_ENV, "").strip()
    if not source:
        return {}
    try:
        return load_prices(source)
    except JudgeConfigError as exc:
        raise JudgeConfigError(f"${PRICES_ENV}: {exc}") from None


def find_price(model: str, table: Mapping[str, Price]) -> Price | None:
    """``model``'s price in ``table``: its own name, else the longest family name it extends.

    Example:
        >>> find_price("gpt-4o-mini-2024-07-18", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-4o-mini"]
        True
        >>> find_price("llama3.2", DEFAULT_PRICES) is None
        True
    """
    if model in table:
        return table[model]
    best: str | None = None
    for name in table:
        if model.startswith(name + "-") and (best is None or len(name) > len(best)):
            best = name
    return table[best] if best is not None else None


def resolve_price(
    model: str,
    given: PriceLike | PriceTable | None = None,
    budget_prices: Mapping[str, Price] | None = None,
) -> Price | None:
    """``model``'s price: from ``given``, the budget's table, ``$LIVESCORE_JUDGE_PRICES``,
    then :data:`DEFAULT_PRICES`; ``None`` when none of them names it."""
    if given is not None:
        if isinstance(given, Mapping) and not _looks_like_price_mapping(given):
            found = find_price(model, price_table(given))
            if found is not None:
                return found
        else:
            return Price.of(given)  # type: ignore[arg-type]
    for table in (budget_prices or {}, _env_prices(), DEFAULT_PRICES):
        found = find_price(model, table)
        if found is not None:
            return found
    return None


def _looks_like_price_mapping(value: Mapping[Any, Any]) -> bool:
    return bool(value) and set(map(str, value)) <= {"input", "output", "cached_input"}


def price_of(judge: object) -> Price | None:
    """The price a judge bills at (its ``price`` attribute), or ``None`` when unknown.

    Example:
        >>> from livescore.judges import OpenAIJudge
        >>> price_of(OpenAIJudge("gpt-4o-mini", base_url="http://127.0.0.1:1/v1")).output
        0.6
    """
    price = getattr(judge, "price", None)
    return price if isinstance(price, Price) else None
