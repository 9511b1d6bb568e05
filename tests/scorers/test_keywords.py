"""Keyword extraction: tokens, stopwords, stems, technical terms, compounds, matching."""

from __future__ import annotations

import threading

import pytest

from livescore.scorers import _keywords
from livescore.scorers._keywords import (
    KeywordExtractor,
    Keywords,
    builtin_compound_terms,
    smart_stopwords,
)


@pytest.fixture(scope="module")
def extractor() -> KeywordExtractor:
    return KeywordExtractor()


def forms(extractor: KeywordExtractor, text: str) -> set[str]:
    return extractor.extract(text).forms


def covered(extractor: KeywordExtractor, reference: str, response: str) -> set[str]:
    """The display forms of the reference keywords the response covers."""
    ref, resp = extractor.extract(reference), extractor.extract(response)
    return {form for key, form in ref.terms.items() if resp.covers(key)}


# -- data files -----------------------------------------------------------------------------


def test_smart_list_is_loaded_whole_and_once() -> None:
    words = smart_stopwords()
    assert len(words) == 570  # 571 lines; "would" is listed twice
    assert {"the", "a", "and", "like", "it's", "c", "x"} <= words
    assert "react" not in words
    assert smart_stopwords() is words


def test_builtin_compound_terms_are_loaded() -> None:
    terms = builtin_compound_terms()
    assert "machine learning" in terms
    assert "type inference" in terms
    assert all(not t.startswith("#") and t == t.strip() for t in terms)


# -- stopwords, case, numbers ---------------------------------------------------------------


def test_stopwords_are_ignored_and_case_folded(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "What is THE best way to learn JavaScript?") == {
        "learn",
        "javascript",
    }


def test_only_stopwords_give_no_keywords(extractor: KeywordExtractor) -> None:
    assert len(extractor.extract("Is it the one? Yes, it is!")) == 0
    assert len(extractor.extract("")) == 0
    assert len(extractor.extract("   \n\t ")) == 0


def test_curly_apostrophes_and_possessives(extractor: KeywordExtractor) -> None:
    # "don’t" with a curly apostrophe is the stopword "don't".
    assert forms(extractor, "Don’t panic") == {"panic"}
    assert forms(extractor, "React’s hooks") == {"react", "hooks"}
    assert covered(extractor, "React's state", "state in React") == {"react", "state"}


def test_numbers_are_dropped_but_version_like_names_kept(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "Python 3.12 was released in 2023 with 1,000 fixes") == {
        "python",
        "released",
        "fixes",
    }
    assert forms(extractor, "GPT-4 and COVID-19 on an H100 using ES2015") == {
        "gpt-4",
        "covid-19",
        "h100",
        "es2015",
    }


def test_latin_abbreviations_are_not_keywords(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "Caches, e.g. Redis, i.e. in memory, etc.") == {
        "caches",
        "redis",
        "memory",
    }


def test_extra_stopwords() -> None:
    extractor = KeywordExtractor(extra_stopwords=["Please", "explain"])
    assert forms(extractor, "Please explain Kubernetes operators") == {"kubernetes", "operators"}


# -- word forms -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "response"),
    [
        ("dogs", "a dog"),
        ("running", "run"),
        ("interfaces", "an interface"),
        ("generics", "generic code"),
        ("Caching", "cached"),
        ("GPUs", "one GPU"),
        ("LLMs", "an LLM"),
    ],
)
def test_word_forms_match_by_stem(
    extractor: KeywordExtractor, reference: str, response: str
) -> None:
    assert len(covered(extractor, reference, response)) == 1


def test_stemming_off_matches_exact_words_only() -> None:
    exact = KeywordExtractor(stemming=False)
    assert covered(exact, "dogs running", "a dog ran running") == {"running"}
    assert covered(exact, "Dogs", "DOGS") == {"dogs"}


