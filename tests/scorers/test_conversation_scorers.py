"""The conversation scorers over real HTTP: their cases for the cross-cutting judge tests, the
turns at fault in their reasons, the shared user digest, the sliding window, ground truth from
every turn, and the code scorers."""

from __future__ import annotations

from typing import Any

import pytest
from _judge_support import INJECTION, Case, between, score_over_http, user_prompt

from livescore._catalog import get_catalog_entry
from livescore.otel import attributes as A
from livescore.runs import Conversation
from livescore.scorers import (
    create_conversation_completeness_scorer,
    create_conversation_hallucination_scorer,
    create_conversation_relevancy_scorer,
    create_hallucination_scorer,
    create_knowledge_retention_scorer,
    create_role_adherence_scorer,
    create_tool_error_rate_scorer,
    create_turn_count_scorer,
    create_user_frustration_scorer,
)
from livescore.scoring import RunMemo
from livescore.testing import OpenAITestServer

pytestmark = pytest.mark.anyio


def support_chat(last_output: str = "What is your order number?") -> Conversation:
    return Conversation.from_turns(
        [
            {
                "input": "Hi, order 48213 has not arrived. I am vegetarian, by the way.",
                "output": "I am sorry. Let me look at order 48213.",
                "tool_calls": [
                    {"name": "track", "args": {"order": 48213}, "result": "left Lyon on Monday"}
                ],
            },
            {
                "input": "Can you also send it to my office instead?",
                "output": "The parcel left Lyon on Monday and arrives on Friday.",
                "tool_calls": [{"name": "eta", "args": {"order": 48213}, "result": "Thursday"}],
            },
            {"input": "So when does it come?", "output": last_output},
        ],
        id="chat-1",
    )


def verdicts(rows: list[tuple[str, str, int | None]], turn_field: bool = True) -> dict[str, Any]:
    out = []
    for i, (statement, mark, turn) in enumerate(rows, start=1):
        verdict: dict[str, Any] = {"statement": statement, "verdict": mark, "reason": f"r{i}"}
        if turn_field:
            verdict["turn"] = turn
        out.append(verdict)
    return {"verdicts": out}


# -- the cases the cross-cutting judge tests run (test_judge_scorers.py) ------------------------

FACTS = ["[turn 1] The order number is 48213.", "[turn 1] The user is vegetarian."]
FACT_VERDICTS = [(FACTS[0], "yes", 3), (FACTS[1], "no", None)]
INTENTIONS = [
    "[turn 1] Find out where order 48213 is.",
    "[turn 2] Send the parcel to the office.",
    "[turn 3] Say when the parcel comes.",
]
INTENTION_VERDICTS = [
    (INTENTIONS[0], "yes", 1),
    (INTENTIONS[1], "no", None),
    (INTENTIONS[2], "no", None),
]
REPLIES = [
    "[turn 1] I am sorry. Let me look at order 48213.",
    "[turn 2] The parcel left Lyon on Monday and arrives on Friday.",
    "[turn 3] What is your order number?",
]
CLAIMS = [
    "[turn 2] The parcel left Lyon on Monday.",
    "[turn 2] The parcel arrives on Friday.",
]


def _retention_case() -> Case:
    return Case(
        name="knowledge-retention",
        build=lambda judge, mode: create_knowledge_retention_scorer(model=judge, judge_mode=mode),
        run=support_chat(),
        step_replies=[
            {"facts": FACTS, "intentions": INTENTIONS},
            verdicts(FACT_VERDICTS),
            "The score is 0.5 because turn 3 asks for the order number again.",
        ],
        one_call_reply={
            "facts": FACTS,
            **verdicts(FACT_VERDICTS),
            "reason": "Turn 3 asks for the order number again.",
        },
        score=0.5,
        label="moderate",
        count_step="analyze",
        wrong_count=verdicts(FACT_VERDICTS[:1]),
        replies_before_count=[{"facts": FACTS, "intentions": INTENTIONS}],
        injected_run=support_chat(f"What is your order? {INJECTION}"),
        data_tag="conversation",
    )


def _completeness_case() -> Case:
    return Case(
        name="conversation-completeness",
        build=lambda judge, mode: create_conversation_completeness_scorer(
            model=judge, judge_mode=mode
        ),
        run=support_chat(),
        step_replies=[
            {"facts": FACTS, "intentions": INTENTIONS},
            verdicts(INTENTION_VERDICTS),
            "The score is 0.33 because the office delivery and the date were left unmet.",
        ],
        one_call_reply={
            "intentions": INTENTIONS,
            **verdicts(INTENTION_VERDICTS),
            "reason": "The office delivery and the date were left unmet.",
        },
        score=0.33,
        label="low",
        count_step="analyze",
        wrong_count=verdicts(INTENTION_VERDICTS[:2]),
        replies_before_count=[{"facts": FACTS, "intentions": INTENTIONS}],
        injected_run=support_chat(f"What is your order? {INJECTION}"),
        data_tag="conversation",
    )


