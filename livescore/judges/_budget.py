"""Judge budgets: a spend (USD) or token limit per window, shared by every scorer of a judge.

A :class:`JudgeBudget` is given to a judge (``OpenAIJudge(model, budget=...)``); every
scorer using that judge asks it before its first judge call and tells it the cost after.

**Reservation and settlement.** Before a score's first judge call, the score reserves its
*expected cost*: the most any of its scorer's last :data:`HISTORY` scores cost on this
budget, priced at the judge's price (a scorer with no history yet takes the most any
scorer of the budget cost; with nothing at all to go on, the score runs *alone*, see
below). The ledger admits the reservation when

    settled spend + open reservations + this reservation <= the limit,

and otherwise admits it only *alone*: when this process has no other score of this budget
in flight and something is left (settled + reserved < limit). A reservation that does not
fit now but would once the scores in flight settle (settled + this <= limit: reservations
are pessimistic, so settling frees room) waits for them, up to ``wait`` seconds. Anything
else is **skipped** before any judge call, with a reason naming the budget
(``budget_exhausted``). After the score, its reservation is released and its real cost
(from the usage the server reported) is added to the settled spend of the window it was
reserved in, even when the score failed or was cancelled.

**The bound.** Admitted scores whose cost stays within their reservation never take the
spend past the limit; the only score allowed past it is one admitted alone, and a process
has at most one of those in flight. So the spend of a window exceeds the budget by at most
one score's cost per process (sharing the budget), plus what scores that cost more than
their reservation (more than any of their scorer's last 16 scores) add beyond it.

**Windows** are fixed and aligned to UTC (``per="day"`` resets at midnight UTC,
``"hour"`` on the hour, ``"minute"`` on the minute); ``per=None`` never resets (a total, as
``livescore eval --max-cost`` uses). **Fleet-wide**: with ``broker="redis://..."`` the
ledger lives in Redis (one Lua call per reservation), so every process of the fleet shares
it; each process keeps its own cost history.
"""

from __future__ import annotations

import datetime
import itertools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

import anyio

from livescore._errors import BudgetLedgerError, JudgeConfigError
from livescore._usage import JudgeUsage
from livescore.judges._prices import Price, PriceTable, price_of, price_table

if TYPE_CHECKING:
    from livescore.judges._protocol import Judge

__all__ = (
    "BUDGET_LEDGERS_GROUP",
    "HISTORY",
    "Admission",
    "BudgetLedger",
    "BudgetPeriod",
    "BudgetStats",
    "BudgetTicket",
    "JudgeBudget",
    "LocalBudgetLedger",
    "Reservation",
    "budget_of",
)

BudgetPeriod = Literal["day", "hour", "minute"]
"""The window a budget's limit applies to (fixed windows, aligned to UTC)."""

PERIOD_SECONDS: Mapping[str, int] = {"minute": 60, "hour": 3600, "day": 86400}

HISTORY = 16
"""How many of a scorer's recent scores its expected cost is taken from (their maximum)."""

BUDGET_LEDGERS_GROUP = "livescore.budget_ledgers"
"""The entry point group where ``broker=`` finds its ledger (livescore-ai declares
``livescore.fleet:RedisBudgetLedger`` as ``broker``)."""

_log = logging.getLogger("livescore.judges")

# How often a waiting score asks again (doubling up to the longest pause).
_POLL_S = 0.01
_MAX_POLL_S = 0.1


# -- the ledger seam ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reservation:
    """What one score asks a ledger to reserve.

    Attributes:
        window_s: The window's length in seconds (0: no window, a total).
        limit_usd: The limit in USD (``None``: none).
        limit_tokens: The limit in tokens (``None``: none).
        usd: The expected cost to reserve.
        tokens: The expected tokens to reserve.
        alone: This process has no other score of the budget in flight (so it may take
            what is left even when the expected cost does not fit).
        lease_s: How long the reservation holds if it is never settled.
    """

    window_s: int
    limit_usd: float | None
    limit_tokens: int | None
    usd: float
    tokens: int
    alone: bool
    lease_s: float