def test_display_form_is_the_first_surface_form(extractor: KeywordExtractor) -> None:
    kw = extractor.extract("Dogs chase dogs; a DOG naps")
    assert kw.terms == {"dog": "dogs", "chase": "chase", "nap": "naps"}


# -- technical terms ------------------------------------------------------------------------


def test_technical_terms_stay_whole(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "Use C++, C#, .NET, Node.js and x86_64.") == {
        "c++",
        "c#",
        ".net",
        "node.js",
        "x86_64",
    }


def test_js_suffix_names_the_same_library(extractor: KeywordExtractor) -> None:
    assert covered(extractor, "React and Vue", "React.js and VueJS") == {"react", "vue"}
    assert covered(extractor, "Node.js", "NodeJS, node.js or Node") == {"node.js"}


def test_inner_dots_and_hyphens_are_ignored_in_technical_terms(
    extractor: KeywordExtractor,
) -> None:
    assert covered(extractor, "GPT-4 on ASP.NET", "gpt4 on aspnet") == {"gpt-4", "asp.net"}


def test_technical_terms_do_not_match_their_plain_lookalikes(
    extractor: KeywordExtractor,
) -> None:
    # ".NET" is not the word "net"; "C++" is not "C" (a stopword anyway), nor "C#".
    assert covered(extractor, ".NET", "net income") == set()
    assert covered(extractor, "C++", "C# and C") == set()
    assert covered(extractor, "C#", "C# rocks") == {"c#"}


def test_markdown_does_not_leak_into_keywords(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "**React** and `useState` with _hooks_ (see [docs])") == {
        "react",
        "usestate",
        "hooks",
        "docs",
    }


# -- compounds ------------------------------------------------------------------------------


def test_known_compound_is_one_keyword(extractor: KeywordExtractor) -> None:
    kw = extractor.extract("Machine learning models need feature engineering")
    assert kw.terms == {
        "machin learn": "machine learning",
        "model": "models",
        "featur engin": "feature engineering",
    }


def test_compound_needs_adjacent_words_in_the_response(extractor: KeywordExtractor) -> None:
    ref = "hyperparameter tuning"
    assert covered(extractor, ref, "Hyperparameter tuning matters") == {"hyperparameter tuning"}
    assert covered(extractor, ref, "tune the hyperparameters") == set()
    assert covered(extractor, ref, "hyperparameter, tuning") == set()
    # Stemmed and case-folded: "Hyperparameters Tuning" is the same pair.
    assert covered(extractor, ref, "HYPERPARAMETERS TUNING") == {"hyperparameter tuning"}


def test_compound_words_still_cover_single_keywords(extractor: KeywordExtractor) -> None:
    # "learning" alone is covered by the "learning" inside "machine learning".
    assert covered(extractor, "learning", "machine learning") == {"learning"}


def test_longest_known_compound_wins(extractor: KeywordExtractor) -> None:
    kw = extractor.extract("A large language model")
    assert list(kw.terms.values()) == ["large language model"]
    assert covered(extractor, "large language model", "a language model") == set()


def test_punctuation_breaks_a_compound(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "Hardware: machine. Learning: slow") == {
        "hardware",
        "machine",
        "learning",
        "slow",
    }


def test_a_line_break_breaks_a_compound(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "- machine\n- learning") == {"machine", "learning"}
    assert covered(extractor, "machine learning", "machine\nlearning") == set()


def test_compound_words_used_alone_elsewhere_stay_keywords(extractor: KeywordExtractor) -> None:
    kw = extractor.extract("Machine learning on a machine; machine learning again")
    assert kw.terms == {"machin learn": "machine learning", "machin": "machine"}


def test_hyphenated_words_are_compounds(extractor: KeywordExtractor) -> None:
    assert forms(extractor, "real-time machine-learning") == {"real-time", "machine-learning"}
    assert covered(extractor, "machine-learning", "machine learning") == {"machine-learning"}
    assert covered(extractor, "machine learning", "machine-learning") == {"machine learning"}
    assert covered(extractor, "real-time", "in real time") == {"real-time"}
    assert covered(extractor, "real-time", "time is real") == set()
    assert covered(extractor, "state-of-the-art", "state of the art") == {"state-of-the-art"}


