"""``livescore demo``: watch an agent being scored live, in the terminal.

The scenario lives here: Parcelly, a fictional parcel-locker service, its help-centre pages
and orders, the questions, the tools (``search_docs``, ``get_order_status``), a scripted
model that plays the agent's model without an LLM, and the trace view that shows each run's
exported spans (the ``invoke_agent`` span, its ``execute_tool`` children and the
``evaluation`` spans with score, label and reason). The agent itself belongs to a runtime
integration, registered under the ``livescore.demo_agents`` entry point group
(``livescore-langchain`` registers ``langchain``), and is loaded only when the demo runs.

Example:
    >>> from livescore.demo import DemoOptions, run_demo
    >>> run_demo(DemoOptions(questions=["Where is my order PX-1042?"]))  # doctest: +SKIP
    0
"""

from livescore.demo._demo import DEMO_JUDGE_FAILED, DEMO_OK, DemoOptions, run_demo
from livescore.demo._local_judge import LOCAL_JUDGE_INSTALL, LocalJudgeServer, local_judge_status
from livescore.demo._runtime import (
    DEMO_AGENTS_GROUP,
    DemoAgent,
    DemoAgentFactory,
    DemoConfigError,
    DemoReply,
    DemoSetup,
    demo_runtimes,
    load_demo_agent,
)
from livescore.demo._scenario import (
    AGENT_NAME,
    QUESTIONS,
    SYSTEM_PROMPT,
    UNSUPPORTED_CLAIM,
    DemoQuestion,
    ToolOutput,
    ToolRequest,
    get_order_status,
    scripted_turn,
    search_docs,
)

__all__ = (
    "AGENT_NAME",
    "DEMO_AGENTS_GROUP",
    "DEMO_JUDGE_FAILED",
    "DEMO_OK",
    "LOCAL_JUDGE_INSTALL",
    "QUESTIONS",
    "SYSTEM_PROMPT",
    "UNSUPPORTED_CLAIM",
    "DemoAgent",
    "DemoAgentFactory",
    "DemoConfigError",
    "DemoOptions",
    "DemoQuestion",
    "DemoReply",
    "DemoSetup",
    "LocalJudgeServer",
    "ToolOutput",
    "ToolRequest",
    "demo_runtimes",
    "get_order_status",
    "load_demo_agent",
    "local_judge_status",
    "run_demo",
    "scripted_turn",
    "search_docs",
)
