"""LCEL chains, not agents: what the handler records from them, and how they are scored.

The handler records a chain's run as the chain gives it: its input as passed (a dict of
template variables, a question string), each model turn with its rendered prompt, the
retrieved documents, and its output as returned (an output parser's string, a lambda's
dict). Whether a scorer finds a question and an answer in that is the scorers' business;
the last tests pin the result end to end, through the real dispatcher and judge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _lc_support import SpySink, hex_span_id, parent_span_id, spans_named
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from livescore import Run, get_run_context
from livescore.otel import attributes as attrs
from livescore.scorers import create_hallucination_scorer, create_keyword_coverage_scorer
from livescore.testing import OpenAITestServer
from livescore_langchain import LiveScoringHandler
from livescore_langchain.testing import ScriptedChatModel

MakeHandler = Callable[..., LiveScoringHandler]

QUESTION = "What does ownership mean in Rust, and when is a value dropped?"
ANSWER = "In Rust, each value has exactly one owner."
DOCUMENT = "Rust ownership: each value has exactly one owner; it is dropped with its owner."
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Answer from this context only:\n{context}"), ("user", "{question}")]
)


class Shelf(BaseRetriever):
    """A retriever that always finds the one document about Rust ownership."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return [Document(page_content=DOCUMENT)]


def prompt_model_parser() -> Runnable[Any, str]:
    """``prompt | model | parser``: template variables in, the answer as a string out."""
    return PROMPT | ScriptedChatModel(responses=[ANSWER]) | StrOutputParser()


def rag_chain() -> Runnable[Any, str]:
    """The tutorial's RAG chain: the question string in, the answer as a string out."""
    context = Shelf() | RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs))
    return (
        {"context": context, "question": RunnablePassthrough()}
        | PROMPT
        | ScriptedChatModel(responses=[ANSWER])
        | StrOutputParser()
    )


# -- what the handler records -----------------------------------------------------------------


def test_prompt_model_parser_is_recorded_as_the_chain_gives_it() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    variables = {"context": DOCUMENT, "question": QUESTION}

    answer = prompt_model_parser().invoke(variables, config={"callbacks": [handler]})

    assert answer == ANSWER
    (run,) = sink.runs
    assert run.input == variables  # the template variables, as passed
    assert run.output == ANSWER  # the parser's string
    (turn,) = run.steps
    assert turn.kind == "model"
    assert [type(m) for m in turn.input] == [SystemMessage, HumanMessage]
    assert turn.input[1].content == QUESTION  # the prompt the model really got
    assert DOCUMENT in turn.input[0].content
    assert turn.output.content == ANSWER


def test_a_streamed_chain_is_recorded_with_the_input_it_was_given() -> None:
    # A streamed chain starts with a placeholder input ({"input": ""}) and says what it
    # was given only when it ends.
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    variables = {"context": DOCUMENT, "question": QUESTION}

    chunks = list(prompt_model_parser().stream(variables, config={"callbacks": [handler]}))

    assert len(chunks) > 1
    (run,) = sink.runs
    assert run.input == variables
    assert run.output == "".join(chunks) == ANSWER


@pytest.mark.anyio
async def test_an_async_streamed_chain_is_recorded_with_the_input_it_was_given() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")

    chunks = [c async for c in rag_chain().astream(QUESTION, config={"callbacks": [handler]})]

    (run,) = sink.runs
    assert run.input == QUESTION
    assert run.output == "".join(chunks) == ANSWER
    assert [s.kind for s in run.steps] == ["retriever", "model"]


def test_a_lambda_returning_a_dict_is_recorded_as_returned() -> None:
    sink = SpySink()
    handler = LiveScoringHandler(dispatcher=sink, emit_run_spans="never")
    matches = {"ids": [3, 7], "score": 0.93}

    RunnableLambda(lambda q: matches).invoke(QUESTION, config={"callbacks": [handler]})

    (run,) = sink.runs
    assert run.input == QUESTION
    assert run.output is matches
    assert run.steps == []


# -- end to end: the dispatcher, the scorers, the judge over HTTP ------------------------------


def _evaluations(exporter: InMemorySpanExporter) -> dict[str, dict[str, Any]]:
    return {
        str(s.attributes[attrs.GEN_AI_EVALUATION_NAME]): dict(s.attributes)
        for s in spans_named(exporter.get_finished_spans(), "evaluation")
        if s.attributes is not None
    }


def test_a_chain_whose_output_string_is_an_answer_is_scored(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    claim = "Each value in Rust has exactly one owner."
    grounded = {
        "claims": [claim],
        "verdicts": [{"statement": claim, "verdict": "no", "reason": "The document says so."}],
        "reason": "The one claim is in the retrieved document.",
    }
    keyword_coverage = create_keyword_coverage_scorer()
    with OpenAITestServer([grounded]) as server:
        hallucination = create_hallucination_scorer(
            model=server.judge(), get_context=get_run_context, judge_mode="one_call"
        )
        handler = make_handler([hallucination, keyword_coverage], name="rust-faq")

        answer = rag_chain().invoke(QUESTION, config={"callbacks": [handler]})

        assert handler.flush(timeout=30)
        (request,) = server.requests
    assert answer == ANSWER
    stats = handler.stats()
    assert (stats.sampled, stats.scored) == (2, 2)
    judged = str(request["messages"][-1]["content"])
    assert DOCUMENT in judged  # the retrieved document is the ground truth
    assert ANSWER in judged  # the parser's string is the answer judged
    evaluations = _evaluations(exporter)
    assert evaluations["hallucination"][attrs.GEN_AI_EVALUATION_SCORE_VALUE] == 0.0
    # The live score is the score of the question and the answer the chain gave.
    direct = keyword_coverage.run_sync(Run(input=QUESTION, output=ANSWER))
    assert direct.score is not None
    assert 0.0 < direct.score < 1.0
    live = evaluations["keyword-coverage"]
    assert live[attrs.GEN_AI_EVALUATION_SCORE_VALUE] == direct.score
    # Both scores sit under the span of the chain's run.
    (chain_span,) = spans_named(exporter.get_finished_spans(), "invoke_agent rust-faq")
    for span in spans_named(exporter.get_finished_spans(), "evaluation"):
        assert parent_span_id(span) == hex_span_id(chain_span)


def test_a_dict_output_with_no_text_is_skipped_with_a_reason(
    make_handler: MakeHandler, exporter: InMemorySpanExporter
) -> None:
    # No answer text can be found in {"ids": [...], "score": ...}: scoring it would invent
    # a verdict (keyword coverage 0.0, hallucination 0.0 "the output is empty").
    with OpenAITestServer() as server:
        hallucination = create_hallucination_scorer(
            model=server.judge(), get_context=lambda run, step: [DOCUMENT], judge_mode="one_call"
        )
        handler = make_handler([hallucination, create_keyword_coverage_scorer()])

        RunnableLambda(lambda q: {"ids": [3, 7], "score": 0.93}).invoke(
            QUESTION, config={"callbacks": [handler]}
        )

        assert handler.flush(timeout=30)
        assert server.requests == []  # no judge call for a run with nothing to judge
    stats = handler.stats()
    assert (stats.sampled, stats.skipped, stats.scored) == (2, 2, 0)
    for name, attributes in _evaluations(exporter).items():
        assert attributes[attrs.LIVESCORE_STATUS] == "skipped", name
        assert str(attributes.get(attrs.LIVESCORE_SKIP_REASON, "")).strip(), name
        assert attrs.GEN_AI_EVALUATION_SCORE_VALUE not in attributes, name
