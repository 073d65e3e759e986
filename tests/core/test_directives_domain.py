"""Directive values: topic specificity, match text, identity hash, cleaning (R-DIR-1, R-DIR-2)."""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import UTC, datetime

import pytest

from memory_core.domain.directives import (
    MAX_DIRECTIVE_CONTENT,
    MAX_TOPIC_LENGTH,
    Directive,
    DirectiveKind,
    DirectiveSource,
    DirectiveStatus,
    clean_directive_text,
    directive_identity_hash,
    is_topic_specific,
    match_text,
    topic_matches,
)
from memory_core.domain.errors import ValidationError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def directive(**overrides: object) -> Directive:
    fields: dict[str, object] = {
        "id": "d1",
        "agent_id": "agent-1",
        "kind": DirectiveKind.SUPPRESS_TOPIC,
        "status": DirectiveStatus.ACTIVE,
        "source": DirectiveSource.EXPLICIT_USER,
        "content": "Do not bring up my divorce",
        "topic": "divorce",
        "identity_hash": "0" * 64,
        "created_at": T0,
        "updated_at": T0,
    }
    fields.update(overrides)
    return Directive(**fields)  # type: ignore[arg-type]


# --- topic specificity ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "script"),
    [
        ("猫", "Han"),
        ("ね", "Hiragana"),
        ("カ", "Katakana"),
        ("ｶ", "half-width Katakana"),
        ("한", "Hangul syllable"),
        (unicodedata.normalize("NFD", "한"), "decomposed Hangul jamo"),
        ("\uf900", "CJK compatibility ideograph"),
        ("\U00020000", "CJK extension B"),
    ],
)
def test_a_single_cjk_character_is_too_broad(topic: str, script: str) -> None:
    """R-DIR-2: one CJK character would suppress half a language, so it is refused."""
    assert not is_topic_specific(topic), script


@pytest.mark.parametrize("topic", ["猫狗", "ねこ", "カメ", "ｶﾒ", "한국", "猫a", "猫!"])
def test_two_visible_base_characters_with_cjk_are_specific(topic: str) -> None:
    """R-DIR-2: a CJK topic with ≥2 visible base characters is accepted."""
    assert is_topic_specific(topic)


@pytest.mark.parametrize(
    ("topic", "why"),
    [
        ("猫\u200b", "zero-width space"),
        ("\u200b猫\u200d", "zero-width joiner"),
        ("猫\u0000", "control character"),
        ("猫\u0301", "combining mark"),
        ("猫\u3000", "ideographic space"),
        (" 猫 ", "padding"),
        ("\u2060猫\ufeff", "word joiner and BOM"),
    ],
)
def test_invisible_characters_do_not_count_towards_specificity(topic: str, why: str) -> None:
    """R-DIR-2: controls, format characters, marks and separators are not visible characters."""
    assert not is_topic_specific(topic), why


@pytest.mark.parametrize("topic", ["", "   ", "\u200b\u200b", "\t\n"])
def test_blank_topics_are_never_specific(topic: str) -> None:
    """R-DIR-2: a topic with no visible characters matches nothing meaningful."""
    assert not is_topic_specific(topic)


@pytest.mark.parametrize("topic", ["ab", "divorce", "ΩΨ", "é!"])
def test_two_visible_non_cjk_characters_are_specific(topic: str) -> None:
    """R-DIR-2: the two-character rule is the same for every script."""
    assert is_topic_specific(topic)


def test_over_broad_stored_topic_is_ignored_at_runtime() -> None:
    """R-DIR-2: runtime ignores stored topics that fail the specificity rule."""
    assert not directive(topic="猫").is_runtime_eligible
    assert directive(topic="猫狗").is_runtime_eligible
    assert not topic_matches("猫", "我的猫很可爱")
    assert topic_matches("猫狗", "我家的猫狗都很好")


def test_only_active_directives_are_runtime_eligible() -> None:
    """R-DIR-1: drafts and rejected suggestions never reach the runtime."""
    assert directive().is_runtime_eligible
    assert not directive(status="draft").is_runtime_eligible
    assert not directive(status="rejected").is_runtime_eligible
    instruction = directive(kind="instruction", topic=None, content="Answer in French")
    assert instruction.is_runtime_eligible
    assert not directive(kind="instruction", topic=None, status="draft").is_runtime_eligible


def test_topic_match_is_a_normalised_substring() -> None:
    """R-DIR-2: width, case, invisible characters and spacing do not defeat a topic."""
    assert topic_matches("Divorce", "we talked about my DIVORCE yesterday")
    assert topic_matches("ｄｉｖｏｒｃｅ", "divorce")
    assert topic_matches("new  job", "my new\u200bjob")
    assert not topic_matches("divorce", "marriage")


# --- match text and identity ---------------------------------------------------------------


def test_match_text_is_nfkc_invisible_free_collapsed_and_lowercase() -> None:
    """R-DIR-2: the comparison form of topics and contents."""
    assert match_text("  Ｃｏｆｆｅｅ\u200b\u200bBEANS \n ") == "coffee beans"
    assert match_text("ﬁle") == "file"  # NFKC expands the ligature