@dataclass(frozen=True, slots=True)
class Admission:
    """A ledger's answer to one reservation.

    Attributes:
        admitted: Whether the reservation was taken.
        window: The start of the window it counts in (epoch seconds; 0 without windows).
        window_s: The window's length in seconds (0: none).
        lease: The reservation's id, to settle it with.
        spent_usd: The window's settled spend, before this reservation.
        spent_tokens: The window's settled tokens, before this reservation.
        reserved_usd: Open reservations (USD), before this one.
        reserved_tokens: Open reservations (tokens), before this one.
    """

    admitted: bool
    window: int = 0
    window_s: int = 0
    lease: str = ""
    spent_usd: float = 0.0
    spent_tokens: int = 0
    reserved_usd: float = 0.0
    reserved_tokens: int = 0


@runtime_checkable
class BudgetLedger(Protocol):
    """Where a budget's spend and open reservations are kept (this process, or Redis)."""

    async def admit(self, request: Reservation) -> Admission:
        """Reserve ``request.usd`` / ``request.tokens`` if they fit (or ``request.alone``
        and something is left): the rule of :func:`fits` for each limit."""
        ...

    async def settle(self, admission: Admission, *, usd: float, tokens: int) -> None:
        """Release the reservation and add the real cost to its window."""
        ...

    async def spent(self, *, window_s: int) -> tuple[float, int]:
        """The current window's settled ``(usd, tokens)``."""
        ...


def _is_number(value: object) -> bool:
    """``value`` is an int or a float, not a bool (``True`` is an int to ``isinstance``)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def window_start(window_s: int, now: float | None = None) -> int:
    """The start (epoch seconds) of the window holding ``now``; 0 without windows.

    Example:
        >>> window_start(3600, 7300.0), window_start(0, 7300.0)
        (7200, 0)
    """
    if window_s <= 0:
        return 0
    t = int(time.time() if now is None else now)
    return t - t % window_s


def fits(spent: float, reserved: float, amount: float, limit: float | None, *, alone: bool) -> bool:
    """The admission rule for one limit (see the module docstring).

    Example:
        >>> fits(0.8, 0.1, 0.1, 1.0, alone=False), fits(0.8, 0.1, 0.2, 1.0, alone=False)
        (True, False)
        >>> fits(0.8, 0.1, 0.2, 1.0, alone=True), fits(1.0, 0.0, 0.2, 1.0, alone=True)
        (True, False)
    """
    if limit is None:
        return True
    # A hair of tolerance: float sums of many small costs must not refuse an exact fit.
    if spent + reserved + amount <= limit * (1 + 1e-9):
        return True
    return alone and spent + reserved < limit


class LocalBudgetLedger:
    """A budget ledger in this process's memory (the default; thread-safe).

    Args:
        clock: Epoch seconds now (``time.time``), which decides the window.

    Example:
        >>> import anyio
        >>> ledger = LocalBudgetLedger()
        >>> async def main():
        ...     a = await ledger.admit(Reservation(0, 1.0, None, 0.4, 0, False, 60.0))
        ...     await ledger.settle(a, usd=0.5, tokens=0)
        ...     return await ledger.spent(window_s=0)
        >>> anyio.run(main)
        (0.5, 0)
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock  # epoch seconds: which window "now" is in
        self._lock = threading.Lock()
        self._spent: dict[int, list[float]] = {}  # window -> [usd, tokens]
        self._leases: dict[str, tuple[int, float, int]] = {}  # id -> (window, usd, tokens)
        self._ids = itertools.count(1)

    async def admit(self, request: Reservation) -> Admission:
        r = request
        window = window_start(r.window_s, self._clock())
        with self._lock:
            spent = self._spent.setdefault(window, [0.0, 0])
            # Windows before this one can only be settled into, not admitted in: forget
            # those with nothing left to settle.
            open_windows = {w for w, _, _ in self._leases.values()}
            for old in [w for w in self._spent if w < window and w not in open_windows]:
                del self._spent[old]
            reserved_usd = sum(u for w, u, _ in self._leases.values() if w == window)
            reserved_tokens = sum(t for w, _, t in self._leases.values() if w == window)
            admitted = fits(spent[0], reserved_usd, r.usd, r.limit_usd, alone=r.alone) and fits(
                spent[1], reserved_tokens, r.tokens, r.limit_tokens, alone=r.alone
            )
            lease = ""
            if admitted:
                lease = str(next(self._ids))
                self._leases[lease] = (window, r.usd, r.tokens)
            return Admission(
                admitted,
                window,
                r.window_s,
                lease,
                spent[0],
                int(spent[1]),
                reserved_usd,
                reserved_tokens,
            )

    async def settle(self, admission: Admission, *, usd: float, tokens: int) -> None:
        with self._lock:
            self._leases.pop(admission.lease, None)
            spent = self._spent.setdefault(admission.window, [0.0, 0])
            spent[0] += usd
            spent[1] += tokens

    async def spent(self, *, window_s: int) -> tuple[float, int]:
        with self._lock:
            spent = self._spent.get(window_start(window_s, self._clock()), [0.0, 0])
            return float(spent[0]), int(spent[1])