def test_prefixes_and_single_letters_glue_hyphenated_words(
    extractor: KeywordExtractor,
) -> None:
    assert covered(extractor, "pre-trained e-mail", "pretrained email") == {
        "pre-trained",
        "e-mail",
    }


def test_custom_compound_terms() -> None:
    plain = KeywordExtractor()
    custom = KeywordExtractor(compound_terms=["vector clock", "Kubernetes operator"])
    text = "Vector clocks and Kubernetes operators"
    assert forms(plain, text) == {"vector", "clocks", "kubernetes", "operators"}
    assert forms(custom, text) == {"vector clocks", "kubernetes operators"}
    assert covered(custom, text, "operators for Kubernetes") == set()


def test_builtin_compound_terms_can_be_turned_off() -> None:
    words_only = KeywordExtractor(builtin_compound_terms=False)
    assert forms(words_only, "machine learning") == {"machine", "learning"}
    assert covered(words_only, "machine learning", "learning machines") == {
        "machine",
        "learning",
    }


@pytest.mark.parametrize("term", ["kubernetes", "of the", "", "   "])
def test_compound_term_needs_two_words_one_of_substance(term: str) -> None:
    with pytest.raises(ValueError, match="at least two words"):
        KeywordExtractor(compound_terms=[term])


def test_word_lists_must_be_lists_of_strings() -> None:
    with pytest.raises(TypeError, match="not one string"):
        KeywordExtractor(extra_stopwords="please")
    with pytest.raises(TypeError, match="not one string"):
        KeywordExtractor(compound_terms="machine learning")
    with pytest.raises(TypeError, match="must hold strings"):
        KeywordExtractor(compound_terms=[("machine", "learning")])  # type: ignore[list-item]


def test_extra_stopwords_are_single_words() -> None:
    with pytest.raises(ValueError, match="not one word"):
        KeywordExtractor(extra_stopwords=["thank you"])


def test_extract_needs_text(extractor: KeywordExtractor) -> None:
    with pytest.raises(TypeError, match="needs text, not int"):
        extractor.extract(42)  # type: ignore[arg-type]


def test_keywords_object(extractor: KeywordExtractor) -> None:
    kw = extractor.extract("Dogs love machine-learning!")
    assert isinstance(kw, Keywords)
    assert len(kw) == 3
    assert kw.sequence == ("dog", "love", "machin", "learn", None)
    assert kw.words == frozenset({"dog", "love", "machin", "learn"})


def test_long_chunks_are_read_but_not_cached() -> None:
    extractor = KeywordExtractor()
    blob = "-".join(["segment"] * 500) + "x9"  # one 4 kB "word": a base64 blob, a long URL
    assert len(extractor.extract(f"Redis {blob} sentinel")) == 3
    assert len(extractor.extract(f"Redis {blob} sentinel")) == 3
    assert blob not in extractor._cache
    assert "Redis" in extractor._cache


def test_extraction_is_thread_safe() -> None:
    # Snowball stemmers keep state between calls; each thread must get its own. The stem
    # cache is cleared so that the threads really stem, concurrently.
    texts = [
        " ".join(
            f"{stem}{suffix}{i}x"
            for stem in ("connect", "generat", "organiz")
            for suffix in ("ing", "ed", "ions", "ational")
        )
        for i in range(40)
    ]
    expected = [KeywordExtractor().extract(t).terms for t in texts]
    _keywords._stem.cache_clear()
    extractor = KeywordExtractor()
    results: list[object] = [None] * len(texts)

    def work(index: int) -> None:
        results[index] = extractor.extract(texts[index]).terms

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == expected
