"""A conversation: the runs (turns) that share a conversation id, oldest first.

A support or coding agent is judged by whole conversations as well as by single runs: did it
remember what the user said three turns ago, did it finish what the user asked for, did it
stay in its role. A :class:`Conversation` is what conversation scorers see
(``ctx.conversation``). Turns are numbered from 1; when memory bounds made the live
dispatcher forget the oldest turns, :attr:`Conversation.first_turn` says which turn is the
first one kept.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from livescore.runs._model import Run, Step, ToolCall, _json_safe, coerce_run

__all__ = ("Conversation", "ConversationLike", "coerce_conversation")


@dataclass(slots=True)
class Conversation:
    """The turns of one conversation, oldest first: what conversation scorers judge.

    Attributes:
        id: The conversation id (LangGraph's ``thread_id``, the Agents SDK's ``group_id``,
            ``gen_ai.conversation.id`` or OpenInference's ``session.id`` on spans).
        runs: Its turns, one :class:`~livescore.Run` each, oldest first.
        first_turn: The number of ``runs[0]`` (1 unless earlier turns were forgotten to
            keep memory bounded: then turns ``1 .. first_turn - 1`` are not here).
        metadata: JSON-safe extras (why the conversation was scored, turns forgotten…).

    Example:
        >>> from livescore import Run
        >>> conversation = Conversation("c1", [Run(input="Hi", output="Hello!"),
        ...                                   Run(input="Bye", output="Goodbye!")])
        >>> conversation.last_turn, [n for n, _ in conversation.turns()]
        (2, [1, 2])
    """

    id: str
    runs: list[Run] = field(default_factory=list)
    first_turn: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def last_turn(self) -> int:
        """The number of the newest turn (``first_turn - 1`` when there is none)."""
        return self.first_turn + len(self.runs) - 1

    @property
    def last_run(self) -> Run | None:
        """The newest turn, or ``None`` for an empty conversation."""
        return self.runs[-1] if self.runs else None

    def turns(self) -> Iterator[tuple[int, Run]]:
        """``(turn number, run)`` for every turn kept, oldest first."""
        return zip(range(self.first_turn, self.last_turn + 1), self.runs, strict=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe copy, for shipping to a worker (see :meth:`from_dict`)."""
        return {
            "id": self.id,
            "first_turn": self.first_turn,
            "runs": [run.to_dict() for run in self.runs],
            "metadata": _json_safe(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Conversation:
        """Rebuild a conversation from :meth:`to_dict` output.

        Raises:
            ValueError: The mapping has no ``id``.
        """
        conversation_id = data.get("id")
        if conversation_id is None or conversation_id == "":
            raise ValueError("a conversation needs an 'id'")
        first = data.get("first_turn", 1)
        if isinstance(first, bool) or not isinstance(first, int) or first < 1:
            raise ValueError(f"'first_turn' must be a positive int, not {first!r}")
        runs = [coerce_run(r) for r in data.get("runs") or ()]
        metadata = data.get("metadata")
        return cls(
            str(conversation_id),
            runs,
            first_turn=first,
            metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
        )

    @classmethod
    def from_turns(
        cls,
        turns: Sequence[Mapping[str, Any]],
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Conversation:
        """A conversation from plain turns: the multi-turn dataset format.

        Each turn is ``{"input": ..., "output": ..., "tool_calls": [...]}``; each tool call
        is ``{"name", "args", "result"}`` (or ``"error"`` for a call that failed), and
        becomes a tool step of that turn's run (its result is ground truth, as a live
        run's tool results are). A turn may also carry ``ground_truth`` and ``metadata``.

        Raises:
            ValueError: A turn is not a mapping, lacks ``input`` or ``output``, or has a
                malformed tool call (the message names the turn).

        Example:
            >>> conversation = Conversation.from_turns([
            ...     {"input": "Where is order 7?", "output": "It left Lyon today.",
            ...      "tool_calls": [{"name": "track", "args": {"order": 7},
            ...                      "result": "left Lyon"}]},
            ...     {"input": "Thanks!", "output": "You're welcome."},
            ... ], id="c1")
            >>> conversation.last_turn, conversation.runs[0].steps[0].tool_call.result
            (2, 'left Lyon')
        """
        conversation_id = id if id is not None else uuid.uuid4().hex
        runs: list[Run] = []
        for number, turn in enumerate(turns, start=1):
            where = f"turn {number}"
            if not isinstance(turn, Mapping):
                raise ValueError(f"{where}: expected an object, not {type(turn).__name__}")
            for key in ("input", "output"):
                if key not in turn:
                    raise ValueError(f"{where}: missing field {key!r}")
            calls = turn.get("tool_calls") or ()
            if not isinstance(calls, Sequence) or isinstance(calls, str | bytes):
                raise ValueError(f"{where}: 'tool_calls' must be a list of objects")
            steps: list[Step] = []
            for index, call in enumerate(calls):
                if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                    raise ValueError(f"{where}: tool call {index + 1} needs a 'name'")
                error = call.get("error")
                tool = ToolCall(
                    name=call["name"],
                    call_id=str(call["id"]) if call.get("id") is not None else None,
                    args=call.get("args"),
                    result=None if error is not None else call.get("result"),
                    error=None if error is None else str(error),
                )
                steps.append(
                    Step(
                        kind="tool",
                        name=tool.name,
                        index=index,
                        input=tool.args,
                        output=tool.result,
                        tool_call=tool,
                        error=tool.error,
                    )
                )
            extra = turn.get("metadata")
            runs.append(
                Run(
                    input=turn["input"],
                    output=turn["output"],
                    ground_truth=turn.get("ground_truth"),
                    run_id=f"{conversation_id}:{number}",
                    steps=steps,
                    metadata=dict(extra) if isinstance(extra, Mapping) else {},
                    conversation_id=conversation_id,
                )
            )
        return cls(conversation_id, runs, metadata=dict(metadata or {}))


ConversationLike = Conversation | Run | Mapping[str, Any]
"""A :class:`Conversation`; a :class:`~livescore.Run` (a conversation of one turn); or a
mapping: :meth:`Conversation.to_dict`'s form (``id``, ``runs``) or the dataset form
(``turns``, an optional ``id``)."""


def coerce_conversation(value: ConversationLike) -> Conversation:
    """Return ``value`` as a :class:`Conversation`.

    A run becomes a conversation of one turn (its ``conversation_id``, else its run id). A
    mapping with ``turns`` is read with :meth:`Conversation.from_turns`; one with ``runs``
    with :meth:`Conversation.from_dict`.

    Raises:
        TypeError: ``value`` is none of these.
        ValueError: A malformed mapping (the message says what is wrong).

    Example:
        >>> coerce_conversation({"turns": [{"input": "Hi", "output": "Hello"}], "id": "c"}).id
        'c'
    """
    if isinstance(value, Conversation):
        return value
    if isinstance(value, Run):
        return Conversation(value.conversation_id or value.run_id, [value])
    if isinstance(value, Mapping):
        if "turns" in value:
            turns = value["turns"]
            if not isinstance(turns, Sequence) or isinstance(turns, str | bytes):
                raise ValueError("'turns' must be a list of {input, output} objects")
            given = value.get("id")
            metadata = value.get("metadata")
            return Conversation.from_turns(
                turns,
                id=None if given is None else str(given),
                metadata=metadata if isinstance(metadata, Mapping) else None,
            )
        if "runs" in value:
            return Conversation.from_dict(value)
        return coerce_conversation(coerce_run(value))
    raise TypeError(
        "a conversation must be a livescore Conversation, a Run, or a mapping with 'turns' "
        f"(or 'runs'), not {type(value).__name__}"
    )
