"""Live scoring for LangChain and LangGraph agents (being written)."""

__all__: tuple[str, ...] = ()