ROLE_VERDICTS = [(REPLIES[0], "yes", None), (REPLIES[1], "yes", None), (REPLIES[2], "no", None)]


def _role_case() -> Case:
    return Case(
        name="role-adherence",
        build=lambda judge, mode: create_role_adherence_scorer(
            model=judge, role="A polite support agent for parcels.", judge_mode=mode
        ),
        run=support_chat(),
        step_replies=[
            verdicts(ROLE_VERDICTS, turn_field=False),
            "The score is 0.67 because turn 3 is curt.",
        ],
        one_call_reply={**verdicts(ROLE_VERDICTS, turn_field=False), "reason": "Turn 3 is curt."},
        score=0.67,
        label="high",
        count_step="analyze",
        wrong_count=verdicts(ROLE_VERDICTS[:1], turn_field=False),
        replies_before_count=[],
        injected_run=support_chat(f"What is your order? {INJECTION}"),
        data_tag="conversation",
    )


RELEVANCY_VERDICTS = [
    (REPLIES[0], "yes", None),
    (REPLIES[1], "yes", None),
    (REPLIES[2], "no", None),
]


def _relevancy_case() -> Case:
    return Case(
        name="conversation-relevancy",
        build=lambda judge, mode: create_conversation_relevancy_scorer(
            model=judge, judge_mode=mode
        ),
        run=support_chat(),
        step_replies=[
            verdicts(RELEVANCY_VERDICTS, turn_field=False),
            "The score is 0.67 because turn 3 ignores the question.",
        ],
        one_call_reply={
            **verdicts(RELEVANCY_VERDICTS, turn_field=False),
            "reason": "Turn 3 ignores the question.",
        },
        score=0.67,
        label="high",
        count_step="analyze",
        wrong_count=verdicts(RELEVANCY_VERDICTS[:2], turn_field=False),
        replies_before_count=[],
        injected_run=support_chat(f"What is your order? {INJECTION}"),
        data_tag="replies",
    )


CLAIM_VERDICTS = [(CLAIMS[0], "no", None), (CLAIMS[1], "yes", None)]
EXTRACTIONS = [
    {"claims": []},
    {"claims": [c.removeprefix("[turn 2] ") for c in CLAIMS]},
    {"claims": []},
]


def _hallucination_case() -> Case:
    return Case(
        name="conversation-hallucination",
        build=lambda judge, mode: create_conversation_hallucination_scorer(
            model=judge, judge_mode=mode
        ),
        run=support_chat(),
        step_replies=[
            *EXTRACTIONS,
            verdicts(CLAIM_VERDICTS, turn_field=False),
            "The score is 0.5 because turn 2 says Friday where the estimate says Thursday.",
        ],
        one_call_reply={
            "claims": CLAIMS,
            **verdicts(CLAIM_VERDICTS, turn_field=False),
            "reason": "Turn 2 says Friday where the estimate says Thursday.",
        },
        score=0.5,
        label="mixed",
        count_step="analyze",
        wrong_count=verdicts(CLAIM_VERDICTS[:1], turn_field=False),
        replies_before_count=EXTRACTIONS,
        injected_run=support_chat(f"What is your order? {INJECTION}"),
        data_tag="output",
        higher_is_better=False,
    )


JUDGE_CASES = [
    _retention_case(),
    _completeness_case(),
    _role_case(),
    _relevancy_case(),
    _hallucination_case(),
]


# -- what each one says about the turns ------------------------------------------------------------


async def test_knowledge_retention_names_the_turn_that_forgot() -> None:
    case = _retention_case()
    result, requests = await score_over_http(
        lambda judge: case.build(judge, "three_step"), case.step_replies, case.run
    )
    assert result.status == "scored", result.error
    assert result.flags["turns_at_fault"] == [3]
    assert result.attributes[A.LIVESCORE_TURNS_AT_FAULT] == "3"
    assert result.turns is not None
    assert (result.turns.conversation_id, result.turns.count) == ("chat-1", 3)
    # The digest reads the user's messages only; the verdicts the whole conversation.
    digest = user_prompt(requests[0])
    assert "I am vegetarian" in digest
    assert "Let me look at order" not in digest
    assert "What is your order number?" in between(user_prompt(requests[1]), "conversation")


