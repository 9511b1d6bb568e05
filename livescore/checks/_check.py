"""What a quick check is: a :class:`Check` built once, a :class:`CheckResult` per run, and the
scorer form of a check."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from livescore.runs import Run, RunLike, coerce_run
from livescore.scoring import Scorer, StepContext, create_scorer

__all__ = ("CHECK_LABELS", "Check", "CheckResult")

CHECK_LABELS = ("fail", "pass")
"""The labels of a check's score: 0 → ``"fail"``, 1 → ``"pass"``."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one quick check on one run: true when it passed.

    ``assert checks.includes(run, "refund")`` fails with this result's repr, which names the
    check, says why it failed and shows what it looked at (the answer, or the tool calls).

    Attributes:
        check: The check's id (``"includes"``, ``"called-tool"``…).
        passed: Whether the run passed.
        reason: Why, in one sentence (also the scorer form's reason).
        details: What the check measured (counts, the similarity…), JSON-safe.
        evidence: What the check looked at, shortened (``answer: '…'`` or ``tool calls:
            …``); shown on failure, not part of the reason.

    Example:
        >>> from livescore import checks
        >>> result = checks.includes("Your refund is on its way.", "refund")
        >>> bool(result), result.reason
        (True, "the answer contains 'refund' (case ignored)")
        >>> checks.excludes("Your refund is on its way.", "refund")
        <excludes FAILED: the answer contains 'refund' (case ignored); answer: 'Your refund is on its way.'>
    """  # noqa: E501

    check: str
    passed: bool
    reason: str
    details: Mapping[str, Any] = field(default_factory=dict)
    evidence: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        outcome = "passed" if self.passed else "FAILED"
        evidence = f"; {self.evidence}" if self.evidence and not self.passed else ""
        return f"<{self.check} {outcome}: {self.reason}{evidence}>"

    __str__ = __repr__


class Check:
    """A quick check with its arguments checked once: call it on runs, or turn it into a scorer.

    The functions of :mod:`livescore.checks` build one per call (``checks.includes(run,
    "refund")``) or once for a scorer (``checks.includes_scorer("refund")``); bad arguments
    (an empty text, an invalid regex, a negative count) raise when it is built.

    Attributes:
        id: The check's id, also the scorer's default id.
        description: What it checks, in one line.

    Example:
        >>> from livescore.checks._text_checks import _contains_check
        >>> check = _contains_check("refund", ignore_case=True, wanted=True)
        >>> check
        Check('includes': The answer contains 'refund' (case ignored))
        >>> bool(check("Refund sent.")), check.scorer().id
        (True, 'includes')
    """

    __slots__ = ("_evaluate", "_text_input", "description", "id")

    def __init__(
        self,
        id: str,
        description: str,
        evaluate: Callable[[Run], CheckResult],
        *,
        text_input: bool,
    ) -> None:
        self.id = id
        self.description = description
        self._evaluate = evaluate
        self._text_input = text_input

    def __repr__(self) -> str:
        return f"Check({self.id!r}: {self.description})"

    def __call__(self, run: RunLike | str) -> CheckResult:
        """Check one run (a :class:`~livescore.Run`, a run mapping, or for the checks of the
        answer's text, the answer itself as a string).

        Raises:
            TypeError: ``run`` is not a run (or a string given to a tool check).
        """
        return self._evaluate(self._coerce(run))

    def _coerce(self, run: RunLike | str) -> Run:
        if isinstance(run, str):
            if not self._text_input:
                raise TypeError(
                    f"the {self.id} check reads a run's tool calls: give it a livescore.Run "
                    "(or a run mapping with 'steps'), not a string"
                )
            return Run(output=run)
        return coerce_run(run)

    def scorer(self, *, id: str | None = None) -> Scorer:
        """This check as a scorer: 1 when the run passes, 0 when it fails, with the reason.

        The scorer works everywhere scorers do: live scoring and ``run_evals``. Its
        ``preprocess_step_result`` is the check's details plus ``"passed"``.

        Args:
            id: The scorer id; the check's id by default.
        """
        evaluate = self._evaluate

        def preprocess(ctx: StepContext) -> dict[str, Any]:
            result = evaluate(ctx.run)
            ctx.state["check"] = result
            return {"passed": result.passed, **result.details}

        def generate_reason(ctx: StepContext) -> str:
            result: CheckResult = ctx.state["check"]
            return f"{'Passed' if result.passed else 'Failed'}: {result.reason}."

        return create_scorer(
            id=id or self.id,
            description=self.description,
            preprocess=preprocess,
            generate_score=lambda ctx: 1.0 if ctx.state["check"].passed else 0.0,
            generate_reason=generate_reason,
            label=lambda score: "pass" if score >= 1 else "fail",
            sync_steps="inline",  # pure CPU: a thread hop would cost more than the step
        )
