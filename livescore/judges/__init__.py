"""Judges: the models that answer prompt steps. ``"openai/<model>"`` strings resolve here.

Importing this package does not import ``openai``: it is loaded when the first
:class:`OpenAIJudge` is built.

A judge knows what its tokens cost from a :class:`Price` (``OpenAIJudge(model,
prices=...)``, ``$LIVESCORE_JUDGE_PRICES``, :data:`DEFAULT_PRICES`), and spends from a
:class:`JudgeBudget` when it has one: a score the budget cannot pay is skipped before any
judge call.

To write a judge of your own, implement :class:`Judge` (``model_name``,
``generate_object``, ``generate_text``); :func:`ask_for_object` gives it the same parsing,
validation and single corrective retry as :class:`OpenAIJudge` (an ``ask`` function
returning an :class:`Answer` for a list of :data:`Message` is all it needs). The judge
errors are defined in ``livescore._errors``, with the whole exception tree.
:func:`classify_with_object` answers :meth:`Judge.classify` (a one-word verdict with its
probability) from a structured answer, for a judge whose model gives no token probabilities.

Example:
    >>> from livescore.judges import resolve_judge
    >>> resolve_judge("openai/llama3.2", base_url="http://127.0.0.1:8080/v1").model_name
    'llama3.2'
"""

from livescore._errors import (
    BudgetLedgerError,
    JudgeAuthError,
    JudgeBadRequestError,
    JudgeConfigError,
    JudgeConnectionError,
    JudgeError,
    JudgeRateLimitError,
    JudgeResponseError,
    JudgeServerError,
    JudgeTimeoutError,
)
from livescore._usage import JudgeReply, JudgeUsage
from livescore.judges._budget import (
    Admission,
    BudgetLedger,
    BudgetPeriod,
    BudgetStats,
    BudgetTicket,
    JudgeBudget,
    LocalBudgetLedger,
    Reservation,
    budget_of,
)
from livescore.judges._cache import CacheStats, ResponseCache, default_cache_dir
from livescore.judges._classify import Classification, classify_with_object
from livescore.judges._openai import DEFAULT_TIMEOUT, OpenAIJudge
from livescore.judges._prices import (
    DEFAULT_PRICES,
    DEFAULT_PRICES_AS_OF,
    PRICES_ENV,
    Price,
    PriceLike,
    PriceTable,
    load_prices,
    price_of,
)
from livescore.judges._protocol import Judge
from livescore.judges._resolve import resolve_judge
from livescore.judges._structured import Answer, Message
from livescore.judges._validation import ask_for_object

__all__ = (
    "DEFAULT_PRICES",
    "DEFAULT_PRICES_AS_OF",
    "DEFAULT_TIMEOUT",
    "PRICES_ENV",
    "Admission",
    "Answer",
    "BudgetLedger",
    "BudgetLedgerError",
    "BudgetPeriod",
    "BudgetStats",
    "BudgetTicket",
    "CacheStats",
    "Classification",
    "Judge",
    "JudgeAuthError",
    "JudgeBadRequestError",
    "JudgeBudget",
    "JudgeConfigError",
    "JudgeConnectionError",
    "JudgeError",
    "JudgeRateLimitError",
    "JudgeReply",
    "JudgeResponseError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "JudgeUsage",
    "LocalBudgetLedger",
    "Message",
    "OpenAIJudge",
    "Price",
    "PriceLike",
    "PriceTable",
    "Reservation",
    "ResponseCache",
    "ask_for_object",
    "budget_of",
    "classify_with_object",
    "default_cache_dir",
    "load_prices",
    "price_of",
    "resolve_judge",
)