# -- the budget ---------------------------------------------------------------------------


@dataclass(slots=True)
class BudgetStats:
    """What one process's scores did with a budget (counts since it was built).

    Attributes:
        admitted: Scores admitted (their judge calls went ahead).
        exhausted: Scores skipped because the budget could not pay them
            (``budget_exhausted``).
        fallbacks: Admitted scores that ran on the fallback (a cheaper judge or mode).
        alone: Admitted scores that ran alone (nothing to go on, or the last of a window).
        settled_usd: The cost these scores settled, in USD.
        settled_tokens: The tokens these scores settled.
    """

    admitted: int = 0
    exhausted: int = 0
    fallbacks: int = 0
    alone: int = 0
    settled_usd: float = 0.0
    settled_tokens: int = 0


@dataclass(slots=True)
class BudgetTicket:
    """A budget's answer to one score: admitted (with what to run it on) or refused.

    Attributes:
        admitted: Whether the score may call its judge.
        judge: The judge to call (the fallback judge when it runs on one).
        mode: The judge mode to run in (``"one_call"`` on that fallback), else ``None``.
        fallback: ``"judge"`` or the mode when the fallback runs it; ``None`` otherwise.
        reason: Why it was refused (names the budget); ``""`` when admitted.
        budget: The budget it was admitted by.
        scorer_id: The scorer whose cost history it adds to.
        variant: Which of that scorer's histories (``""``, ``"one_call"``,
            ``"judge:<model>"``).
        admission: The ledger's answer (what :meth:`settle` releases).
        settled: Whether it was settled (a second :meth:`settle` does nothing).
    """

    admitted: bool
    judge: Judge | None = None
    mode: str | None = None
    fallback: str | None = None
    reason: str = ""
    budget: JudgeBudget | None = None
    scorer_id: str = ""
    variant: str = ""
    admission: Admission | None = None
    settled: bool = False

    async def settle(self, usage: JudgeUsage, *, record: bool = True) -> None:
        """Release the reservation and charge ``usage``; ``record`` adds it to the scorer's
        history (a score skipped before any call is not a cost sample)."""
        if self.settled or not self.admitted or self.budget is None:
            return
        self.settled = True
        await self.budget._settle(self, usage, record=record)


_Usage = tuple[int, int, int]  # input, cached input, output tokens of one score


