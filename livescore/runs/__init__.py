"""The run trace scorers read: :class:`Run`, its steps, and helpers that extract evidence."""

from livescore.runs._conversation import Conversation, ConversationLike, coerce_conversation
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
from livescore.runs._tool_calls import (
    RecordedCall,
    describe_calls,
    is_subsequence,
    read_tool_calls,
)
from livescore.runs._trace import TraceParent, normalize_span_id, normalize_trace_id

__all__ = (
    "CONTEXT_METADATA_KEY",
    "NOT_SCORABLE_METADATA_KEY",
    "Conversation",
    "ConversationLike",
    "RecordedCall",
    "Run",
    "RunLike",
    "Step",
    "StepKind",
    "ToolCall",
    "ToolResult",
    "TraceParent",
    "coerce_conversation",
    "coerce_run",
    "describe_calls",
    "extract_retrieved_documents",
    "extract_tool_results",
    "find_assistant_message",
    "find_user_message",
    "get_assistant_message",
    "get_run_context",
    "get_user_message",
    "is_subsequence",
    "message_text",
    "normalize_span_id",
    "normalize_trace_id",
    "read_tool_calls",
)