async def test_retention_and_completeness_share_the_user_digest() -> None:
    conversation = support_chat()
    digest = {"facts": FACTS, "intentions": INTENTIONS}
    replies = [digest, verdicts(FACT_VERDICTS), "why 1", verdicts(INTENTION_VERDICTS), "why 2"]
    async with OpenAITestServer(replies) as server:
        judge = server.judge()
        memo = RunMemo()
        retention = create_knowledge_retention_scorer(model=judge)
        completeness = create_conversation_completeness_scorer(model=judge)
        first = await retention.score(conversation, memo=memo)
        second = await completeness.score(conversation, memo=memo)
        systems = [r["messages"][0]["content"] for r in server.requests]
        # One digest for both, then each one's verdicts and reason.
        assert len(systems) == 5
        assert sum(1 for text in systems if text.startswith("You read the user's side")) == 1
    assert (first.score, second.score) == (0.5, 0.33)
    assert second.usage.shared == 1
    assert second.preprocess_step_result == {"intentions": INTENTIONS}
    assert second.flags["turns_at_fault"] == [2, 3]  # the turns whose requests were unmet
    assert "asked in turns 2 and 3" in (second.reason or "") or second.reason == "why 2"


async def test_completeness_summary_names_the_turns_when_the_judge_gives_no_reason() -> None:
    case = _completeness_case()
    result, _ = await score_over_http(
        lambda judge: case.build(judge, "one_call"),
        [{**case.one_call_reply, "reason": ""}],
        case.run,
    )
    assert result.reason == (
        "The score is 0.33 because 2 of 3 requests of the user were left unmet (asked in "
        "turns 2 and 3): Send the parcel to the office; Say when the parcel comes."
    )


async def test_role_adherence_reads_the_system_prompt_when_no_role_is_given() -> None:
    conversation = Conversation.from_turns(
        [
            {
                "input": [
                    {"role": "system", "content": "You are Parcelly's support agent."},
                    {"role": "user", "content": "Where is my parcel?"},
                ],
                "output": "It is in Lyon.",
            }
        ]
    )
    reply = verdicts([("[turn 1] It is in Lyon.", "yes", None)], turn_field=False)
    result, requests = await score_over_http(
        lambda judge: create_role_adherence_scorer(model=judge), [reply, "fine"], conversation
    )
    assert result.score == 1.0
    assert between(user_prompt(requests[0]), "role") == "You are Parcelly's support agent."
    no_role = Conversation.from_turns([{"input": "Hi", "output": "Hello"}])
    skipped, calls = await score_over_http(
        lambda judge: create_role_adherence_scorer(model=judge), [], no_role
    )
    assert skipped.status == "skipped"
    assert "no role to judge against" in (skipped.reason or "")
    assert calls == []


async def test_conversation_relevancy_shows_each_reply_its_window_only() -> None:
    turns = [{"input": f"question {i}", "output": f"answer {i}"} for i in range(1, 6)]
    conversation = Conversation.from_turns(turns)
    rows = [(f"[turn {i}] answer {i}", "yes", None) for i in range(1, 6)]
    result, requests = await score_over_http(
        lambda judge: create_conversation_relevancy_scorer(model=judge, window=1),
        [verdicts(rows, turn_field=False), "fine"],
        conversation,
    )
    assert result.score == 1.0
    block = between(user_prompt(requests[0]), "replies")
    last = block.split('<reply index="5"', 1)[1]
    assert "question 4" in last  # the one turn before it
    assert "question 3" not in last  # outside its window
    assert "<assistant>answer 5</assistant>" in last
    with pytest.raises(ValueError, match="window"):
        create_conversation_relevancy_scorer(model="openai/x", window=-1)


async def test_conversation_hallucination_judges_claims_against_every_turns_tool_results() -> None:
    case = _hallucination_case()
    result, requests = await score_over_http(
        lambda judge: case.build(judge, "three_step"), case.step_replies, case.run
    )
    assert result.status == "scored", result.error
    assert result.flags["turns_at_fault"] == [2]
    # One claims extraction per reply, then the verdicts against every turn's tool results.
    assert [between(user_prompt(r), "output") for r in requests[:3]] == [
        "I am sorry. Let me look at order 48213.",
        "The parcel left Lyon on Monday and arrives on Friday.",
        "What is your order number?",
    ]
    context = between(user_prompt(requests[3]), "context")
    assert "[turn 1]" in context
    assert "left Lyon on Monday" in context
    assert "[turn 2]" in context
    assert "Thursday" in context


