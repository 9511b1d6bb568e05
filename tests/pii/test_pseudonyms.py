"""Pseudonyms: one placeholder per value, the same everywhere in one score; bounded work."""

from __future__ import annotations

import threading

import pytest

from livescore import Run
from livescore.pii import Detection, PersonalDataRedactor, Pseudonyms, as_detector
from livescore.runs import Step, ToolCall


def by_words(**entities: str):  # type: ignore[no-untyped-def]
    """A detector of fixed words (a test double of a real detector)."""

    def detect(text: str) -> list[Detection]:
        found = []
        for word, entity in entities.items():
            at = text.find(word)
            while at >= 0:
                found.append(Detection(at, at + len(word), entity))
                at = text.find(word, at + 1)
        return found

    return detect


def test_the_same_value_gets_the_same_placeholder_in_every_text() -> None:
    p = Pseudonyms(by_words(Ann="PERSON", Bo="PERSON", **{"a@x.org": "EMAIL_ADDRESS"}))
    assert (
        p.redact("Ann wrote to Bo from a@x.org.")
        == "<PERSON_1> wrote to <PERSON_2> from <EMAIL_1>."
    )
    assert p.redact("Bo answered Ann.") == "<PERSON_2> answered <PERSON_1>."
    assert p.found == 3
    assert p.restore("<PERSON_2> and <EMAIL_1>") == "Bo and a@x.org"


def test_overlapping_findings_keep_the_longer_one() -> None:
    p = Pseudonyms(by_words(**{"a@x.org": "EMAIL_ADDRESS", "x.org": "URL"}))
    assert p.redact("Mail a@x.org or see x.org.") == "Mail <EMAIL_1> or see <URL_1>."


def test_a_name_within_another_is_the_same_person() -> None:
    p = Pseudonyms(by_words(**{"Dr. Ann Lee": "PERSON", "Lee": "PERSON", "Bo": "PERSON"}))
    assert (
        p.redact("Dr. Ann Lee met Bo; Lee left.") == "<PERSON_1> met <PERSON_2>; <PERSON_1> left."
    )


def test_a_value_found_once_is_replaced_where_the_detector_missed_it() -> None:
    # The detector finds the name only after "Dear" (as NER finds a name in one sentence
    # and misses it in the next): every text of the run still loses it.
    def detect(text: str) -> list[Detection]:
        at = text.find("Dear Ann Lee")
        return [Detection(at + 5, at + 12, "PERSON")] if at >= 0 else []

    p = Pseudonyms(detect)
    run = p.redact_run(Run(input="Is ann lee in?", output="Dear Ann Lee, yes."))
    assert (run.input, run.output) == ("Is <PERSON_1> in?", "Dear <PERSON_1>, yes.")


def test_a_run_is_redacted_everywhere_a_scorer_reads_it() -> None:
    p = Pseudonyms(by_words(Ann="PERSON"))
    run = Run(
        input=[{"role": "user", "content": "Is Ann in?"}],
        output="Ann is in.",
        ground_truth="Ann",
        steps=[
            Step(
                kind="tool",
                name="lookup",
                tool_call=ToolCall(name="lookup", args={"who": "Ann"}, result=["Ann: in"]),
                documents=["Ann's desk"],
            )
        ],
        metadata={"context": ["Ann works here"]},
    )
    seen = p.redact_run(run)
    assert "Ann" not in repr(seen)
    assert seen.input == [{"role": "user", "content": "Is <PERSON_1> in?"}]
    assert seen.steps[0].tool_call is not None
    assert seen.steps[0].tool_call.args == {"who": "<PERSON_1>"}
    assert run.output == "Ann is in."  # the original is untouched
    assert p.redact_run(run) is seen  # redacted once per run


def test_long_text_is_cut_before_detection_and_says_so() -> None:
    calls: list[int] = []

    def detect(text: str) -> list[Detection]:
        calls.append(len(text))
        return []

    p = Pseudonyms(detect, max_chars=100)
    assert p.redact("x" * 1000) == "x" * 100
    assert calls == [100]
    assert p.truncated


def test_placeholders_are_numbered_once_across_threads() -> None:
    p = Pseudonyms(by_words(Ann="PERSON", Bo="PERSON", Cy="PERSON"))
    results: list[str] = []

    def work() -> None:
        for _ in range(200):
            results.append(p.redact("Cy Bo Ann"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results) == {"<PERSON_1> <PERSON_2> <PERSON_3>"}


def test_presidio_finds_the_pattern_and_checksum_entities_without_a_model() -> None:
    p = Pseudonyms(PersonalDataRedactor(names=False))
    text = "Card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32, mail bo@example.com"
    assert p.redact(text) == "Card <CREDIT_CARD_1>, IBAN <IBAN_1>, mail <EMAIL_1>"
    # A number that fails the Luhn check is not a card.
    assert "4111 1111 1111 1112" in p.redact("Card 4111 1111 1111 1112")


def test_your_own_patterns_and_deny_list() -> None:
    redactor = PersonalDataRedactor(
        names=False, patterns={"ACCOUNT": r"\bACC-\d{6}\b"}, deny_list={"PROJECT": ["Bluebird"]}
    )
    p = Pseudonyms(redactor)
    assert p.redact("ACC-123456 of project bluebird") == "<ACCOUNT_1> of project <PROJECT_1>"
    assert "ACCOUNT" in redactor.entities
    assert "PROJECT" in redactor.entities


def test_names_come_from_the_pinned_spacy_model() -> None:
    from _pii_support import redactor

    p = Pseudonyms(redactor())
    assert p.redact("Margaret Thornton lives in Chicago.") == "<PERSON_1> lives in <LOCATION_1>."


def test_a_presidio_analyzer_engine_of_your_own_is_accepted() -> None:
    from _pii_support import redactor

    engine = redactor()._build()  # a real AnalyzerEngine
    p = Pseudonyms(as_detector(engine))
    assert p.redact("Mail bo@example.com") == "Mail <EMAIL_1>"


def test_bad_redact_values_are_refused_in_one_line() -> None:
    with pytest.raises(TypeError, match="redact must be a PersonalDataRedactor"):
        as_detector(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="AnalyzerEngine"):
        PersonalDataRedactor(analyzer=object())


def test_a_name_only_the_context_reveals_is_replaced_in_the_output_too() -> None:
    import anyio

    from livescore import create_scorer

    def detect(text: str) -> list[Detection]:
        at = text.find("Record: ")
        return [Detection(at + 8, at + 15, "PERSON")] if at >= 0 else []

    seen: list[str] = []
    scorer = create_scorer(
        id="echo",
        description="what the steps see",
        generate_score=lambda ctx: seen.extend([ctx.output_text, *(ctx.context or [])]) or 1.0,
        context=["Record: Ann Lee, in since 2019."],
        redact=detect,
    )
    result = anyio.run(lambda: scorer.score(Run(input="Is Ann Lee in?", output="Ann Lee is in.")))
    assert result.status == "scored"
    assert seen == ["<PERSON_1> is in.", "Record: <PERSON_1>, in since 2019."]
    assert result.flags["redacted_values"] == 1
