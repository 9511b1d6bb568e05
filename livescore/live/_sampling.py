"""Per-scorer sampling, decided once per run and deterministically from the trace id."""

from __future__ import annotations

import hashlib
import math
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from livescore.runs import Run
from livescore.scoring import Scorer, ScoreResult

__all__ = (
    "BudgetSampling",
    "SamplingDecision",
    "SamplingSpec",
    "ScorerConfig",
    "sample_fraction",
)

_TWO_64 = float(2**64)
_PERIODS = {"minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True, slots=True)
class BudgetSampling:
    """Sampling that aims at a number of scores, or a judge spend, per window.

    The rate is adjusted ``steps`` times a window (fixed windows aligned to UTC, like judge
    budgets): each adjustment aims what is left of the window's target at the runs
    expected in the rest of it (their arrival rate so far), so a quiet hour samples more
    and a busy one less. Within one adjustment interval the rate is fixed, so the decision
    is still made from the trace id alone (``sample_fraction(trace id) < rate``: the same
    runs for every scorer at that rate, and for every replica at that rate); and the rate
    applied is carried on every score (``livescore.sample_rate``) so dashboards re-weight.
    Once the window's target is reached, or an interval has taken twice its share, no more
    runs are sampled until the next interval.

    A spend target (``usd``) counts each sampled run at its scorer's recent cost per score
    (learned from the scores this process finishes: in-process scoring, or
    ``expected_cost`` until then, and always on a fleet, where the workers score). Each
    replica aims at the target on its own: divide it by the replicas.

    Written in a :class:`ScorerConfig` as ``sampling=BudgetSampling(scores=600, per="hour")``
    or ``sampling=BudgetSampling(usd=5, per="day")``.

    Args:
        scores: Scores per window to aim at.
        usd: Judge spend per window to aim at, in US dollars.
        per: ``"minute"``, ``"hour"`` or ``"day"``.
        initial_rate: The rate before anything is known (the first interval).
        min_rate: The lowest rate it adjusts to (0: it may stop sampling).
        steps: Adjustments per window.
        expected_cost: USD per score to assume before any score is seen (``usd`` only).
        clock: Epoch seconds now (``time.time``): which window and interval it is.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> config = ScorerConfig(create_keyword_coverage_scorer(),
        ...                       sampling=BudgetSampling(scores=100, per="minute"))
        >>> config.rate is None, config.budget_sampling is not None
        (True, True)
    """

    scores: int | None = None
    usd: float | None = None
    per: str = "hour"
    initial_rate: float = 1.0
    min_rate: float = 0.0
    steps: int = 60
    expected_cost: float | None = None
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.scores is None) == (self.usd is None):
            raise ValueError("budget sampling aims at scores=N or usd=X per window (one of them)")
        if self.scores is not None and (
            isinstance(self.scores, bool) or not isinstance(self.scores, int) or self.scores < 1
        ):
            raise ValueError(f"scores must be a positive int, not {self.scores!r}")
        for name in ("usd", "expected_cost"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not (isinstance(value, int | float) and math.isfinite(value) and value > 0)
            ):
                raise ValueError(f"{name} must be a positive number of dollars, not {value!r}")
        if self.per not in _PERIODS:
            raise ValueError(f"per must be 'minute', 'hour' or 'day', not {self.per!r}")
        for name in ("initial_rate", "min_rate"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise ValueError(f"{name} must be between 0 and 1, not {value!r}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 1:
            raise ValueError(f"steps must be a positive int, not {self.steps!r}")


SamplingSpec: TypeAlias = float | BudgetSampling | Callable[[Run], bool]
"""How often a scorer runs: a rate in ``[0, 1]``, a :class:`BudgetSampling` (a number of
scores or a judge spend per window), or a predicate of the finished :class:`~livescore.Run`."""


class _BudgetRate:
    """The adjusting rate of one :class:`BudgetSampling` (thread-safe, process-local)."""

    def __init__(self, spec: BudgetSampling) -> None:
        self.spec = spec
        self.window_s = _PERIODS[spec.per]
        self.step_s = self.window_s / spec.steps
        self._lock = threading.Lock()
        self._window = -1  # the current window's start
        self._step = -1  # the current interval's index in it
        self.rate = spec.initial_rate
        self._used = 0.0  # units (scores, or USD) the window's sampled runs take
        self._step_used = 0.0
        self._step_share = math.inf
        self._offered = 0  # runs offered in the current interval
        self._arrivals: float | None = None  # runs per interval, smoothed
        self._cost = spec.expected_cost  # USD per score, smoothed

    def decide(self, fraction: float) -> float | None:
        """The rate that sampled the run (``fraction`` below it), or ``None``: not sampled."""
        with self._lock:
            self._roll(self.spec.clock())
            self._offered += 1
            unit = self._unit()
            target = self._target()
            if self._used + unit > target or self._step_used + unit > self._step_share:
                return None
            if fraction >= self.rate:
                return None
            self._used += unit
            self._step_used += unit
            return self.rate

    def observe(self, cost: float | None) -> None:
        """A score of this scorer finished, costing ``cost`` USD (``None``: unknown)."""
        if cost is None or self.spec.usd is None:
            return
        with self._lock:
            self._cost = cost if self._cost is None else 0.8 * self._cost + 0.2 * cost

    def _target(self) -> float:
        if self.spec.scores is not None:
            return float(self.spec.scores)
        return float(self.spec.usd or 0.0)

    def _unit(self) -> float:
        if self.spec.scores is not None:
            return 1.0
        return self._cost if self._cost is not None else 0.0

    def _roll(self, now: float) -> None:
        window = int(now) - int(now) % self.window_s
        step = min(int((now - window) / self.step_s), self.spec.steps - 1)
        if window == self._window and step == self._step:
            return
        if window != self._window:
            self._window, self._used = window, 0.0
        if self._step >= 0:
            seen = float(self._offered)
            self._arrivals = seen if self._arrivals is None else 0.5 * self._arrivals + 0.5 * seen
        self._step, self._offered, self._step_used = step, 0, 0.0
        steps_left = self.spec.steps - step
        share = max(self._target() - self._used, 0.0) / steps_left
        unit = self._unit()
        # Twice its share at most: a burst cannot spend the window in one interval.
        self._step_share = max(2 * share, unit)
        if self._arrivals and unit > 0:
            rate = share / (self._arrivals * unit)
            self.rate = min(1.0, max(self.spec.min_rate, rate))
        elif self._arrivals and self.spec.usd is not None:
            self.rate = self.spec.initial_rate  # no cost seen yet: nothing to aim with


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
        sampling: A rate in ``[0, 1]`` (default ``1.0``: every run), a
            :class:`BudgetSampling` that aims at a number of scores or a judge spend per
            window, or a predicate ``(run) -> bool``. A rate is decided from the trace id
            before the run is captured; a predicate sees the finished run and is decided at
            :meth:`LiveDispatcher.submit` (so the run is always captured, and its scores
            carry no sample rate).
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
    """The sampling rate, or ``None`` when ``sampling`` is a predicate or adjusts itself
    (:class:`BudgetSampling`: each score carries the rate that sampled it)."""
    budget_sampling: BudgetSampling | None = field(init=False, default=None)
    """The :class:`BudgetSampling`, when ``sampling`` is one."""
    _budget_rate: _BudgetRate | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.scorer, Scorer):
            raise TypeError(f"ScorerConfig needs a livescore Scorer, not {self.scorer!r}")
        sid = self.scorer.id
        sampling = self.sampling
        rate = None
        if isinstance(sampling, BudgetSampling):
            object.__setattr__(self, "budget_sampling", sampling)
            object.__setattr__(self, "_budget_rate", _BudgetRate(sampling))
        elif not callable(sampling):
            rate = _parse_rate(sampling, sid)
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
        sampling: Any = self.rate if self.rate is not None else "<predicate>"
        if self.budget_sampling is not None:
            sampling = self.budget_sampling
        return f"ScorerConfig({self.scorer.id!r}, sampling={sampling})"

    @property
    def adaptive(self) -> bool:
        """Whether the rate adjusts itself (:class:`BudgetSampling`)."""
        return self._budget_rate is not None

    def current_rate(self) -> float | None:
        """The rate it samples at now (its fixed rate; the adjusted one of a budget)."""
        return self._budget_rate.rate if self._budget_rate is not None else self.rate

    def record_score(self, result: ScoreResult) -> None:
        """Tell a :class:`BudgetSampling` what one of its scores cost (others ignore it)."""
        if self._budget_rate is not None and result.status != "skipped":
            self._budget_rate.observe(result.usage.cost_usd)


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
        conversation_scorers: The conversation scorers that picked the run's conversation
            (decided from the conversation id, so every turn of a conversation gets the
            same answer).

    Example:
        >>> decision = SamplingDecision(key="abc", scorers=(), deferred=(), fraction=0.5)
        >>> decision.sampled
        False
    """

    key: str | None
    scorers: tuple[ScorerConfig, ...]
    deferred: tuple[ScorerConfig, ...] = ()
    fraction: float = 0.0
    conversation_scorers: tuple[ScorerConfig, ...] = ()
    rates: tuple[float | None, ...] = ()
    """The rate that picked each of ``scorers`` (empty: each one's fixed ``rate``)."""

    def rate_of(self, index: int) -> float | None:
        """The rate that picked ``scorers[index]``."""
        return self.rates[index] if self.rates else self.scorers[index].rate

    @property
    def sampled(self) -> bool:
        """Whether any scorer may score the run (so the run is worth capturing)."""
        return bool(self.scorers or self.deferred or self.conversation_scorers)


def decide_conversation(
    configs: tuple[ScorerConfig, ...], conversation_id: str
) -> tuple[ScorerConfig, ...]:
    """The conversation scorers that sample ``conversation_id`` (pure; deterministic).

    Example:
        >>> decide_conversation((), "thread-1")
        ()
    """
    if not configs:
        return ()
    fractions: dict[str, float] = {}
    picked: list[ScorerConfig] = []
    for config in configs:
        fraction = fractions.get(config.salt)
        if fraction is None:
            key = conversation_id if not config.salt else f"{config.salt}:{conversation_id}"
            fraction = fractions[config.salt] = sample_fraction(key)
        if config.rate is not None and fraction < config.rate:
            picked.append(config)
    return tuple(picked)


def decide(configs: tuple[ScorerConfig, ...], key: str | None) -> SamplingDecision:
    """Decide the scorers of one run (pure: no counters move)."""
    # A run without any id cannot be tied to other replicas' decisions, so it gets a random
    # key: still the right rate, just not reproducible.
    base = key if key is not None else uuid.uuid4().hex
    fractions = {"": sample_fraction(base)}
    picked: list[ScorerConfig] = []
    deferred: list[ScorerConfig] = []
    rates: list[float | None] = []
    adaptive = False
    for config in configs:
        budget_rate = config._budget_rate
        if config.rate is None and budget_rate is None:
            deferred.append(config)
            continue
        fraction = fractions.get(config.salt)
        if fraction is None:
            fraction = fractions[config.salt] = sample_fraction(f"{config.salt}:{base}")
        if budget_rate is not None:
            adaptive = True
            applied = budget_rate.decide(fraction)
            if applied is not None:
                picked.append(config)
                rates.append(applied)
        elif fraction < config.rate:  # type: ignore[operator]
            picked.append(config)
            rates.append(config.rate)
    return SamplingDecision(
        key,
        tuple(picked),
        tuple(deferred),
        fractions[""],
        rates=tuple(rates) if adaptive else (),
    )
