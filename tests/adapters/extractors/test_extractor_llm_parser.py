"""The extraction-response parser: tolerant envelope, strict candidates (reference §7.3).

Top-level failures raise ProviderResponseError (the cursor must not advance); a malformed
candidate is counted with a reason code and never fails the batch (R-TIME-4).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_adapters.extractors.llm_parser import parse_extraction, parse_temporal
from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.errors import ProviderResponseError, TemporalError
from memory_core.domain.temporal import Precision, TemporalKind
from memory_core.ports.extraction import RejectionReason

STATE = {
    "temporalKind": "state",
    "validFrom": "2025-01-01T00:00:00+01:00",
    "validUntil": None,
    "temporalPrecision": "year",
    "temporalConfidence": 0.6,
    "timeZone": "Europe/Berlin",
}
BERLIN_MEMORY = {
    "content": "The user lives in Berlin.",
    "category": "user_preference",
    "importance": 0.7,
    "slot": "user.home_city",
    "temporal": STATE,
}
TEA_MEMORY = {"content": "The user prefers tea.", "category": "user_preference"}


def envelope(*memories: object, suggestions: object = None) -> str:
    body: dict[str, object] = {"memories": list(memories)}
    if suggestions is not None:
        body["directiveSuggestions"] = suggestions
    return json.dumps(body)


def contents(text: str) -> list[str]:
    return [candidate.content for candidate in parse_extraction(text).candidates]


def test_object_envelope_yields_typed_candidates() -> None:
    result = parse_extraction(envelope(BERLIN_MEMORY))
    (claim,) = result.candidates
    assert claim.content == "The user lives in Berlin."
    assert (claim.kind, claim.category, claim.slot) == (
        ClaimKind.SEMANTIC,
        Category.USER_PREFERENCE,
        "user.home_city",
    )
    assert claim.importance == 0.7
    temporal = claim.temporal
    assert temporal.kind is TemporalKind.STATE
    assert temporal.interval.valid_from == datetime(2024, 12, 31, 23, tzinfo=UTC)
    assert (temporal.precision, temporal.confidence, temporal.timezone) == (
        Precision.YEAR,
        0.6,
        "Europe/Berlin",
    )
    assert result.rejected == ()


@pytest.mark.parametrize(
    "wrapped",
    [
        "```json\n{body}\n```",
        "```\n{body}\n```",
        "Sure! Here are the memories:\n```json\n{body}\n```\nLet me know if you need more.",
        "Here is the JSON you asked for: {body}",
        "{body}\n\nI extracted one memory [see above].",
        "Notes [1] and [2] follow. {body}",
    ],
)
def test_envelope_is_found_inside_fences_and_prose(wrapped: str) -> None:
    assert contents(wrapped.format(body=envelope(TEA_MEMORY))) == ["The user prefers tea."]


def test_legacy_bare_array_is_accepted() -> None:
    assert contents(json.dumps([TEA_MEMORY, BERLIN_MEMORY])) == [
        "The user prefers tea.",
        "The user lives in Berlin.",
    ]


def test_fenced_bare_array_is_accepted() -> None:
    assert contents(f"```json\n{json.dumps([TEA_MEMORY])}\n```") == ["The user prefers tea."]


def test_single_memory_object_is_accepted() -> None:
    assert contents(json.dumps(TEA_MEMORY)) == ["The user prefers tea."]


def test_empty_envelope_extracts_nothing() -> None:
    result = parse_extraction('{"memories": [], "directiveSuggestions": []}')
    assert (result.candidates, result.suggestions, result.rejected) == ((), (), ())


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty-response"),
        ("   \n ", "empty-response"),
        ("I could not find anything worth remembering.", "missing-json"),
        ('{"memories": [{"content": "unterminated', "invalid-json"),
        ("```json\n{not json}\n```", "invalid-json"),
        ('{"memories": "The user prefers tea."}', "non-array"),
        ('{"memories": null}', "non-array"),
        ('"just a string"', "missing-json"),
        ("42", "missing-json"),
    ],
)
def test_unusable_response_raises_without_quoting_it(text: str, code: str) -> None:
    """The cursor does not advance over an unusable response; the error names the reason,
    never the response (it may hold user content)."""
    with pytest.raises(ProviderResponseError) as caught:
        parse_extraction(text)
    assert code in str(caught.value)
    assert "tea" not in str(caught.value)


def test_malformed_candidates_are_counted_and_valid_ones_kept() -> None:
    """R-TIME-4: one bad candidate never fails the batch; each gets a reason code."""
    bad_temporal = {**BERLIN_MEMORY, "temporal": {**STATE, "validFrom": "2025-02-30T00:00:00Z"}}
    text = envelope(
        TEA_MEMORY,
        "not an object",
        {"content": 42},
        {"content": "   "},
        {"content": "x" * 2001},
        {**TEA_MEMORY, "slot": "Home City"},
        bad_temporal,
        BERLIN_MEMORY,
    )
    result = parse_extraction(text)
    assert [c.content for c in result.candidates] == [
        "The user prefers tea.",
        "The user lives in Berlin.",
    ]
    assert result.rejected == (
        RejectionReason.INVALID_CANDIDATE,
        RejectionReason.INVALID_CANDIDATE,
        RejectionReason.EMPTY_CONTENT,
        RejectionReason.CANDIDATE_TOO_LARGE,
        RejectionReason.INVALID_SLOT,
        RejectionReason.INVALID_TEMPORAL,
    )


def test_content_at_the_limit_is_kept_whole_and_one_over_is_rejected() -> None:
    """Over-long content is rejected, never truncated."""
    at_limit, over = "y" * 2000, "y" * 2001
    assert contents(envelope({"content": at_limit}, {"content": over})) == [at_limit]
    assert parse_extraction(envelope({"content": "abcd"}), max_content_code_points=3).rejected == (
        RejectionReason.CANDIDATE_TOO_LARGE,
    )


@pytest.mark.parametrize(
    "change",
    [
        {"validFrom": "2025-01-01T00:00:00"},  # no zone
        {"validFrom": "2025-01-01"},  # a date is not an instant
        {"validFrom": "2025-13-01T00:00:00Z"},
        {"validFrom": "0000-01-01T00:00:00Z"},
        {"validFrom": "2025-04-31T00:00:00Z"},
        {"validFrom": "2025-01-01T24:00:00Z"},
        {"validFrom": "2025-01-01T00:60:00Z"},
        {"validFrom": "2025-01-01T00:00:00+14:30"},
        {"validFrom": "last year"},
        {"validFrom": True},
        {"validFrom": float("inf")},
        {"validFrom": "2026-01-01T00:00:00Z", "validUntil": "2025-01-01T00:00:00Z"},
        {"validFrom": "2025-01-01T00:00:00Z", "validUntil": "2025-01-01T00:00:00Z"},
        {"temporalConfidence": 1.5},
        {"temporalConfidence": -0.1},
        {"temporalConfidence": "0.6"},
        {"temporalConfidence": None},
        {"temporalPrecision": "fortnight"},
        {"temporalPrecision": None},
        {"timeZone": "Mars/Olympus"},
        {"timeZone": "+01:00"},
        {"timeZone": None},
        {"temporalKind": "sometimes"},
        {"temporalKind": None},
    ],
)
def test_strict_temporal_rules_reject_the_candidate(change: dict[str, object]) -> None:
    """R-TIME-4: malformed temporal metadata rejects that candidate; it never becomes an
    atemporal (permanent) fact."""
    text = envelope({**BERLIN_MEMORY, "temporal": {**STATE, **change}}, TEA_MEMORY)
    result = parse_extraction(text)
    assert [c.content for c in result.candidates] == ["The user prefers tea."]
    assert result.rejected == (RejectionReason.INVALID_TEMPORAL,)


def test_atemporal_kind_with_bounds_is_rejected_not_kept_as_permanent() -> None:
    """R-TIME-4: bounds say the fact is timed; keeping it forever would be wrong."""
    temporal = {"temporalKind": "atemporal", "validFrom": "2025-01-01T00:00:00Z"}
    assert parse_extraction(envelope({**TEA_MEMORY, "temporal": temporal})).rejected == (
        RejectionReason.INVALID_TEMPORAL,
    )


def test_temporal_that_is_not_an_object_is_rejected() -> None:
    assert parse_extraction(envelope({**TEA_MEMORY, "temporal": "2025"})).rejected == (
        RejectionReason.INVALID_TEMPORAL,
    )


def test_absent_or_null_temporal_is_atemporal() -> None:
    result = parse_extraction(envelope(TEA_MEMORY, {**TEA_MEMORY, "temporal": None}))
    assert all(candidate.temporal.is_atemporal for candidate in result.candidates)


def test_temporal_accepts_aliases_epoch_ms_offsets_and_exact() -> None:
    metadata = parse_temporal(
        {
            "kind": "event",
            "validFrom": 1_764_543_600_000,  # 2025-11-30T23:00:00Z in epoch milliseconds
            "validUntil": "2025-12-01T23:00:00.5-01:00",
            "precision": "exact",
            "confidence": 1,
            "temporalTimeZone": "UTC",
        }
    )
    assert metadata.kind is TemporalKind.EVENT
    assert metadata.interval.valid_from == datetime(2025, 11, 30, 23, tzinfo=UTC)
    assert metadata.interval.valid_until == datetime(2025, 12, 2, 0, 0, 0, 500_000, tzinfo=UTC)
    assert (metadata.precision, metadata.confidence) == (Precision.INSTANT, 1.0)


def test_timezone_is_canonicalised() -> None:
    metadata = parse_temporal({**STATE, "timeZone": "Europe/Kiev"})
    assert metadata.timezone in ("Europe/Kyiv", "Europe/Kiev")  # the platform's canonical key


def test_parse_temporal_raises_a_typed_error() -> None:
    with pytest.raises(TemporalError):
        parse_temporal({**STATE, "validFrom": "yesterday"})


@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=40),
        st.dictionaries(
            st.text(max_size=12),
            st.one_of(st.none(), st.text(max_size=20), st.floats()),
            max_size=6,
        ),
    )
)
def test_any_temporal_value_is_either_valid_metadata_or_one_rejection(value: object) -> None:
    """R-TIME-4: whatever a model writes in `temporal`, the batch survives it."""
    result = parse_extraction(envelope({**TEA_MEMORY, "temporal": value}, TEA_MEMORY))
    assert len(result.candidates) + len(result.rejected) == 2
    assert set(result.rejected) <= {RejectionReason.INVALID_TEMPORAL}


def test_category_decides_kind_and_importance_floor() -> None:
    text = envelope(
        {
            "content": "Deployed the fix to production.",
            "category": "task_outcome",
            "importance": 0.1,
        },
        {"content": "The repo uses uv.", "category": "project_fact"},
        {"content": "Prefers tabs.", "category": "not-a-category", "importance": 0.9},
        {"content": "Met Bob.", "kind": "episodic"},
        {"content": "Odd importance.", "importance": "high"},
        {"content": "Too important.", "importance": 7},
    )
    result = parse_extraction(text)
    summary = [(c.kind, c.category, c.importance) for c in result.candidates]
    assert summary == [
        (ClaimKind.EPISODIC, Category.TASK_OUTCOME, 0.55),  # floor
        (ClaimKind.SEMANTIC, Category.PROJECT_FACT, 0.6),  # missing -> 0.5 -> floor
        (ClaimKind.SEMANTIC, None, 0.9),  # unknown category kept without one
        (ClaimKind.EPISODIC, None, 0.5),  # legacy kind honoured without a category
        (ClaimKind.SEMANTIC, None, 0.5),
        (ClaimKind.SEMANTIC, None, 0.5),
    ]


def test_at_most_eight_memories_and_one_task_outcome() -> None:
    outcome = {"content": "Finished the migration.", "category": "task_outcome"}
    memories = [outcome, {**outcome, "content": "Finished the docs."}]
    memories += [{"content": f"Fact number {n}."} for n in range(9)]
    result = parse_extraction(envelope(*memories))
    assert len(result.candidates) == 8
    assert [c.category for c in result.candidates].count(Category.TASK_OUTCOME) == 1
    assert result.rejected == (
        RejectionReason.EXTRA_TASK_OUTCOME,
        RejectionReason.OVER_LIMIT,
        RejectionReason.OVER_LIMIT,
    )


def test_directive_suggestions_are_validated_and_bounded() -> None:
    """R-DIR-1/2: kinds, topics and contents are checked; at most four are kept."""
    suggestions = [
        {"kind": "suppress_topic", "content": "Do not mention the divorce.", "topic": "divorce"},
        {"kind": "instruction", "content": "Answer in German.", "topic": "ignored"},
        {"kind": "suppress_topic", "topic": "politics"},  # content synthesised
        {"kind": "suppress_topic", "content": "Too broad.", "topic": "猫"},  # one CJK char
        {"kind": "suppress_topic", "content": "No topic."},
        {"kind": "activate", "content": "Make me admin."},
        {"kind": "instruction", "content": "   "},
        "not an object",
        {"kind": "instruction", "content": "Answer in German."},  # duplicate: dropped silently
        {"kind": "instruction", "content": "Use metric units."},
        {"kind": "instruction", "content": "Be brief."},
    ]
    result = parse_extraction(envelope(TEA_MEMORY, suggestions=suggestions))
    kept = [(s.kind, s.content, s.topic) for s in result.suggestions]
    assert kept == [
        (DirectiveKind.SUPPRESS_TOPIC, "Do not mention the divorce.", "divorce"),
        (DirectiveKind.INSTRUCTION, "Answer in German.", None),
        (DirectiveKind.SUPPRESS_TOPIC, "Do not bring up politics.", "politics"),
        (DirectiveKind.INSTRUCTION, "Use metric units.", None),
    ]
    assert result.rejected == (
        *[RejectionReason.INVALID_SUGGESTION] * 5,
        RejectionReason.SUGGESTION_OVER_LIMIT,
    )


def test_suggestions_that_are_not_a_list_are_dropped_and_counted() -> None:
    result = parse_extraction(envelope(TEA_MEMORY, suggestions={"kind": "instruction"}))
    assert result.suggestions == ()
    assert result.rejected == (RejectionReason.INVALID_SUGGESTION,)
    assert len(result.candidates) == 1


def test_absurdly_deep_nesting_is_invalid_json_not_a_crash() -> None:
    with pytest.raises(ProviderResponseError, match="invalid-json"):
        parse_extraction("[" * 100_000)


@given(st.text(max_size=300))
def test_any_text_gives_a_result_or_a_provider_response_error(text: str) -> None:
    """Whatever a model answers, the parser either returns or raises the typed error."""
    try:
        result = parse_extraction(text)
    except ProviderResponseError:
        return
    assert all(candidate.content.strip() for candidate in result.candidates)


@given(
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.floats(), st.text(max_size=20)),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(
                st.sampled_from(["memories", "content", "temporal", "slot", "category", "kind"]),
                children,
                max_size=4,
            ),
        ),
        max_leaves=20,
    )
)
def test_any_json_shape_gives_a_result_or_a_provider_response_error(value: object) -> None:
    try:
        result = parse_extraction(json.dumps(value))
    except ProviderResponseError:
        return
    assert len(result.candidates) <= 8 and len(result.suggestions) <= 4
