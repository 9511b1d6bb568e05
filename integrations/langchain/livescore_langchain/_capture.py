"""Run a runnable once and return its output with the :class:`~livescore.Run` it produced.

``run_evals`` uses this so an offline score sees a run recorded exactly as a live one is:
the same recording code, tool results included, without a dispatcher or sampling.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import Runnable, RunnableConfig

from livescore.live import DispatchStats, SamplingDecision
from livescore.runs import Run
from livescore_langchain._handler import LiveScoringHandler

__all__ = ("acapture_run", "capture_run")


class _Captured(SamplingDecision):
    """The decision for a captured run: recorded in full, though no scorer is attached."""

    __slots__ = ()

    @property
    def sampled(self) -> bool:
        return True


class _CaptureSink:
    """A :class:`~livescore.live.Dispatcher` that keeps every run instead of scoring it."""

    def __init__(self) -> None:
        self.runs: dict[str, Run] = {}

    def sample(self, key: str | None) -> SamplingDecision:
        return _Captured(key, scorers=())

    def submit(self, run: Run, decision: SamplingDecision | None = None) -> bool:
        self.runs[run.run_id] = run
        return True

    def drop(self, decision: SamplingDecision, reason: str) -> None:
        return None

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> None:
        return None

    def stats(self) -> DispatchStats:
        return DispatchStats()

    def result(self, run_id: uuid.UUID) -> Run:
        run = self.runs.get(str(run_id))
        if run is not None:
            return run
        if self.runs:  # the runnable replaced the run id it was given
            return next(iter(self.runs.values()))
        raise RuntimeError(
            "no LangChain run was recorded: the runnable must be a LangChain Runnable that "
            "passes its config on"
        )


def _prepare(
    runnable: Any, config: RunnableConfig | None
) -> tuple[_CaptureSink, RunnableConfig, uuid.UUID]:
    if not isinstance(runnable, Runnable):
        raise TypeError(
            f"capture_run needs a LangChain Runnable (an agent, a chain, a model), "
            f"not {type(runnable).__name__}"
        )
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(f"config must be a RunnableConfig dict, not {type(config).__name__}")
    sink = _CaptureSink()
    # Offline, nothing recorded is a judge's own call: record even inside a scorer (run_evals
    # may capture from one).
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never", ignore_scorer_calls=False)
    cfg: dict[str, Any] = dict(config or {})
    callbacks = cfg.get("callbacks")
    if callbacks is None:
        cfg["callbacks"] = [handler]
    elif isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        manager.add_handler(handler, True)
        cfg["callbacks"] = manager
    else:
        cfg["callbacks"] = [*callbacks, handler]
    run_id = cfg.get("run_id")
    if not isinstance(run_id, uuid.UUID):
        run_id = uuid.uuid4()
        cfg["run_id"] = run_id
    return sink, RunnableConfig(**cfg), run_id  # type: ignore[typeddict-item]


def capture_run(
    runnable: Runnable[Any, Any], input: Any, *, config: RunnableConfig | None = None
) -> tuple[Any, Run]:
    """Invoke ``runnable`` once and return ``(output, run)``.

    The run is recorded by the same code as :class:`~livescore_langchain.LiveScoringHandler`
    (input, output, model turns, tool calls with results), so ``get_context`` and
    ``extract_tool_results`` see it exactly as in live scoring. Nothing is sampled or
    scored. Exceptions from the runnable propagate unchanged.

    Args:
        runnable: An agent (``create_agent(...)``), chain or model.
        input: Its input, e.g. ``{"messages": [{"role": "user", "content": "..."}]}``.
        config: A ``RunnableConfig``; its callbacks are kept and the recorder is added.

    Example:
        >>> from langchain_core.runnables import RunnableLambda
        >>> output, run = capture_run(RunnableLambda(lambda q: q.upper()), "hi")
        >>> output, run.input, run.output
        ('HI', 'hi', 'HI')
    """
    sink, cfg, run_id = _prepare(runnable, config)
    output = runnable.invoke(input, cfg)
    return output, sink.result(run_id)


async def acapture_run(
    runnable: Runnable[Any, Any], input: Any, *, config: RunnableConfig | None = None
) -> tuple[Any, Run]:
    """The async form of :func:`capture_run` (``ainvoke``).

    Example:
        >>> # output, run = await acapture_run(agent, {"messages": [("user", "hi")]})
    """
    sink, cfg, run_id = _prepare(runnable, config)
    output = await runnable.ainvoke(input, cfg)
    return output, sink.result(run_id)
