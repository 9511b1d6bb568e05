"""The run trace scorers read: :class:`Run`, its steps, and helpers that extract evidence."""

from livescore.runs._model import Run, RunLike, Step, StepKind, ToolCall, coerce_run
from livescore.runs._readers import (
    CONTEXT_METADATA_KEY,
    NOT_SCORABLE_METADATA_KEY,
    ToolResult,
    extract_retrieved_documents,
    extract_tool_results,
    find_assistant_message,
    find_user_message,
    get_assistant_message,
    get_run_context,
    get_user_message,
    message_text,
)
from livescore.runs._trace import TraceParent, normalize_span_id, normalize_trace_id

__all__ = (
    "CONTEXT_METADATA_KEY",
    "NOT_SCORABLE_METADATA_KEY",
    "Run",
    "RunLike",
    "Step",
    "StepKind",
    "ToolCall",
    "ToolResult",
    "TraceParent",
    "coerce_run",
    "extract_retrieved_documents",
    "extract_tool_results",
    "find_assistant_message",
    "find_user_message",
    "get_assistant_message",
    "get_run_context",
    "get_user_message",
    "message_text",
    "normalize_span_id",
    "normalize_trace_id",
)
