"""Per-scorer sampling, decided once per run and deterministically from the trace id."""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from livescore.runs import Run
from livescore.scoring import Scorer

__all__ = (
    "SamplingDecision",
    "SamplingSpec",
    "ScorerConfig",
    "sample_fraction",
)

SamplingSpec: TypeAlias = float | Callable[[Run], bool]
"""How often a scorer runs: a rate in ``[0, 1]``, or a predicate of the finished
:class:`~livescore.Run`."""

_TWO_64 = float(2**64)


def sample_fraction(key: str) -> float:
    """Map a key (a trace id) to a uniform number in ``[0, 1)``; the same key, the same number.

    A run is sampled for a scorer when ``sample_fraction(key) < rate``. Every scorer and
    every replica computes the same fraction for a trace, so scorers at the same rate score
    the same runs and a lower rate samples a subset of a higher one.

    Example:
        >>> sample_fraction("4bf92f3577b34da6a3ce929d0e0e4736") == sample_fraction(
        ...     "4bf92f3577b34da6a3ce929d0e0e4736")
        True
    """
    digest = hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / _TWO_64


def _parse_rate(sampling: Any, scorer_id: str) -> float:
    where = f"scorer {scorer_id!r}: sampling"
    if isinstance(sampling, bool) or not isinstance(sampling, int | float):
        raise TypeError(
            f"{where} must be a rate between 0 and 1 (sampling=0.1) or a function of the "
            f"run, not {sampling!r}"
        )
    rate = float(sampling)
    if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
        raise ValueError(f"{where} rate must be between 0 and 1, not {sampling!r}")
    return rate


@dataclass(frozen=True, slots=True, eq=False)
class ScorerConfig:
    """A scorer as the live dispatcher runs it: how often, how long, how many at once.

    Args:
        scorer: The scorer.
        sampling: A rate in ``[0, 1]`` (default ``1.0``: every run) or a predicate
            ``(run) -> bool``. A rate is
            decided from the trace id before the run is captured; a predicate sees the
            finished run and is decided at :meth:`LiveDispatcher.submit` (so the run is
            always captured, and its scores carry no sample rate).
        timeout: Seconds one score may take (judge calls included) before it is recorded as
            failed with ``error.type = "timeout"``.
        max_concurrency: How many scores of this scorer run at once.
        salt: Scorers sharing a salt (all of them by default) sample correlated runs:
            at the same rate they score the same runs, and a lower rate scores a subset of
            a higher one. Give a scorer a salt of its own to sample independently.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> config = ScorerConfig(create_keyword_coverage_scorer(), sampling=0.25)
        >>> config.rate
        0.25
    """

    scorer: Scorer
    sampling: SamplingSpec = 1.0
    timeout: float = 60.0
    max_concurrency: int = 4
    salt: str = ""
    rate: float | None = field(init=False, default=None)
    """The sampling rate, or ``None`` when ``sampling`` is a predicate."""

    def __post_init__(self) -> None:
        if not isinstance(self.scorer, Scorer):
            raise TypeError(f"ScorerConfig needs a livescore Scorer, not {self.scorer!r}")
        sid = self.scorer.id
        rate = None if callable(self.sampling) else _parse_rate(self.sampling, sid)
        object.__setattr__(self, "rate", rate)
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, int | float):
            raise TypeError(f"scorer {sid!r}: timeout must be a number of seconds")
        if not self.timeout > 0:  # also rejects NaN
            raise ValueError(f"scorer {sid!r}: timeout must be positive, not {self.timeout!r}")
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int):
            raise TypeError(f"scorer {sid!r}: max_concurrency must be an int")
        if not isinstance(self.salt, str):
            raise TypeError(f"scorer {sid!r}: salt must be a string")
        if self.max_concurrency < 1:
            raise ValueError(
                f"scorer {sid!r}: max_concurrency must be at least 1, not {self.max_concurrency}"
            )

    @property
    def scorer_id(self) -> str:
        """The scorer's id."""
        return self.scorer.id

    def __repr__(self) -> str:
        sampling = self.rate if self.rate is not None else "<predicate>"
        return f"ScorerConfig({self.scorer.id!r}, sampling={sampling})"


@dataclass(frozen=True, slots=True)
class SamplingDecision:
    """Which scorers will score one run, decided once from its key.

    Attributes:
        key: The key the decision was made from (a trace id, or a run id); ``None`` when the
            run had neither and the decision was random.
        scorers: The rate-sampled scorers that picked this run.
        deferred: Scorers with a predicate; they decide at submit, when the run is complete.
        fraction: ``sample_fraction(key)``: the run is sampled by every unsalted rate above
            it.

    Example:
        >>> decision = SamplingDecision(key="abc", scorers=(), deferred=(), fraction=0.5)
        >>> decision.sampled
        False
    """

    key: str | None
    scorers: tuple[ScorerConfig, ...]
    deferred: tuple[ScorerConfig, ...] = ()
    fraction: float = 0.0

    @property
    def sampled(self) -> bool:
        """Whether any scorer may score the run (so the run is worth capturing)."""
        return bool(self.scorers or self.deferred)


def decide(configs: tuple[ScorerConfig, ...], key: str | None) -> SamplingDecision:
    """Decide the scorers of one run (pure: no counters move)."""
    # A run without any id cannot be tied to other replicas' decisions, so it gets a random
    # key: still the right rate, just not reproducible.
    base = key if key is not None else uuid.uuid4().hex
    fractions = {"": sample_fraction(base)}
    picked: list[ScorerConfig] = []
    deferred: list[ScorerConfig] = []
    for config in configs:
        if config.rate is None:
            deferred.append(config)
            continue
        fraction = fractions.get(config.salt)
        if fraction is None:
            fraction = fractions[config.salt] = sample_fraction(f"{config.salt}:{base}")
        if fraction < config.rate:
            picked.append(config)
    return SamplingDecision(key, tuple(picked), tuple(deferred), fractions[""])
