"""Every OpenTelemetry name livescore emits, in one place: the definitions.

Users and scorers read them as :mod:`livescore.otel.attributes` (the public module, which
re-exports this one). They are defined here, at the bottom of the layers, because every
layer names attributes: the scorer pipeline (``livescore.scoring``) sits below the emitter
(``livescore.otel``) and must not import it.

The GenAI semantic conventions are still in development and their Python constants in
``opentelemetry-semantic-conventions`` are deprecated, so livescore keeps plain strings.
Search your tracing backend for these names (for example ``gen_ai.evaluation.name``).

Scorers put their own facts on the score span through ``ScoreResult.attributes`` (set as
``ctx.attributes[name] = value`` in a step); the names they use live here too. This module
imports nothing, so a scorer can use it without loading OpenTelemetry.
"""

from __future__ import annotations

from typing import Final

# -- GenAI semantic conventions: evaluation ---------------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
OPERATION_EVALUATION: Final = "evaluation"
GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
GEN_AI_EVALUATION_RESULT_EVENT: Final = "gen_ai.evaluation.result"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
ERROR_TYPE: Final = "error.type"

# -- GenAI evaluation: open proposals (emitted only with semconv_proposals=True) ----------
# semantic-conventions-genai PR #359 (evaluator provenance, open): the evaluator's id,
# version and type ("llm_judge", "deterministic" or "human").
GEN_AI_EVALUATION_EVALUATOR_ID: Final = "gen_ai.evaluation.evaluator.id"
GEN_AI_EVALUATION_EVALUATOR_VERSION: Final = "gen_ai.evaluation.evaluator.version"
GEN_AI_EVALUATION_EVALUATOR_TYPE: Final = "gen_ai.evaluation.evaluator.type"
EVALUATOR_TYPE_LLM_JUDGE: Final = "llm_judge"
EVALUATOR_TYPE_DETERMINISTIC: Final = "deterministic"
# pydantic-evals' extension (no proposal upstream yet): what was evaluated, here the agent's
# name (Run.name).
GEN_AI_EVALUATION_TARGET: Final = "gen_ai.evaluation.target"

# -- GenAI semantic conventions: agents, tools, models ----------------------------------
OPERATION_INVOKE_AGENT: Final = "invoke_agent"
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
OPERATION_CHAT: Final = "chat"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"

# -- OpenInference (Arize Phoenix) evaluation conventions --------------------------------
OPENINFERENCE_SPAN_KIND: Final = "openinference.span.kind"
OPENINFERENCE_KIND_EVALUATOR: Final = "EVALUATOR"
OPENINFERENCE_EVAL_NAME: Final = "evaluations.0.evaluation.name"
OPENINFERENCE_EVAL_SCORE: Final = "evaluations.0.evaluation.score"
OPENINFERENCE_EVAL_LABEL: Final = "evaluations.0.evaluation.label"
OPENINFERENCE_EVAL_EXPLANATION: Final = "evaluations.0.evaluation.explanation"
# OpenInference's session: a conversation's score carries it, so Phoenix files the score's
# trace under the conversation's session.
OPENINFERENCE_SESSION_ID: Final = "session.id"

