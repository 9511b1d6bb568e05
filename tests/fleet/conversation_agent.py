"""An agent process of the fleet tests: submits one turn of a conversation to the fleet.

``python conversation_agent.py BROKER CONVERSATION TURN SCORER`` publishes turn ``TURN`` of
``CONVERSATION`` (run id ``{CONVERSATION}-{TURN}``, trace and span ids from the turn number)
for the conversation scorer ``SCORER``, then shuts down (which publishes what it holds).
"""

from __future__ import annotations

import sys

from livescore import Run, create_scorer
from livescore.live import LiveDispatcher


def turn(conversation_id: str, number: int) -> Run:
    return Run(
        input=f"question {number}",
        output=f"answer {number}",
        run_id=f"{conversation_id}-{number}",
        trace_id=f"{number:032x}",
        span_id=f"{number:016x}",
        conversation_id=conversation_id,
    )


def main() -> None:
    broker, conversation_id, number, scorer_id = sys.argv[1:5]
    # The agent needs the scorer's id only: the workers hold the scorer itself.
    stand_in = create_scorer(
        id=scorer_id,
        description="scored by the fleet",
        level="conversation",
        generate_score=lambda ctx: 0.0,
    )
    dispatcher = LiveDispatcher(
        [stand_in], broker=broker, register_atexit=False, conversation_idle_timeout=None
    )
    dispatcher.submit(turn(conversation_id, int(number)))
    dispatcher.shutdown(timeout=30)
    handed_off = dispatcher.conversation_stats().turns_handed_off
    sys.exit(0 if handed_off == 1 else 1)


if __name__ == "__main__":
    main()
