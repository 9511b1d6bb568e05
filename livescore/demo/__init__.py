"""``livescore demo``: watch a LangChain agent being scored live, in the terminal.

A small ``create_agent`` agent with real tools (a search over Parcelly's help centre, a
fictional parcel-locker service, and an order lookup) answers a handful of questions with
live hallucination and keyword-coverage scoring attached through
``livescore_langchain.LiveScoringHandler``. Each run is shown as the spans a dashboard would
receive: the ``invoke_agent`` span, its ``execute_tool`` children and the ``evaluation``
spans with score, label and reason.

Example:
    >>> from livescore.demo import run_demo
    >>> run_demo(["--question", "Where is my order PX-1042?"])  # doctest: +SKIP
    0
"""

from livescore.demo._demo import add_demo_arguments, run_demo, run_demo_command

__all__ = ("add_demo_arguments", "run_demo", "run_demo_command")
