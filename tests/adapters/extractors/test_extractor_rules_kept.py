"""Nothing said is lost to recall: a first-person disclosure no rule understood is kept as
an episodic claim with its source span and date — bounded, screened for secrets — and
chit-chat, questions and other people's lives are not (R-WRITE-1, R-PRIV-1)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from extractor_support import REFERENCE, MakeRequest, RunExtractor

from memory_adapters.extractors import RulesExtractor
from memory_adapters.extractors.rules_kept import KEPT_IMPORTANCE
from memory_core.domain.claims import ClaimKind
from memory_core.domain.temporal import TemporalKind
from memory_core.ports.extraction import ExtractionResult, RejectionReason

Extract = Callable[..., ExtractionResult]


@pytest.fixture
def extract(make_request: MakeRequest, run: RunExtractor) -> Extract:
    def go(text: str, **options: object) -> ExtractionResult:
        return run(RulesExtractor(**options), make_request([("user", text)]))  # type: ignore[arg-type]

    return go


@pytest.mark.parametrize(
    "text",
    [
        "我住在上海。",
        "私は東京に住んでいます。",
        "I spent the weekend fixing my grandmother's roof in Sintra.",
        "btw my partner and I live near the river now.",
    ],
)
def test_an_unmatched_disclosure_is_kept_as_said(extract: Extract, text: str) -> None:
    (kept,) = extract(text).candidates
    assert kept.content == f'The user said: "{text}"'
    assert (kept.kind, kept.importance, kept.source_entry_ids) == (
        ClaimKind.EPISODIC,
        KEPT_IMPORTANCE,
        ("m1",),
    )
    # dated by when it was said: no later than the message
    assert kept.temporal.kind is TemporalKind.EVENT
    assert kept.temporal.interval.valid_until == REFERENCE


@pytest.mark.parametrize(
    "text",
    [
        "I see what you mean.",
        "Let me think about it for a bit.",
        "It was a big leap but I'm happy.",
        "I'm not sure about that yet.",
        "My friend Tom moved to Austin last year.",
        "Tom told me he's vegan now.",
        "Do you think I should fix my roof?",
        "If I lived in Sintra I would fix roofs.",
        "Yeah right, I spent all weekend on my roof.",
        "今日は暑いですね。",
        "这是什么意思？",
        "OK cool.",
    ],
)
def test_chit_chat_questions_and_other_lives_are_not_kept(extract: Extract, text: str) -> None:
    assert extract(text).candidates == ()


def test_a_message_a_rule_understood_keeps_nothing_more(extract: Extract) -> None:
    (fact,) = extract("I live in Porto.").candidates
    assert fact.content == "The user lives in Porto."


def test_a_kept_sentence_is_bounded_and_screened(extract: Extract) -> None:
    """Over the claim limit it is rejected, never truncated; a secret is refused (R-PRIV-1)."""
    long = "I spent " + "a long time " * 40 + "on my roof."
    result = extract(long, max_content_code_points=200)
    assert result.candidates == ()
    assert result.rejected == (RejectionReason.CANDIDATE_TOO_LARGE,)
    secret = extract("I keep sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c in a sticky note on my desk.")
    assert all("sk-proj" not in c.content for c in secret.candidates)


def test_keeping_can_be_switched_off_to_measure_it(extract: Extract) -> None:
    assert extract("我住在上海。", keep_unmatched=False).candidates == ()
