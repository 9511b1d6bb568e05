"""Test doubles for LangChain agents: a chat model that replays a script.

``GenericFakeChatModel`` and ``FakeMessagesListChatModel`` cannot drive
``langchain.agents.create_agent`` (they have no ``bind_tools``); :class:`ScriptedChatModel`
can, so tests run a real agent calling real tools without any model or network.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

__all__ = ("ScriptedChatModel", "ScriptedResponse")

ScriptedResponse = AIMessage | str | BaseException | Callable[[list[BaseMessage]], AIMessage]
"""One scripted turn: an ``AIMessage`` (with or without ``tool_calls``), plain text (an
``AIMessage`` with that content), an exception to raise, or a function of the messages the
model received that returns the ``AIMessage``."""


class ScriptedChatModel(BaseChatModel):
    """A chat model test double that replays scripted turns, in order, including tool calls.

    ``bind_tools`` returns the model itself, so ``create_agent`` accepts it; each call takes
    the next scripted turn. Tool calls without an ``id`` get one (``call_<n>``), as a
    provider would. Streaming (``stream``/``astream``) yields the text word by word, then
    the tool calls. ``delay`` makes every turn wait that long (``asyncio.sleep`` on the
    async path, so a cancelled task stops inside the model call).

    Attributes:
        responses: The script.
        delay: Seconds each turn waits before answering.
        calls: The messages of every call, in order (filled as the model is called).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> model = ScriptedChatModel(responses=[
        ...     AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}]),
        ...     "1 + 2 = 3",
        ... ])
        >>> model.invoke("add 1 and 2").tool_calls[0]["name"]
        'add'
        >>> model.invoke("go on").content
        '1 + 2 = 3'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: Sequence[Any]
    delay: float = 0.0
    model_name: str = "scripted-chat-model"

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _next: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The messages of every call so far, in order."""
        return self._calls

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        """Return the model itself: the script already says which tools it calls."""
        return self

    def _take(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self._calls.append(list(messages))
            if self._next >= len(self.responses):
                raise ValueError(
                    f"ScriptedChatModel ran out of responses at call {self._next + 1} "
                    f"(the script has {len(self.responses)})"
                )
            turn = self.responses[self._next]
            self._next += 1
        if isinstance(turn, BaseException):
            raise turn
        if isinstance(turn, str):
            turn = AIMessage(content=turn)
        elif not isinstance(turn, AIMessage):
            if not callable(turn):
                raise TypeError(
                    f"a scripted turn must be an AIMessage, str, exception or function, "
                    f"not {type(turn).__name__}"
                )
            turn = turn(list(messages))
            if not isinstance(turn, AIMessage):
                raise TypeError(f"a scripted function must return an AIMessage, not {turn!r}")
        return _with_call_ids(turn, self._next)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay:
            time.sleep(self.delay)
        return ChatResult(generations=[ChatGeneration(message=self._take(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay:
            await asyncio.sleep(self.delay)
        return ChatResult(generations=[ChatGeneration(message=self._take(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.delay:
            time.sleep(self.delay)
        for chunk in _chunks(self._take(messages)):
            if run_manager is not None:
                run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if self.delay:
            await asyncio.sleep(self.delay)
        for chunk in _chunks(self._take(messages)):
            if run_manager is not None:
                await run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk


def _with_call_ids(message: AIMessage, turn: int) -> AIMessage:
    if all(call.get("id") for call in message.tool_calls):
        return message
    calls = [
        {**call, "id": call.get("id") or f"call_{turn}_{i}"}
        for i, call in enumerate(message.tool_calls)
    ]
    return message.model_copy(update={"tool_calls": calls})


def _chunks(message: AIMessage) -> Iterator[ChatGenerationChunk]:
    text = message.content if isinstance(message.content, str) else ""
    words = text.split(" ") if text else []
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        yield ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message.id))
    if message.tool_calls or not words:
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="" if words else message.content,
                id=message.id,
                tool_call_chunks=[
                    tool_call_chunk(
                        name=call["name"],
                        args=json.dumps(call["args"]),
                        id=call["id"],
                        index=i,
                    )
                    for i, call in enumerate(message.tool_calls)
                ],
            )
        )
