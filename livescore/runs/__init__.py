"""The run trace scorers read: :class:`Run`, its steps, and helpers that extract evidence.

Every reader takes a :class:`Run` or its mapping form (:data:`RunLike`).

Example:
    >>> from livescore.runs import Run, Step, ToolCall, get_run_context
    >>> run = Run(input="Weather?", output="Sunny.",
    ...           steps=[Step(kind="tool", tool_call=ToolCall("weather", result="sunny"))])
    >>> get_run_context(run)
    ['{"tool": "weather", "result": "sunny"}']
"""

from livescore.runs._conversation import Conversation, ConversationLike, coerce_conversation
from livescore.runs._model import Run, RunLike, Step, ToolCall, coerce_run
from livescore.runs._readers import (
    CONTEXT_METADATA_KEY,
    NO_INPUT_METADATA_KEY,
    NOT_SCORABLE_METADATA_KEY,
    ToolResult,
    extract_retrieved_documents,
    extract_tool_results,
    get_assistant_message,
    get_run_context,
    get_user_message,
)
from livescore.runs._trace import TraceParent

__all__ = (
    "CONTEXT_METADATA_KEY",
    "NOT_SCORABLE_METADATA_KEY",
    "NO_INPUT_METADATA_KEY",
    "Conversation",
    "ConversationLike",
    "Run",
    "RunLike",
    "Step",
    "ToolCall",
    "ToolResult",
    "TraceParent",
    "coerce_conversation",
    "coerce_run",
    "extract_retrieved_documents",
    "extract_tool_results",
    "get_assistant_message",
    "get_run_context",
    "get_user_message",
)
