"""What a delivered job asks of a fleet worker: :func:`plan_job` reads its record (the run,
the parent span, each pair to score or to fail at once, the conversation judged), and
:func:`keep_turn` keeps the conversation's turn it carries in Redis."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from livescore._catalog import parse_scorer_spec
from livescore.live import ScorerConfig, ScoringJob
from livescore.runs import Conversation, Run, TraceParent
from livescore.scoring import Scorer, create_scorer

if TYPE_CHECKING:
    from livescore.fleet._conversations import ConversationStore

__all__ = ("JobPlan", "Pair", "fail_all", "keep_turn", "placeholder_scorer", "plan_job")

_log = logging.getLogger("livescore.fleet")


@dataclass(slots=True)
class Pair:
    """One scorer a job names: scored with ``config``, or failed at once (``failure``)."""

    scorer_id: str
    sample_rate: float | None
    config: ScorerConfig | None  # None: fails without scoring
    failure: tuple[str, str] | None = None  # (error type, message)


@dataclass(frozen=True, slots=True)
class JobPlan:
    """A job record read: its run, the run's parent span, its pairs and the conversation a
    conversation's evaluation judges."""

    run: Run
    parent: TraceParent | None
    pairs: list[Pair]
    conversation: Conversation | None = None


def fail_all(pairs: Iterable[Pair], *, error_type: str, message: str) -> None:
    """Have each of ``pairs`` fail at once with ``error_type``, without scoring."""
    for pair in pairs:
        pair.config, pair.failure = None, (error_type, message)


def plan_job(record: Mapping[str, Any], scorers: Mapping[str, ScorerConfig]) -> JobPlan:
    """Read a job ``record`` against the worker's ``scorers``: a record this worker cannot
    read (a newer format, a bad ``reply_to``, an unreadable run) fails every pair.

    Example:
        >>> from livescore.scorers import create_keyword_coverage_scorer
        >>> scorers = {"keyword-coverage": ScorerConfig(create_keyword_coverage_scorer())}
        >>> plan = plan_job({"run": {"run_id": "r1", "input": "hi", "output": "hello"},
        ...                  "scorers": [{"id": "keyword-coverage"}, {"id": "tone"}]}, scorers)
        >>> [(p.scorer_id, p.failure and p.failure[0]) for p in plan.pairs]
        [('keyword-coverage', None), ('tone', 'unknown_scorer')]
    """
    from livescore.fleet._ledger import valid_reply_to

    pairs = _read_pairs(record.get("scorers"), scorers)
    version = record.get("format", 1)
    raw_run = record.get("run")
    run_id = raw_run.get("run_id") if isinstance(raw_run, Mapping) else None
    fallback = Run(run_id=str(run_id or record.get("id") or uuid.uuid4().hex))
    try:
        parent = TraceParent.from_dict(record.get("parent"))
    except Exception:
        parent = None
    if not isinstance(version, int) or isinstance(version, bool) or version > ScoringJob.FORMAT:
        message = (
            f"this job record has format {version!r}; this worker reads up to "
            f"{ScoringJob.FORMAT} (upgrade livescore on the workers)"
        )
        fail_all(pairs, error_type="unsupported_job_format", message=message)
        return JobPlan(fallback, parent, pairs)
    reply_to = record.get("reply_to")
    if reply_to is not None and not valid_reply_to(reply_to):
        message = (
            f"the job's reply_to {str(reply_to)[:80]!r} is not an evaluation's result "
            "list (livescore:fleet:eval:<id>:results); nothing is sent there"
        )
        fail_all(pairs, error_type="invalid_job", message=message)
        return JobPlan(fallback, parent, pairs)
    conversation: Conversation | None = None
    try:
        run = Run.from_dict(raw_run)  # type: ignore[arg-type]
        raw_conversation = record.get("conversation")
        if raw_conversation is not None:
            conversation = Conversation.from_dict(raw_conversation)
    except Exception as exc:
        message = f"the job's run could not be read: {type(exc).__name__}: {exc}"
        fail_all(pairs, error_type="invalid_job", message=message)
        return JobPlan(fallback, parent, pairs)
    return JobPlan(run, parent, pairs, conversation)


def _read_pairs(entries: object, scorers: Mapping[str, ScorerConfig]) -> list[Pair]:
    """The record's scorer entries, once each; an id not among ``scorers`` fails."""
    pairs: list[Pair] = []
    seen: set[str] = set()
    for entry in entries if isinstance(entries, list) else ():
        sid = entry.get("id") if isinstance(entry, Mapping) else None
        if not isinstance(sid, str) or not sid or sid in seen:
            continue
        seen.add(sid)
        rate = entry.get("sample_rate")
        rate = float(rate) if isinstance(rate, int | float) and not isinstance(rate, bool) else None
        config = scorers.get(sid)
        failure = None
        if config is None:
            failure = ("unknown_scorer", _unknown_scorer(sid, scorers))
        pairs.append(Pair(sid, rate, config, failure))
    return pairs


def keep_turn(store: ConversationStore | None, turn: Any, record: Mapping[str, Any]) -> None:
    """A conversation's turn (or end request) goes to Redis. Idempotent: a turn
    delivered twice is kept once. A Redis error raises (the caller waits it out)."""
    if store is None:
        return
    if not isinstance(turn, Mapping) or not isinstance(turn.get("id"), str):
        _log.error("livescore worker: a job's conversation turn is malformed; ignored")
        return
    if turn.get("end"):
        store.end(turn["id"])
        return
    run = record.get("run")
    if isinstance(run, Mapping):
        store.add_turn(turn, run, record.get("parent"))


def placeholder_scorer(scorer_id: str) -> Scorer:
    """A scorer that stands for an id the worker cannot score (it is never run)."""
    return create_scorer(id=scorer_id, description="not scored here", generate_score=_never)


def _never(ctx: Any) -> float:
    raise RuntimeError("never run")


def _unknown_scorer(sid: str, known: Mapping[str, Any]) -> str:
    """Why a job's scorer cannot be scored here, and, for a catalog scorer (the jobs of
    ``livescore eval --broker`` name them), how the workers build it."""
    message = (
        f"scorer {sid!r} is not among this worker's scorers ({', '.join(known)}): start the "
        "workers with the agents' scorers"
    )
    try:
        entry, _ = parse_scorer_spec(sid)
    except ValueError:
        return message
    options = ", ScorerOptions(model=...)" if entry.needs_judge else ""
    return (
        f"{message}; it is the catalog's {entry.name} scorer: add "
        f"livescore.scorers.build_scorer({sid!r}{options}) to them"
    )