# -- livescore extras ---------------------------------------------------------------------
LIVESCORE_SCORER_ID: Final = "livescore.scorer.id"
LIVESCORE_SCORER_VERSION: Final = "livescore.scorer.version"
LIVESCORE_STATUS: Final = "livescore.status"
LIVESCORE_SAMPLE_RATE: Final = "livescore.sample_rate"
LIVESCORE_RUN_ID: Final = "livescore.run.id"
# The run's own trace, on a score span that could not join it (the trace was not sampled,
# so the score is a root span of its own, linked to the run's span).
LIVESCORE_RUN_TRACE_ID: Final = "livescore.run.trace_id"
LIVESCORE_JUDGE_MODEL: Final = "livescore.judge.model"
LIVESCORE_JUDGE_CALLS: Final = "livescore.judge.calls"
LIVESCORE_JUDGE_INPUT_TOKENS: Final = "livescore.judge.input_tokens"
LIVESCORE_JUDGE_OUTPUT_TOKENS: Final = "livescore.judge.output_tokens"
LIVESCORE_JUDGE_LATENCY: Final = "livescore.judge.latency_s"
# Judge answers this score reused from another scorer's identical request on the same run
# (livescore.scoring.RunMemo): calls it did not make. Absent when none was shared.
LIVESCORE_JUDGE_SHARED: Final = "livescore.judge.shared"
# What the score's judge calls cost in US dollars, at the judge's price (absent when the
# judge's model has no known price), and the prompt tokens the server served from its cache.
LIVESCORE_JUDGE_COST: Final = "livescore.judge.cost_usd"
LIVESCORE_JUDGE_CACHED_INPUT_TOKENS: Final = "livescore.judge.cached_input_tokens"
# The judge budget a score was admitted by (its name); a score the budget could not pay is
# skipped before any judge call and carries livescore.judge.budget_exhausted = true.
LIVESCORE_JUDGE_BUDGET: Final = "livescore.judge.budget"
LIVESCORE_JUDGE_BUDGET_EXHAUSTED: Final = "livescore.judge.budget_exhausted"
# The budget's fallback scored it ("judge" for the cheaper judge, or the judge mode).
LIVESCORE_JUDGE_FALLBACK: Final = "livescore.judge.fallback"
# A score whose label a Calibration set (livescore eval --calibrate, calibration=): the
# calibration's id ("cal-" + 12 hex digits of its file's SHA-256), the threshold it applied,
# and, where it maps scores to probabilities, the label's probability. On the span and the
# event.
LIVESCORE_CALIBRATION: Final = "livescore.calibration"
LIVESCORE_CALIBRATION_THRESHOLD: Final = "livescore.calibration.threshold"
LIVESCORE_CALIBRATION_PROBABILITY: Final = "livescore.calibration.probability"
LIVESCORE_DURATION: Final = "livescore.duration_s"
LIVESCORE_FAILED_STEP: Final = "livescore.failed_step"
# Why a score failed (the error message), on a gen_ai.evaluation.result event; the span
# carries it in its status description instead.
LIVESCORE_ERROR_MESSAGE: Final = "livescore.error.message"
LIVESCORE_SKIP_REASON: Final = "livescore.skip_reason"
LIVESCORE_SOURCE: Final = "livescore.source"  # "live" or "eval"
LIVESCORE_REASON: Final = "livescore.reason"  # why a run was dropped (metric attribute)
LIVESCORE_DISPATCHER: Final = "livescore.dispatcher"  # the dispatcher's name (queue gauge)
LIVESCORE_SINK: Final = "livescore.sink"  # a dashboard sink's name ("phoenix", "langfuse")
# what became of a score a sink was given: sent | failed | dropped | skipped
LIVESCORE_SINK_OUTCOME: Final = "livescore.sink.outcome"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"  # "input" or "output" (token counter)
# A conversation's score (gen_ai.conversation.id names the conversation): the turns it
# covers (how many, the first and the last, numbered from 1), and how many earlier turns
# were let go to keep memory bounded before it was scored (first_turn - 1).
LIVESCORE_CONVERSATION_TURNS: Final = "livescore.conversation.turns"
LIVESCORE_CONVERSATION_FIRST_TURN: Final = "livescore.conversation.first_turn"
LIVESCORE_CONVERSATION_LAST_TURN: Final = "livescore.conversation.last_turn"
LIVESCORE_CONVERSATION_TURNS_FORGOTTEN: Final = "livescore.conversation.turns_forgotten"

