"""Personal data kept from the judge and from telemetry: consistent pseudonymisation.

With ``redact=`` (on :func:`~livescore.create_scorer`, :meth:`~livescore.Scorer.score`,
:class:`~livescore.live.LiveDispatcher`, :func:`~livescore.run_evals`, the fleet's worker)
each score replaces the personal data of its run (input, output, steps, tool arguments and
results, conversation turns) and of its context with placeholders (``<PERSON_1>``,
``<EMAIL_1>``) before any step runs, so no prompt, explanation, span, event, sink payload
or results file holds the values. A detector that raises fails the score with
``error.type = "redaction"``; the text is never sent unredacted.

Example:
    >>> redactor = PersonalDataRedactor(names=False)
    >>> Pseudonyms(redactor).redact("Call +1 212 555 0199 or mail bo@example.com")
    'Call <PHONE_1> or mail <EMAIL_1>'
"""

from livescore.pii._detect import (
    DEFAULT_ENTITIES,
    NER_MODEL_PACKAGE,
    NER_MODEL_SHA256,
    Detect,
    Detection,
    PersonalDataRedactor,
    RedactSpec,
    as_detector,
)
from livescore.pii._pseudonyms import Pseudonyms, RedactionError

__all__ = (
    "DEFAULT_ENTITIES",
    "NER_MODEL_PACKAGE",
    "NER_MODEL_SHA256",
    "Detect",
    "Detection",
    "PersonalDataRedactor",
    "Pseudonyms",
    "RedactSpec",
    "RedactionError",
    "as_detector",
)