class JudgeBudget:
    """A spend or token limit per window for a judge, shared by every scorer using it.

    Give it to the judge: ``OpenAIJudge("gpt-4o-mini", budget=JudgeBudget(usd=5, per="day"))``.
    A score the remaining budget cannot pay is skipped before any judge call, with a reason
    naming the budget and ``livescore.judge.budget_exhausted = true`` on its span. How a
    score's cost is reserved and settled, and the overspend bound: see
    :mod:`livescore.judges._budget` (and the docs' "Judge cost" page).

    Args:
        usd: The most US dollars per window (needs the judge's price: ``prices=`` here or
            on the judge, ``LIVESCORE_JUDGE_PRICES``, or a well-known model).
        tokens: The most judge tokens (input plus output) per window.
        per: ``"day"``, ``"hour"`` or ``"minute"`` (UTC-aligned windows), or ``None`` for
            a total that never resets.
        prices: A price table, ``{model_name: (usd_per_million_input_tokens,
            usd_per_million_output_tokens[, usd_per_million_cached_input_tokens])}``, for
            judges of this budget that were given none.
        fallback: When the budget runs low, score with a cheaper judge (a
            :class:`~livescore.judges.Judge`) or in ``"one_call"`` judge mode (for the
            scorers that offer it) instead of skipping.
        fallback_below: "Low": the share of the limit left below which the fallback takes
            over (default 0.25: the last quarter is spent on the fallback).
        broker: A Redis URL: the ledger lives there and every process using it shares the
            budget (needs ``livescore-ai[fleet]``).
        name: Separates budgets sharing one Redis (and names the budget in skip reasons).
        lease: Seconds a reservation is held at most when its process dies mid-score
            (Redis ledger).
        wait: The longest a score waits, in seconds, for scores in flight to settle when
            their settling may leave room for it (their reservations are pessimistic), or
            for its scorer's first score when it has nothing to go on; then it is skipped.
        ledger: A ready :class:`BudgetLedger` (instead of ``broker``).

    Example:
        >>> budget = JudgeBudget(usd=5.0, per="day")
        >>> budget.describe()
        "judge budget 'judge' ($5 per day)"
    """

    def __init__(
        self,
        usd: float | None = None,
        *,
        tokens: int | None = None,
        per: BudgetPeriod | None = "day",
        prices: PriceTable | None = None,
        fallback: Judge | Literal["one_call"] | None = None,
        fallback_below: float = 0.25,
        broker: str | None = None,
        name: str = "judge",
        lease: float = 300.0,
        wait: float = 10.0,
        ledger: BudgetLedger | None = None,
    ) -> None:
        if usd is None and tokens is None:
            raise JudgeConfigError("a JudgeBudget needs usd=... or tokens=... (or both)")
        if usd is not None and (
            isinstance(usd, bool)
            or not isinstance(usd, int | float)
            or not (math.isfinite(usd) and usd > 0)
        ):
            raise JudgeConfigError(f"usd must be a positive number of dollars, not {usd!r}")
        if tokens is not None and (
            isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1
        ):
            raise JudgeConfigError(f"tokens must be a positive int, not {tokens!r}")
        if per is not None and per not in PERIOD_SECONDS:
            raise JudgeConfigError(f"per must be 'day', 'hour', 'minute' or None, not {per!r}")
        if isinstance(fallback, str) and fallback != "one_call":
            raise JudgeConfigError(
                f"fallback must be a cheaper Judge or 'one_call' (the judge mode), not {fallback!r}"
            )
        if fallback is not None and not isinstance(fallback, str):
            from livescore.judges._protocol import Judge

            if not isinstance(fallback, Judge):
                raise JudgeConfigError(
                    f"fallback must be a Judge or 'one_call', not {type(fallback).__name__}"
                )
        if not (_is_number(fallback_below) and 0 < fallback_below < 1):
            raise JudgeConfigError(
                f"fallback_below must be between 0 and 1, not {fallback_below!r}"
            )
        if not isinstance(name, str) or not name.strip():
            raise JudgeConfigError("a budget's name must be a non-empty string")
        # Finite as well as positive: an infinite lease is accepted by a comparison and then
        # overflows every admission (a reservation's expiry is an integer of milliseconds).
        if not (_is_number(lease) and math.isfinite(lease) and lease > 0):
            raise JudgeConfigError(f"lease must be a positive number of seconds, not {lease!r}")
        if not (_is_number(wait) and math.isfinite(wait) and wait >= 0):
            raise JudgeConfigError(f"wait must be 0 or more seconds, not {wait!r}")
        if broker is not None and ledger is not None:
            raise JudgeConfigError("give a JudgeBudget broker= or ledger=, not both")
        self.usd = None if usd is None else float(usd)
        self.tokens = tokens
        self.per: BudgetPeriod | None = per
        self.prices: dict[str, Price] = price_table(prices) if prices is not None else {}
        self.fallback = fallback
        self.fallback_below = float(fallback_below)
        self.name = name.strip()
        self.lease = float(lease)
        self.wait = float(wait)
        self.broker = broker
        self._ledger = ledger if ledger is not None else _ledger_for(broker, self.name)
        self.stats = BudgetStats()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._history: dict[tuple[str, str], deque[_Usage]] = {}
        if isinstance(fallback, str) or fallback is None:
            return
        self.check_judge(fallback)

    def __repr__(self) -> str:
        return f"JudgeBudget({self._limits()}, name={self.name!r})"

    @property
    def window_s(self) -> int:
        """The window's length in seconds (0: no window)."""
        return PERIOD_SECONDS[self.per] if self.per is not None else 0

    @property
    def ledger(self) -> BudgetLedger:
        """Where the spend is kept."""
        return self._ledger

    def describe(self) -> str:
        """The budget in words, as skip reasons name it."""
        return f"judge budget {self.name!r} ({self._limits()})"

    def _limits(self) -> str:
        parts = []
        if self.usd is not None:
            parts.append(f"${self.usd:g}")
        if self.tokens is not None:
            parts.append(f"{self.tokens:,} tokens")
        per = f" per {self.per}" if self.per is not None else " in all"
        return " and ".join(parts) + per

    def check_judge(self, judge: Judge) -> None:
        """Raise :class:`~livescore.judges.JudgeConfigError` when a USD budget cannot price
        ``judge``."""
        if self.usd is not None and price_of(judge) is None:
            raise JudgeConfigError(
                f"{self.describe()} counts dollars, but judge model {judge.model_name!r} has no "
                f"known price: give OpenAIJudge(..., prices=(input, output)) or "
                f"JudgeBudget(prices={{{judge.model_name!r}: (input, output)}}) in USD per "
                "million tokens, or set LIVESCORE_JUDGE_PRICES"
            )

    async def spent(self) -> tuple[float, int]:
        """The current window's settled ``(usd, tokens)`` (fleet-wide with a broker)."""
        return await self._ledger.spent(window_s=self.window_s)

    # -- a score's turn -------------------------------------------------------------------

    async def admit(self, scorer_id: str, judge: Judge, *, one_call: bool = False) -> BudgetTicket:
        """Reserve one score of ``scorer_id`` on ``judge`` (its fallback when low).

        Args:
            scorer_id: The scorer (its cost history).
            judge: The scorer's judge.
            one_call: Whether the scorer offers the ``"one_call"`` judge mode (for a
                ``fallback="one_call"``).

        Returns:
            An admitted ticket (settle it after the score), or a refused one with the reason.
        """
        options: list[tuple[str, Judge, str | None]] = [("", judge, None)]
        if self.fallback == "one_call" and one_call:
            options.append(("one_call", judge, "one_call"))
        elif self.fallback is not None and not isinstance(self.fallback, str):
            options.append((f"judge:{self.fallback.model_name}", self.fallback, "judge"))
        low_share = self.fallback_below if len(options) > 1 else 0.0
        last: Admission | None = None
        for index, (variant, candidate, fallback) in enumerate(options):
            self.check_judge(candidate)
            share = 1.0 - low_share if index == 0 else 1.0
            try:
                admission = await self._reserve(scorer_id, variant, candidate, share)
            except BudgetLedgerError as exc:
                with self._lock:
                    self.stats.exhausted += 1
                return BudgetTicket(
                    False,
                    reason=f"{self.describe()} cannot be checked ({exc}): the score was "
                    "skipped before any judge call (budget_exhausted)",
                )
            if admission.admitted:
                mode = "one_call" if fallback == "one_call" else None
                with self._lock:
                    self.stats.admitted += 1
                    self.stats.fallbacks += fallback is not None
                return BudgetTicket(
                    True,
                    judge=candidate,
                    mode=mode,
                    fallback=fallback,
                    budget=self,
                    scorer_id=scorer_id,
                    variant=variant,
                    admission=admission,
                )
            last = admission
        with self._lock:
            self.stats.exhausted += 1
        return BudgetTicket(False, reason=self._refusal(last))

    async def _reserve(self, scorer_id: str, variant: str, judge: Judge, share: float) -> Admission:
        limit_usd = None if self.usd is None else self.usd * share
        limit_tokens = None if self.tokens is None else math.floor(self.tokens * share)
        deadline = time.monotonic() + self.wait
        pause = _POLL_S
        while True:
            expected = self._expected(scorer_id, variant, judge)
            with self._lock:
                alone = self._in_flight == 0
                # Nothing to go on: run alone, once this process's other scores are done.
                may_ask = expected is not None or alone
                if may_ask:
                    self._in_flight += 1
            if may_ask:
                usd, tokens = expected if expected is not None else (0.0, 0)
                try:
                    admission = await self._ledger.admit(
                        Reservation(
                            self.window_s, limit_usd, limit_tokens, usd, tokens, alone, self.lease
                        )
                    )
                except BaseException:
                    with self._lock:
                        self._in_flight -= 1
                    raise
                with self._lock:
                    if admission.admitted:
                        self.stats.alone += alone
                        return admission
                    self._in_flight -= 1
                # Refused now; but when the scores in flight settle below what they reserved
                # (reservations are the most recent scores cost), it may fit: wait for them.
                later = admission.reserved_usd > 0 or admission.reserved_tokens > 0
                later = (
                    later
                    and (limit_usd is None or admission.spent_usd + usd <= limit_usd)
                    and (limit_tokens is None or admission.spent_tokens + tokens <= limit_tokens)
                )
                if not later or time.monotonic() + pause > deadline:
                    return admission
            elif time.monotonic() + pause > deadline:
                return _WAITED
            await anyio.sleep(pause)
            pause = min(pause * 2, _MAX_POLL_S)

    def _expected(self, scorer_id: str, variant: str, judge: Judge) -> tuple[float, int] | None:
        """The expected ``(usd, tokens)`` of one score: the most of its recent scores."""
        with self._lock:
            samples = self._history.get((scorer_id, variant))
            if not samples and variant:
                # A fallback's first scores: the scorer's own history, priced at the fallback.
                samples = self._history.get((scorer_id, ""))
            if not samples:
                # A scorer's first score: what the budget's other scorers cost.
                samples = deque(itertools.chain.from_iterable(self._history.values()))
            if not samples:
                return None
            usages = list(samples)
        price = price_of(judge)
        usd = 0.0
        if price is not None and self.usd is not None:
            usd = max(price.cost(_as_usage(u)) for u in usages)
        tokens = max(u[0] + u[2] for u in usages)
        return usd, tokens

    async def _settle(self, ticket: BudgetTicket, usage: JudgeUsage, *, record: bool) -> None:
        assert ticket.admission is not None
        assert ticket.judge is not None
        price = price_of(ticket.judge)
        usd = price.cost(usage) if price is not None else 0.0
        tokens = usage.total_tokens
        try:
            with anyio.CancelScope(shield=True):
                await self._ledger.settle(ticket.admission, usd=usd, tokens=tokens)
        except BudgetLedgerError as exc:
            # Its reservation lapses after the lease; the cost is missing from the ledger.
            _log.warning("livescore: %s could not settle a score: %s", self.describe(), exc)
        finally:
            with self._lock:
                self._in_flight -= 1
                self.stats.settled_usd += usd
                self.stats.settled_tokens += tokens
                if record:
                    history = self._history.setdefault(
                        (ticket.scorer_id, ticket.variant), deque(maxlen=HISTORY)
                    )
                    history.append(
                        (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens)
                    )

    def _refusal(self, admission: Admission | None) -> str:
        if admission is _WAITED:
            return (
                f"{self.describe()} had no room within {self.wait:g} s (this process's scores "
                "in flight hold it): the score was skipped before any judge call "
                "(budget_exhausted)"
            )
        spent = []
        if admission is not None and self.usd is not None:
            used = admission.spent_usd + admission.reserved_usd
            spent.append(f"${used:.4g} of ${self.usd:g}")
        if admission is not None and self.tokens is not None:
            used_tokens = admission.spent_tokens + admission.reserved_tokens
            spent.append(f"{used_tokens:,} of {self.tokens:,} tokens")
        used_text = f": {' and '.join(spent)} spent or reserved" if spent else ""
        if admission is None or admission.window == 0 or self.per is None:
            resets = ""
        else:
            end = datetime.datetime.fromtimestamp(
                admission.window + self.window_s, tz=datetime.timezone.utc
            )
            resets = f"; it resets at {end:%Y-%m-%d %H:%M} UTC"
        return (
            f"{self.describe()} is exhausted{used_text}{resets}: the score was skipped "
            "before any judge call (budget_exhausted)"
        )


_WAITED = Admission(False)  # a score that waited `wait` seconds for its turn, in vain


def _as_usage(u: _Usage) -> JudgeUsage:
    return JudgeUsage(input_tokens=u[0], cached_input_tokens=u[1], output_tokens=u[2])


def _ledger_for(broker: str | None, name: str) -> BudgetLedger:
    if broker is None:
        return LocalBudgetLedger()
    from importlib.metadata import entry_points

    found = entry_points(group=BUDGET_LEDGERS_GROUP, name="broker")
    if not found:
        from livescore._version import install_hint

        raise JudgeConfigError(
            f"JudgeBudget(broker=...) needs the fleet's Redis ledger: {install_hint('fleet')}"
        )
    ledger: BudgetLedger = next(iter(found)).load()(broker, name=name)
    return ledger


def budget_of(judge: object) -> JudgeBudget | None:
    """The budget a judge spends from (its ``budget`` attribute), or ``None``.

    Example:
        >>> from livescore.judges import OpenAIJudge
        >>> budget_of(OpenAIJudge("gpt-4o-mini", base_url="http://127.0.0.1:1/v1")) is None
        True
    """
    budget = getattr(judge, "budget", None)
    return budget if isinstance(budget, JudgeBudget) else None