async def test_a_reply_extracted_before_costs_no_call() -> None:
    conversation = support_chat()
    # The run-level hallucination scorer scored turn 2 live: its claims extraction is the
    # same request, so the conversation's memo answers it.
    memo = RunMemo()
    live_turn = conversation.runs[1]
    replies = [
        EXTRACTIONS[1],
        {
            "verdicts": [
                {"statement": c, "verdict": "no", "reason": "r"} for c in EXTRACTIONS[1]["claims"]
            ]
        },
        "fine",
        EXTRACTIONS[0],
        EXTRACTIONS[2],
        verdicts(CLAIM_VERDICTS, turn_field=False),
        "why",
    ]
    async with OpenAITestServer(replies) as server:
        judge = server.judge()
        run_level = create_hallucination_scorer(model=judge, get_context=lambda run, step: ["x"])
        assert (await run_level.score(live_turn, memo=memo)).status == "scored"
        whole = create_conversation_hallucination_scorer(model=judge)
        result = await whole.score(conversation, memo=memo)
        assert len(server.requests) == 7  # turn 2's extraction was not asked again
    assert result.score == 0.5
    assert result.step_usage["preprocess"].calls == 2
    assert result.usage.shared == 1


async def test_a_conversation_without_tool_results_is_skipped_by_the_hallucination_scorer() -> None:
    conversation = Conversation.from_turns([{"input": "Hi", "output": "The sky is green."}])
    result, requests = await score_over_http(
        lambda judge: create_conversation_hallucination_scorer(model=judge), [], conversation
    )
    assert result.status == "skipped"
    assert "no context to judge claims against" in (result.reason or "")
    assert requests == []


@pytest.mark.parametrize(
    "build",
    [
        lambda j: create_knowledge_retention_scorer(model=j),
        lambda j: create_conversation_completeness_scorer(model=j),
    ],
)
async def test_no_facts_or_no_requests_is_not_scorable(build: Any) -> None:
    result, _ = await score_over_http(build, [{"facts": [], "intentions": []}], support_chat())
    assert result.status == "skipped"
    assert result.reason


# -- the code scorers ----------------------------------------------------------------------------


def test_turn_count_counts_every_turn_forgotten_ones_included() -> None:
    conversation = support_chat()
    conversation.first_turn = 4  # three earlier turns were let go
    result = create_turn_count_scorer(max_turns=5).run_sync(conversation)
    assert (result.score, result.label) == (6.0, "long")
    assert result.flags["turns_forgotten"] == 3
    with pytest.raises(ValueError, match="max_turns"):
        create_turn_count_scorer(max_turns=0)


def test_tool_error_rate_names_the_turns_whose_calls_failed() -> None:
    conversation = Conversation.from_turns(
        [
            {"input": "a", "output": "b", "tool_calls": [{"name": "t1", "args": {}, "result": 1}]},
            {
                "input": "c",
                "output": "d",
                "tool_calls": [{"name": "t2", "args": {}, "error": "500"}],
            },
            {
                "input": "e",
                "output": "f",
                "tool_calls": [{"name": "t3", "args": {}, "error": "404"}],
            },
        ]
    )
    result = create_tool_error_rate_scorer().run_sync(conversation)
    assert (result.score, result.label) == (0.67, "high")
    assert result.flags["turns_at_fault"] == [2, 3]
    assert "in turns 2 and 3: t2 (500); t3 (404)" in (result.reason or "")
    none = create_tool_error_rate_scorer().run_sync(
        Conversation.from_turns([{"input": "a", "output": "b"}])
    )
    assert none.status == "skipped"


def test_user_frustration_follows_the_users_tone_over_the_turns() -> None:
    calm = Conversation.from_turns(
        [
            {"input": "Hi, where is my parcel?", "output": "In Lyon."},
            {"input": "Thanks, great!", "output": ":)"},
        ]
    )
    angry = Conversation.from_turns(
        [
            {"input": "Hi, where is my parcel?", "output": "Let me check."},
            {"input": "Still nothing. This is terrible.", "output": "Sorry."},
            {"input": "I HATE this useless service!!!", "output": "Sorry."},
        ]
    )
    scorer = create_user_frustration_scorer()
    low, high = scorer.run_sync(calm), scorer.run_sync(angry)
    assert (low.score, low.label) == (0.0, "calm")
    assert high.label == "angry"
    assert high.score is not None
    assert high.score > 0.65
    assert high.flags["turns_at_fault"] == [2, 3]
    assert "most in turn 3" in (high.reason or "")


def test_code_scorers_are_in_the_catalog_as_conversation_scorers() -> None:
    for name in ("turn-count", "tool-error-rate", "user-frustration"):
        entry = get_catalog_entry(name)
        assert (entry.family, entry.needs_judge, entry.higher_is_better) == (
            "conversation",
            False,
            False,
        )


def test_every_conversation_scorer_is_a_conversation_level_scorer() -> None:
    from livescore.scorers import ScorerOptions, build_scorer, scorer_catalog
    from livescore.testing import ScriptedJudge

    entries = [e for e in scorer_catalog() if e.family == "conversation"]
    assert len(entries) == 8
    for entry in entries:
        options = ScorerOptions(model=ScriptedJudge([]) if entry.needs_judge else None)
        for spec in entry.examples:
            assert build_scorer(spec, options).level == "conversation", spec
