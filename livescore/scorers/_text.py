"""What the code scorers compare an answer with: the run's ground truth or the user's input.

The pure text helpers they share with the quick checks live in :mod:`livescore._text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

from livescore._messages import message_text
from livescore.scoring import NotScorable, StepContext

__all__ = ("Reference", "check_reference", "reference_text")

Reference: TypeAlias = Literal["auto", "input", "ground_truth"]
"""What an answer is compared with: ``"ground_truth"``, ``"input"``, or ``"auto"`` (the
ground truth when the run has one, else the input)."""


def reference_text(
    ctx: StepContext,
    reference: Reference,
    *,
    scorer: str,
    limit: int,
    uses: str = "compares the answer with",
) -> tuple[str, str]:
    """The text to compare the answer with, and where it came from (``"ground truth"`` or
    ``"input"``); ``uses`` says what the scorer does with the ground truth, in the reason
    a run without one is skipped for.

    ``"auto"`` takes the run's ground truth when it has one, else the user's input. An
    explicit ``"ground_truth"`` on a run without one makes the run not scorable. A ground
    truth longer than ``limit`` characters is cut (and flagged), as input and output are.

    Raises:
        NotScorable: ``reference="ground_truth"`` and the run has no ground truth.
        TypeError: The ground truth is neither text nor messages.
    """
    truth = ctx.run.ground_truth
    if reference == "input" or (reference == "auto" and truth is None):
        return ctx.input_text, "input"
    if truth is None:
        raise NotScorable(
            f"no ground truth: this {scorer} scorer {uses} the run's ground_truth "
            "(reference='ground_truth'), and the run has none"
        )
    try:
        text = message_text(truth)
    except TypeError:
        text = None
    if text is None or (not text and isinstance(truth, Mapping) and truth):
        raise TypeError(
            "ground truth must be text, a list of texts or chat messages, "
            f"not {type(truth).__name__}"
        )
    if len(text) > limit:
        ctx.flags["ground_truth_truncated"] = True
        ctx.flags["ground_truth_chars"] = len(text)
        text = text[:limit]
    return text, "ground truth"


def check_reference(reference: object) -> None:
    """Raise ``ValueError`` unless ``reference`` is ``"auto"``, ``"input"`` or
    ``"ground_truth"``."""
    if reference not in ("auto", "input", "ground_truth"):
        raise ValueError(f"reference must be 'auto', 'input' or 'ground_truth', not {reference!r}")