def test_identity_hash_of_a_topic_is_sha256_of_domain_kind_and_normalised_topic() -> None:
    """R-DIR-1: identity = SHA-256 over `deepchat-memory-directive-v1 NUL kind NUL topic`."""
    digest = directive_identity_hash(
        DirectiveKind.SUPPRESS_TOPIC, "anything at all", " Ｃｏｆｆｅｅ  Beans "
    )
    expected = hashlib.sha256(
        b"deepchat-memory-directive-v1\x00suppress_topic\x00coffee beans"
    ).hexdigest()
    assert digest == expected


def test_identity_hash_of_an_instruction_uses_its_content() -> None:
    """R-DIR-1: instructions are identified by the match text of their content."""
    digest = directive_identity_hash(DirectiveKind.INSTRUCTION, "  Answer in FRENCH ", None)
    expected = hashlib.sha256(
        b"deepchat-memory-directive-v1\0instruction\0answer in french"
    ).hexdigest()
    assert digest == expected


def test_identity_hash_encodes_cjk_topics_as_utf8() -> None:
    """R-DIR-1: the identity bytes are UTF-8 of the NFKC match text."""
    digest = directive_identity_hash(DirectiveKind.SUPPRESS_TOPIC, "x", "ﾈｺ 猫")
    expected = hashlib.sha256(
        "deepchat-memory-directive-v1\0suppress_topic\0ネコ 猫".encode()
    ).hexdigest()
    assert digest == expected


def test_identity_ignores_content_for_topics_and_separates_kinds() -> None:
    """R-DIR-1: same topic, different wording → same identity; kinds never collide."""
    first = directive_identity_hash(DirectiveKind.SUPPRESS_TOPIC, "a", "Work")
    second = directive_identity_hash(DirectiveKind.SUPPRESS_TOPIC, "b", "work")
    instruction = directive_identity_hash(DirectiveKind.INSTRUCTION, "work", None)
    assert first == second
    assert first != instruction


# --- cleaning and construction -------------------------------------------------------------


def test_clean_directive_text_turns_invisible_characters_into_spaces_and_trims() -> None:
    """R-DIR-1: hidden characters cannot smuggle text past a reviewer."""
    assert clean_directive_text("\u200bhello\u0000world\u200e ", field="content", limit=50) == (
        "hello world"
    )
    assert clean_directive_text("Keep  CASE", field="content", limit=50) == "Keep  CASE"


@pytest.mark.parametrize("blank", ["", "   ", "\u200b\u2060", "\x00"])
def test_clean_directive_text_rejects_blank_text_naming_the_field(blank: str) -> None:
    """R-DIR-1: an empty directive is refused with the field named."""
    with pytest.raises(ValidationError) as caught:
        clean_directive_text(blank, field="topic", limit=MAX_TOPIC_LENGTH)
    assert caught.value.field == "topic"


def test_clean_directive_text_bounds_length_after_cleaning() -> None:
    """R-DIR-1: length counts code points of the cleaned text."""
    at_limit = "猫" * MAX_DIRECTIVE_CONTENT
    assert clean_directive_text(f"  {at_limit}  ", field="content", limit=MAX_DIRECTIVE_CONTENT)
    with pytest.raises(ValidationError) as caught:
        clean_directive_text(at_limit + "x", field="content", limit=MAX_DIRECTIVE_CONTENT)
    assert caught.value.field == "content"


def test_clean_directive_text_rejects_non_text() -> None:
    """R-DIR-1: content must be a string."""
    with pytest.raises(ValidationError) as caught:
        clean_directive_text(None, field="content", limit=10)  # type: ignore[arg-type]
    assert caught.value.field == "content"


def test_suppress_topic_directive_requires_a_topic_and_instruction_refuses_one() -> None:
    """R-DIR-2: only suppress_topic directives carry a topic."""
    with pytest.raises(ValidationError) as missing:
        directive(topic=None)
    assert missing.value.field == "topic"
    with pytest.raises(ValidationError) as extra:
        directive(kind="instruction", topic="divorce")
    assert extra.value.field == "topic"


def test_directive_enums_match_the_reference_vocabulary() -> None:
    """R-DIR-1: kinds, statuses and sources are closed sets."""
    assert {kind.value for kind in DirectiveKind} == {"instruction", "suppress_topic"}
    assert {status.value for status in DirectiveStatus} == {"draft", "active", "rejected"}
    assert {source.value for source in DirectiveSource} == {
        "explicit_user",
        "manual",
        "derived_suggestion",
    }


def test_capacity_error_is_a_domain_error_still_importable_from_the_port() -> None:
    """R-DIR-1, R-DOM-4: the 65th activation's error lives in the domain's hierarchy, names
    the `status` field and the limit; the claim-store port re-exports the same class."""
    from memory_core.domain.directives import MAX_ACTIVE_DIRECTIVES
    from memory_core.domain.errors import DirectiveCapacityExceeded
    from memory_core.ports import claims as port

    assert port.DirectiveCapacityExceeded is DirectiveCapacityExceeded
    error = DirectiveCapacityExceeded(MAX_ACTIVE_DIRECTIVES)
    assert isinstance(error, ValidationError)
    assert (error.field, error.limit) == ("status", MAX_ACTIVE_DIRECTIVES)
    assert str(MAX_ACTIVE_DIRECTIVES) in str(error)
