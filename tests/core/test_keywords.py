"""Query → search terms: worked examples of reference §4.2 plus the stopword rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.services.read.keywords import (
    ENGLISH_STOPWORDS,
    MAX_CANDIDATES,
    MAX_TERMS,
    STEM_CACHE_WORDS,
    TermKind,
    coverage_tokens,
    extract_keywords,
    search_terms,
    stem,
)


def test_code_and_path_runs_stay_whole_and_sentence_punctuation_is_stripped() -> None:
    """R-READ-3: file names, paths, emails and versions are single OR terms."""
    assert search_terms("Where is config.yaml, src/app.py or me@example.com? v1.2.") == (
        "config.yaml",
        "src/app.py",
        "me@example.com",
        "v1.2",
    )


def test_trailing_plus_and_hash_are_kept_for_language_names() -> None:
    assert search_terms("c++ or c# ?") == ("c++", "c#")


def test_question_words_and_chat_fillers_never_become_terms() -> None:
    """The LoCoMo note: frequent words make an OR query match most claims."""
    assert search_terms("When did the user say what they remember about Caroline?") == ("caroline",)
    assert {"the", "user", "what", "when", "did"} <= ENGLISH_STOPWORDS
    assert search_terms("Why don't you remember Lyon?") == ("lyon",)


def test_stopwords_do_not_apply_to_code_terms() -> None:
    assert search_terms("user.name and user_id") == ("user.name", "user_id")


def test_terms_are_lowercased_and_deduplicated_at_first_occurrence() -> None:
    keywords = extract_keywords("Paris PARIS paris Berlin")
    assert [k.text for k in keywords] == ["paris", "berlin"]
    assert keywords[0].position == 0


@pytest.mark.parametrize("char", [*"0123456789_", *".:/@#+-"])
def test_any_digit_underscore_or_code_punctuation_makes_a_code_term(char: str) -> None:
    # A code term needs two characters, a plain word three and no stopword: "on" + the
    # character is a term only as code.
    (keyword,) = extract_keywords(f"on{char}x")
    assert keyword.kind is TermKind.CODE


def test_length_rules_ascii_three_code_two() -> None:
    assert search_terms("go to ok v2 k8") == ("v2", "k8")
    assert search_terms("tea") == ("tea",)


def test_short_cjk_run_is_one_term_and_long_run_yields_four_character_windows() -> None:
    assert search_terms("咖啡") == ("咖啡",)
    assert search_terms("我喜欢喝咖啡") == ("我喜欢喝", "喜欢喝咖", "欢喝咖啡")


def test_cjk_and_ascii_runs_split_at_the_script_boundary() -> None:
    keywords = extract_keywords("Tokyo旅行plan")
    assert [(k.text, k.kind) for k in keywords] == [
        ("tokyo", TermKind.ASCII),
        ("旅行", TermKind.CJK),
        ("plan", TermKind.ASCII),
    ]


def test_fullwidth_input_is_normalised_first() -> None:
    assert search_terms("ＡＰＩ ｋｅｙ") == ("api", "key")


def test_pick_prefers_code_then_cjk_then_longer_ascii_and_returns_query_order() -> None:
    query = "alpha bravo charlie delta echo foxtrot golfer hotel3 indiana juliet 東京都"
    # 11 candidates, 8 picked: the code term, the CJK term, then the 6 longest ASCII words
    # (7 letters: charlie, foxtrot, indiana; 6: golfer, juliet; of the 5-letter ones the
    # earliest, alpha) — returned in query order.
    assert search_terms(query) == (
        "alpha",
        "charlie",
        "foxtrot",
        "golfer",
        "hotel3",
        "indiana",
        "juliet",
        "東京都",
    )


def test_terms_shorter_than_three_code_points_lose_to_longer_ones() -> None:
    query = "v2 " + " ".join(f"word{c}x" for c in "abcdefgh")
    # Nine candidates: every longer term beats the two-character code term.
    assert "v2" not in search_terms(query)
    assert len(search_terms(query)) == MAX_TERMS


def test_only_the_first_24_candidates_are_considered() -> None:
    early = [f"early{chr(97 + i)}" for i in range(MAX_CANDIDATES)]
    query = " ".join([*early, "zz_late_code_term"])
    assert "zz_late_code_term" not in search_terms(query)


def test_a_query_of_only_stopwords_or_symbols_has_no_terms() -> None:
    assert search_terms("what did the user say? !!! --") == ()
    assert search_terms("") == ()


@pytest.mark.parametrize("query", ["a" * 10_000, "路" * 10_000, "x.y " * 5_000])
def test_huge_queries_are_bounded(query: str) -> None:
    assert len(search_terms(query)) <= MAX_TERMS


@given(st.text(max_size=200))
def test_terms_are_unique_lowercase_and_at_most_eight(query: str) -> None:
    keywords = extract_keywords(query)
    texts = [k.text for k in keywords]
    assert len(texts) <= MAX_TERMS
    assert len(set(texts)) == len(texts)
    assert all(text == text.lower() for text in texts)
    assert [k.position for k in keywords] == sorted(k.position for k in keywords)
    assert not set(texts) & ENGLISH_STOPWORDS


@pytest.mark.parametrize(
    ("words", "stem_of_all"),
    [
        (("change", "changes", "changed", "changing"), "chang"),
        (("stop", "stops", "stopped", "stopping"), "stop"),
        (("study", "studies", "studied", "studying"), "study"),
        (("paint", "paints", "painted", "painting"), "paint"),
        (("class", "classes"), "class"),
    ],
)
def test_inflections_share_one_stem(words: tuple[str, ...], stem_of_all: str) -> None:
    """Issue 14, R-READ-8: coverage counts "changes" for "change", as the trigram index
    already matched it."""
    assert {stem(word) for word in words} == {stem_of_all}


def test_short_words_numbers_and_non_ascii_are_not_stemmed() -> None:
    assert [stem(w) for w in ("bus", "is", "v2", "2023", "cafés", "gas")] == [
        "bus",
        "is",
        "v2",
        "2023",
        "cafés",
        "gas",
    ]


def test_coverage_of_an_inflected_claim_meets_the_query() -> None:
    assert coverage_tokens("the deployment changes") & coverage_tokens("Who changed deployments?")


def test_month_names_and_content_verbs_are_terms() -> None:
    """Issue 14: `may` is a month and `get`/`make`/`need` carry facts; they stay terms."""
    assert search_terms("What did Caroline get in May?") == ("caroline", "get", "may")
    assert {"may", "get", "got", "make", "made", "need"}.isdisjoint(ENGLISH_STOPWORDS)


def test_the_stem_cache_is_bounded_and_forgets_a_word_after_enough_others() -> None:
    """Issue 15: stems are cached per word (a turn stems every new candidate's words), at
    most `STEM_CACHE_WORDS` of them, least recently used first out — so a word only a
    forgotten claim used is no longer held once that many other words were stemmed
    (R-FORGET-1 for process memory)."""
    stem.cache_clear()
    assert stem("nightjars") == "nightjar"
    assert stem("nightjars") == "nightjar"
    assert stem.cache_info().hits == 1
    for n in range(STEM_CACHE_WORDS):
        stem(f"filler{n}words")
    info = stem.cache_info()
    assert info.currsize == STEM_CACHE_WORDS == info.maxsize
    stem("nightjars")
    assert stem.cache_info().misses == info.misses + 1