# -- set by scorers, through ScoreResult.attributes ----------------------------------------
# The prebuilt scorers' names, kept here for code that reads them. Each scorer declares its
# own in its catalog entry (span_attributes): livescore.scorers.scorer_span_attributes()
# lists every one, a new scorer's included, with what it holds.
# Any scorer: the text it read was cut at its max_text_chars.
LIVESCORE_INPUT_TRUNCATED: Final = "livescore.input_truncated"
LIVESCORE_OUTPUT_TRUNCATED: Final = "livescore.output_truncated"
# Hallucination: claims judged, and how many of them are hallucinated.
LIVESCORE_CLAIMS_TOTAL: Final = "livescore.claims.total"
LIVESCORE_CLAIMS_HALLUCINATED: Final = "livescore.claims.hallucinated"
# Hallucination: the context sent to the judge was cut at max_context_chars (the whole
# rendered context block counts), and how many characters the context had before the cut.
LIVESCORE_CONTEXT_TRUNCATED: Final = "livescore.context.truncated"
LIVESCORE_CONTEXT_CHARS: Final = "livescore.context.chars"
# Keyword coverage: keywords to cover, and how many the response covers.
LIVESCORE_KEYWORDS_TOTAL: Final = "livescore.keywords.total"
LIVESCORE_KEYWORDS_MATCHED: Final = "livescore.keywords.matched"
# Faithfulness: claims the context backs (of livescore.claims.total).
LIVESCORE_CLAIMS_SUPPORTED: Final = "livescore.claims.supported"
# Logprob mode (hallucination, faithfulness): the judge's probability that the output holds
# an unsupported claim, and whether it was read from token logprobs (false: the judge gave
# none, and the probability is the structured answer's 0 or 1).
LIVESCORE_VERDICT_PROBABILITY: Final = "livescore.verdict.probability"
LIVESCORE_VERDICT_FROM_LOGPROBS: Final = "livescore.verdict.from_logprobs"
# Answer relevancy and toxicity: statements judged; how many are relevant, or toxic.
LIVESCORE_STATEMENTS_TOTAL: Final = "livescore.statements.total"
LIVESCORE_STATEMENTS_RELEVANT: Final = "livescore.statements.relevant"
LIVESCORE_STATEMENTS_TOXIC: Final = "livescore.statements.toxic"
# Bias: opinions judged, and how many are biased.
LIVESCORE_OPINIONS_TOTAL: Final = "livescore.opinions.total"
LIVESCORE_OPINIONS_BIASED: Final = "livescore.opinions.biased"
# Context relevance and precision: context pieces judged, and how many are relevant.
LIVESCORE_CONTEXT_PIECES: Final = "livescore.context.pieces"
LIVESCORE_CONTEXT_RELEVANT: Final = "livescore.context.relevant"
# Answer similarity: the ground truth's semantic units, how many the answer matches
# (exactly, in meaning or in part), and how many it contradicts.
LIVESCORE_GROUND_TRUTH_UNITS: Final = "livescore.ground_truth.units"
LIVESCORE_GROUND_TRUTH_MATCHED: Final = "livescore.ground_truth.matched"
LIVESCORE_GROUND_TRUTH_CONTRADICTIONS: Final = "livescore.ground_truth.contradictions"
# Prompt alignment: which prompt it judged against (user, system, both), and the
# requirements it found and saw fulfilled.
LIVESCORE_ALIGNMENT_MODE: Final = "livescore.alignment.mode"
LIVESCORE_REQUIREMENTS_TOTAL: Final = "livescore.requirements.total"
LIVESCORE_REQUIREMENTS_FULFILLED: Final = "livescore.requirements.fulfilled"
# Tool-call accuracy (LLM): tool calls judged, the appropriate ones, tools that were missing.
LIVESCORE_TOOL_CALLS_TOTAL: Final = "livescore.tool_calls.total"
LIVESCORE_TOOL_CALLS_APPROPRIATE: Final = "livescore.tool_calls.appropriate"
LIVESCORE_TOOLS_MISSING: Final = "livescore.tools.missing"
# Criteria: checks of the criterion judged, and how many the answer meets.
LIVESCORE_CHECKS_TOTAL: Final = "livescore.checks.total"
LIVESCORE_CHECKS_MET: Final = "livescore.checks.met"
# Conversation scorers: the turns at fault ("2,5"), and how many items (facts, intentions,
# replies, claims: the scorer's own) were judged.
LIVESCORE_TURNS_AT_FAULT: Final = "livescore.conversation.turns_at_fault"
LIVESCORE_CONVERSATION_ITEMS: Final = "livescore.conversation.items_judged"

# -- metrics --------------------------------------------------------------------------------
METRIC_SCORE: Final = "livescore.score"
# counter, attribute livescore.status = sampled | scored | failed | skipped | dropped |
# handed_off (passed to another process, which counts how it ends)
METRIC_RUNS: Final = "livescore.runs"
METRIC_JUDGE_LATENCY: Final = "livescore.judge.latency"
METRIC_JUDGE_TOKENS: Final = "livescore.judge.tokens"
# counter, USD, by livescore.scorer.id and livescore.judge.model
METRIC_JUDGE_COST: Final = "livescore.judge.cost"
METRIC_QUEUE_DEPTH: Final = "livescore.queue.depth"
# counter, by livescore.sink and livescore.sink.outcome (with livescore.reason unless sent)
METRIC_SINK_RECORDS: Final = "livescore.sink.records"
# observable counter, {trace}: traces a receiver finished with a span whose parent never
# arrived (split between receivers without trace-id affinity)
METRIC_PARTIAL_TRACES: Final = "livescore.collect.partial_traces"

INSTRUMENTATION_SCOPE: Final = "livescore"
