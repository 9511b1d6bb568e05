"""Conversations in the live dispatcher: the turns it holds, its idle timers, its bounds.

The dispatcher's worker records each turn (a run with a conversation id that a conversation
scorer sampled) here when it takes the turn from the queue, so the agent's ``submit`` stays
O(1). A conversation is *due* when it has turns no score covers yet and has been quiet for
the idle timeout; the worker then hands a snapshot of it to the conversation scorers. A
conversation that resumes later is due again when it next goes quiet, and that score covers
every turn held, old and new.

The timers are one heap on the worker: a conversation has at most one live entry (a new
turn moves its deadline without touching the heap, unless the deadline comes earlier), and
the worker sleeps until the earliest entry. No thread, task or timer object per
conversation.

Memory is bounded four ways (:class:`ConversationLimits`): conversations held, turns and
characters per conversation, and characters in all. A conversation that reaches its turn or
character bound is scored at once and then forgets its oldest half, so every turn is
covered by at least one score; one evicted to make room for others is scored at once (when
it has unscored turns) and forgotten; one quiet past ``ttl`` after its last score is
forgotten. Each of these is counted (:class:`ConversationStats`). A forgotten conversation
that resumes keeps its turn numbers (a small record of its length stays behind); its next
score covers the turns held since, and says so (``result.turns.first``).
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from livescore.live._sampling import ScorerConfig
from livescore.runs import Conversation, Run, TraceParent
from livescore.scoring import RunMemo

__all__ = (
    "DEFAULT_CONVERSATION_IDLE_TIMEOUT",
    "ConversationDue",
    "ConversationLimits",
    "ConversationStats",
    "ConversationTracker",
    "turn_chars",
)

DEFAULT_CONVERSATION_IDLE_TIMEOUT = 300.0
"""Seconds a conversation must be quiet before its conversation scorers run (5 minutes)."""


@dataclass(frozen=True, slots=True)
class ConversationLimits:
    """How much of its conversations a live dispatcher holds at most.

    Attributes:
        max_conversations: Conversations held at once; past it the least recently active
            one is scored (if it has turns no score covers) and forgotten.
        max_turns: Turns held per conversation; a conversation that reaches it is scored,
            then its oldest half is forgotten.
        max_chars: Characters of text (inputs, outputs, tool results) held per
            conversation; the same as ``max_turns`` past it.
        max_total_chars: Characters held over all conversations; past it the least
            recently active conversations are scored and forgotten.
        ttl: Seconds after its last turn a scored conversation is kept, in case it
            resumes; then it is forgotten (only its length is remembered).
        max_age: Seconds a turn waits unscored at most: a conversation that never goes
            quiet (a turn more often than the idle timeout) is scored this long after its
            first unscored turn anyway (``evaluations["max_age"]``), and again once it goes
            quiet or ends. ``None``: only quiet, the bounds and an end make it due. Without
            an idle timeout (the application ends its conversations) it does not apply.

    Example:
        >>> ConversationLimits(max_conversations=100).max_turns
        100
    """

    max_conversations: int = 10_000
    max_turns: int = 100
    max_chars: int = 100_000
    max_total_chars: int = 50_000_000
    ttl: float = 3600.0
    max_age: float | None = 300.0

    def __post_init__(self) -> None:
        for name in ("max_conversations", "max_turns", "max_chars", "max_total_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        if not (isinstance(self.ttl, int | float) and math.isfinite(self.ttl) and self.ttl > 0):
            raise ValueError(f"ttl must be a positive number of seconds, not {self.ttl!r}")
        age = self.max_age
        if age is not None and not (
            isinstance(age, int | float)
            and not isinstance(age, bool)
            and math.isfinite(age)
            and age > 0
        ):
            raise ValueError(f"max_age must be a positive number of seconds or None, not {age!r}")


@dataclass(frozen=True, slots=True)
class ConversationStats:
    """What the dispatcher did with conversation turns (a snapshot).

    A conversation score's own outcome (scored, failed, skipped, dropped) is counted with
    the run scores, per scorer (:meth:`~livescore.live.LiveDispatcher.stats`), where the
    unit of a conversation scorer is one (conversation, turns covered) evaluation.

    Attributes:
        open: Conversations held now.
        turns: Turns held now, over all conversations.
        chars: Characters held now (an estimate of their text).
        turns_received: Turns recorded since the start.
        turns_dropped: Turns that never reached a conversation, by reason
            (``"queue_full"``, ``"shutdown"``): their conversation's scores miss them.
        turns_handed_off: Turns handed to another process (a fleet keeps them in Redis).
        turns_forgotten: Turns let go to keep within the bounds, after a score covered
            them (or, for a conversation forgotten and resumed, before it resumed).
        evaluations: Conversations handed to the conversation scorers, by why: ``"idle"``
            (quiet for the idle timeout), ``"ended"`` (``end_conversation``),
            ``"turn_limit"`` / ``"char_limit"`` (a bound reached), ``"evicted"`` (room made
            for others), ``"shutdown"``.
        evicted: Conversations let go to make room for others.
        expired: Scored conversations let go after ``ttl`` without a new turn.

    Example:
        >>> ConversationStats().open
        0
    """

    open: int = 0
    turns: int = 0
    chars: int = 0
    turns_received: int = 0
    turns_dropped: Mapping[str, int] = field(default_factory=dict)
    turns_handed_off: int = 0
    turns_forgotten: int = 0
    evaluations: Mapping[str, int] = field(default_factory=dict)
    evicted: int = 0
    expired: int = 0


@dataclass(slots=True)
class ConversationDue:
    """A conversation to score now: a snapshot of its turns and the scorers that sample it.

    Attributes:
        conversation: The turns held, oldest first (a copy: later turns do not change it).
        scorers: The conversation scorers that sampled it.
        parent: The span the scores nest under: the last turn's run span.
        reason: Why now (see :attr:`ConversationStats.evaluations`).
        memo: The conversation's judge answers, shared by its turns' run scores and its
            evaluations (a turn's claims are extracted once, however often it is scored).
    """

    conversation: Conversation
    scorers: tuple[ScorerConfig, ...]
    parent: TraceParent | None
    reason: str
    memo: RunMemo | None = None


class _Turn:
    __slots__ = ("chars", "parent", "run")

    def __init__(self, run: Run, parent: TraceParent | None, chars: int) -> None:
        self.run = run
        self.parent = parent
        self.chars = chars


class _Open:
    """One conversation held: its turns and its timer."""

    __slots__ = (
        "armed",
        "chars",
        "configs",
        "first_turn",
        "id",
        "last_active",
        "memo",
        "scored",
        "turns",
        "unscored_since",
    )

    def __init__(self, conversation_id: str, first_turn: int) -> None:
        self.id = conversation_id
        self.turns: list[_Turn] = []  # a list: a deque's first block alone is 600 bytes
        self.first_turn = first_turn
        self.chars = 0
        self.last_active = 0.0
        self.scored = first_turn - 1  # the last turn number a score covers
        self.configs: tuple[ScorerConfig, ...] = ()
        self.armed: tuple[float, int] | None = None  # (when, token) of its heap entry
        self.memo: RunMemo | None = None  # made on first use; dropped when turns are let go
        self.unscored_since = 0.0  # when the first turn no score covers came (max_age)

    @property
    def last_turn(self) -> int:
        return self.first_turn + len(self.turns) - 1


def turn_chars(run: Run) -> int:
    """An estimate of the characters one turn holds: input, output and tool results.

    Strings count their length; a dict or list the length of its ``repr`` (about its JSON
    size); a message object its content; other values 8. Cheap on purpose: it runs for
    every turn, on the worker.

    Example:
        >>> turn_chars(Run(input="Hi", output="Hello!"))
        8
        >>> turn_chars(Run(input={"role": "user", "content": "Hi"}))
        33
    """
    total = _size(run.input, 0) + _size(run.output, 0)
    for step in run.steps:
        call = step.tool_call
        if call is not None:
            total += _size(call.result, 0) + _size(call.args, 0) + len(call.error or "")
        for document in step.documents:
            total += len(document)
    return total


def _size(value: Any, depth: int) -> int:
    kind = type(value)
    if kind is str:
        return len(value)
    if value is None:
        return 0
    if kind is dict or kind is list or kind is tuple:
        try:
            return len(repr(value))  # C code: the cheapest size of a nested value
        except Exception:
            return 8
    content = getattr(value, "content", None)  # a message object
    if content is not None and depth < 4:
        return _size(content, depth + 1)
    return 8


class ConversationTracker:
    """The conversations a dispatcher holds (every method expects the dispatcher's lock).

    Args:
        idle_timeout: Seconds of quiet after which a conversation with unscored turns is
            due; ``None``: only :meth:`end`, the bounds and ``ttl`` make it due.
        limits: The bounds.
    """

    def __init__(self, idle_timeout: float | None, limits: ConversationLimits) -> None:
        self.idle_timeout = idle_timeout
        self.limits = limits
        self.reset()

    def reset(self) -> None:
        """Forget everything (at construction, and in a forked child)."""
        self._open: OrderedDict[str, _Open] = OrderedDict()  # least recently active first
        self._lengths: OrderedDict[str, int] = OrderedDict()  # forgotten: id -> last turn
        self._heap: list[tuple[float, int, str]] = []
        self._token = 0
        self._chars = 0
        self._turns = 0
        self._received = 0
        self._dropped: dict[str, int] = {}
        self._handed_off = 0
        self._forgotten = 0
        self._evaluations: dict[str, int] = {}
        self._evicted = 0
        self._expired = 0

    # -- turns -----------------------------------------------------------------------------

    def add(
        self,
        conversation_id: str,
        run: Run,
        parent: TraceParent | None,
        configs: tuple[ScorerConfig, ...],
        at: float,
    ) -> list[ConversationDue]:
        """Record one turn (``at``: when it was submitted, monotonic); what is due now."""
        due: list[ConversationDue] = []
        state = self._open.get(conversation_id)
        if state is None:
            known = self._lengths.pop(conversation_id, 0)
            state = self._open[conversation_id] = _Open(conversation_id, known + 1)
        else:
            self._open.move_to_end(conversation_id)
        chars = turn_chars(run)
        if state.last_turn <= state.scored:  # the first turn no score covers yet
            state.unscored_since = at
        state.turns.append(_Turn(run, parent, chars))
        state.chars += chars
        state.configs = configs
        state.last_active = max(state.last_active, at)
        self._chars += chars
        self._turns += 1
        self._received += 1
        limits = self.limits
        if len(state.turns) > limits.max_turns:
            self._trim(state, "turn_limit", due)
        elif state.chars > limits.max_chars and len(state.turns) > 1:
            self._trim(state, "char_limit", due)
        self._arm(state)
        while len(self._open) > limits.max_conversations or (
            self._chars > limits.max_total_chars and len(self._open) > 1
        ):
            oldest = next(iter(self._open.values()))
            if oldest is state:
                break
            self._evicted += 1
            self._let_go(oldest, "evicted", due)
        return due

    def count_dropped(self, reason: str) -> None:
        """A turn that never reached its conversation (queue full, shutdown)."""
        self._dropped[reason] = self._dropped.get(reason, 0) + 1

    def count_handed_off(self) -> None:
        """A turn handed to another process, which keeps the conversation."""
        self._handed_off += 1

    # -- timers ----------------------------------------------------------------------------

    def next_wake(self) -> float | None:
        """When the worker must look again (monotonic), or ``None``: no timer is set."""
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> list[ConversationDue]:
        """The conversations quiet long enough to score; forget the expired ones."""
        due: list[ConversationDue] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            when, token, conversation_id = heapq.heappop(heap)
            state = self._open.get(conversation_id)
            if state is None or state.armed != (when, token):
                continue  # moved or forgotten since: a stale entry
            state.armed = None
            if state.last_turn > state.scored and now >= self._due_at(state):
                if now < self._quiet_at(state):
                    reason = "max_age"  # never quiet: scored anyway, and again at its end
                else:
                    reason = "idle" if self.idle_timeout is not None else "ttl"
                due.append(self._snapshot(state, reason))
            if state.last_turn <= state.scored and now >= state.last_active + self.limits.ttl:
                self._expired += 1
                self._let_go(state, "expired", due)
                continue
            self._arm(state)
        return due

    def end(self, conversation_id: str | None, reason: str) -> list[ConversationDue]:
        """Score one conversation now (every one for ``None``), if it has unscored turns."""
        if conversation_id is None:
            states = list(self._open.values())
        else:
            found = self._open.get(conversation_id)
            states = [found] if found is not None else []
        due: list[ConversationDue] = []
        for state in states:
            if state.last_turn > state.scored:
                due.append(self._snapshot(state, reason))
                self._arm(state)
        return due

    # -- what it holds -------------------------------------------------------------------------

    def stats(self) -> ConversationStats:
        """A snapshot of the counts."""
        return ConversationStats(
            open=len(self._open),
            turns=self._turns,
            chars=self._chars,
            turns_received=self._received,
            turns_dropped=dict(self._dropped),
            turns_handed_off=self._handed_off,
            turns_forgotten=self._forgotten,
            evaluations=dict(self._evaluations),
            evicted=self._evicted,
            expired=self._expired,
        )

    def memo_of(self, conversation_id: str) -> RunMemo | None:
        """The judge answers ``conversation_id``'s scores share (``None``: not held)."""
        state = self._open.get(conversation_id)
        if state is None:
            return None
        if state.memo is None:
            state.memo = RunMemo()
        return state.memo

    def held(self, conversation_id: str) -> int:
        """How many turns of ``conversation_id`` are held (0: none)."""
        state = self._open.get(conversation_id)
        return len(state.turns) if state is not None else 0

    # -- internals -------------------------------------------------------------------------------

    def _quiet_at(self, state: _Open) -> float:
        wait = self.idle_timeout if self.idle_timeout is not None else self.limits.ttl
        return state.last_active + wait

    def _due_at(self, state: _Open) -> float:
        """When ``state``'s unscored turns are due: once it is quiet, or at ``max_age``."""
        quiet = self._quiet_at(state)
        if self.limits.max_age is None or self.idle_timeout is None:
            return quiet  # without an idle timeout the application ends conversations
        return min(quiet, state.unscored_since + self.limits.max_age)

    def _arm(self, state: _Open) -> None:
        """Make sure the heap wakes the worker for ``state`` no later than it needs to."""
        if state.last_turn > state.scored:
            when = self._due_at(state)
        else:
            when = state.last_active + self.limits.ttl
        if state.armed is not None and state.armed[0] <= when:
            return  # an earlier entry: popping it re-arms for the later time
        self._token += 1
        state.armed = (when, self._token)
        heapq.heappush(self._heap, (when, self._token, state.id))

    def _snapshot(self, state: _Open, reason: str) -> ConversationDue:
        self._evaluations[reason] = self._evaluations.get(reason, 0) + 1
        state.scored = state.last_turn
        metadata: dict[str, Any] = {"scored_because": reason}
        if state.first_turn > 1:
            metadata["turns_forgotten"] = state.first_turn - 1
        conversation = Conversation(
            state.id, [t.run for t in state.turns], first_turn=state.first_turn, metadata=metadata
        )
        parent = state.turns[-1].parent if state.turns else None
        if state.memo is None:
            state.memo = RunMemo()
        return ConversationDue(conversation, state.configs, parent, reason, state.memo)

    def _trim(self, state: _Open, reason: str, due: list[ConversationDue]) -> None:
        """At a bound: score what no score covers yet, then forget the oldest half."""
        if state.last_turn > state.scored:
            due.append(self._snapshot(state, reason))
        turns = state.turns
        keep = max(1, len(turns) // 2)
        half_chars = self.limits.max_chars // 2
        drop = len(turns) - keep
        kept_chars = sum(t.chars for t in turns[drop:])
        while drop < len(turns) - 1 and kept_chars > half_chars:
            kept_chars -= turns[drop].chars
            drop += 1
        gone = sum(t.chars for t in turns[:drop])
        del turns[:drop]
        state.memo = None  # its answers were about turns let go too: bounded with them
        state.chars -= gone
        self._chars -= gone
        self._turns -= drop
        self._forgotten += drop
        state.first_turn += drop

    def _let_go(self, state: _Open, reason: str, due: list[ConversationDue]) -> None:
        """Forget ``state`` (scoring it first if it has unscored turns)."""
        if state.last_turn > state.scored:
            due.append(self._snapshot(state, reason))
        self._open.pop(state.id, None)
        self._chars -= state.chars
        self._turns -= len(state.turns)
        self._forgotten += len(state.turns)
        state.armed = None
        lengths = self._lengths
        lengths[state.id] = state.last_turn
        lengths.move_to_end(state.id)
        while len(lengths) > self.limits.max_conversations:
            lengths.popitem(last=False)
