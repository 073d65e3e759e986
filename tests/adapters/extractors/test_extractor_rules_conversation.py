"""The rules extractor on one scripted conversation, candidate by candidate.

The user introduces themselves in Paris, corrects that to Berlin, plans a trip and cancels
it, states a preference, asks to stop mentioning a topic, pastes an API key and gives a
standing instruction; the assistant chats along with first-person sentences of its own.
Reference: Monday 2026-11-30 10:00Z, Europe/Berlin.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import attrs
import pytest
from extractor_support import REFERENCE, ZONE, MakeRequest, RunExtractor

from memory_adapters.extractors import RulesExtractor
from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.domain.temporal_policy import TemporalStatus, assess
from memory_core.ports.extraction import CandidateClaim, DirectiveSuggestion, ExtractionResult

API_KEY = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
CONVERSATION = [
    ("user", "Hi! My name is Ana and I live in Paris."),
    ("assistant", "Nice to meet you, Ana! I live in the cloud, and I prefer tea."),
    ("user", "Actually, I moved to Berlin last year. I work at Acme Robotics."),
    ("user", "I'm flying to Lisbon on Friday."),
    ("assistant", "Great! I'm flying to Rome on Friday myself. I like Lisbon."),
    ("user", "I prefer concise answers with code examples."),
    ("user", "I cancelled my trip to Lisbon."),
    ("user", "Please stop mentioning the divorce."),
    ("user", f"My API key is {API_KEY}, keep it safe."),
    ("user", "From now on, answer in German."),
]


def berlin(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=ZoneInfo(ZONE))


def observed_state() -> TemporalMetadata:
    """True as of the message, start unknown: dated from the reference, low confidence."""
    return TemporalMetadata(
        kind=TemporalKind.STATE,
        interval=Interval(valid_from=REFERENCE),
        precision=Precision.UNKNOWN,
        timezone=ZONE,
        confidence=0.5,
    )


def ended_by_reference(kind: TemporalKind) -> TemporalMetadata:
    return TemporalMetadata(
        kind=kind,
        interval=Interval(valid_until=REFERENCE),
        precision=Precision.UNKNOWN,
        timezone=ZONE,
        confidence=0.9,
    )


EXPECTED_CANDIDATES = [
    CandidateClaim(
        content="The user's name is Ana.",
        importance=0.7,
        confidence=0.8,
        slot="user.preferred_name",
        source_entry_ids=("m1",),
    ),
    CandidateClaim(
        content="The user lives in Paris.",
        importance=0.7,
        confidence=0.8,
        slot="user.home_city",
        temporal=observed_state(),
        source_entry_ids=("m1",),
    ),
    CandidateClaim(
        content="The user lives in Berlin.",
        importance=0.7,
        confidence=0.9,  # a correction
        slot="user.home_city",
        temporal=TemporalMetadata(
            kind=TemporalKind.STATE,
            interval=Interval(valid_from=berlin(2025, 1, 1)),  # "last year", from its start
            precision=Precision.YEAR,
            timezone=ZONE,
            confidence=0.6,
        ),
        source_entry_ids=("m3",),
    ),
    CandidateClaim(
        content="The user works at Acme Robotics.",
        importance=0.7,
        confidence=0.8,  # its own sentence: the "actually" of the one before is not its
        slot="user.employer",
        temporal=observed_state(),
        source_entry_ids=("m3",),
    ),
    CandidateClaim(
        content="The user plans a trip to Lisbon on 2026-12-04.",
        importance=0.6,
        confidence=0.8,
        slot="user.trip.lisbon",
        temporal=TemporalMetadata(
            kind=TemporalKind.PLAN,
            interval=Interval(valid_from=berlin(2026, 12, 4), valid_until=berlin(2026, 12, 5)),
            precision=Precision.DAY,
            timezone=ZONE,
            confidence=0.8,
        ),
        source_entry_ids=("m4",),
    ),
    CandidateClaim(
        content="The user prefers concise answers with code examples.",
        category=Category.USER_PREFERENCE,
        importance=0.6,
        confidence=0.8,
        source_entry_ids=("m6",),
    ),
    CandidateClaim(
        content="The user cancelled the trip to Lisbon.",
        kind=ClaimKind.EPISODIC,
        confidence=0.8,
        temporal=ended_by_reference(TemporalKind.EVENT),
        source_entry_ids=("m7",),
    ),
    CandidateClaim(
        content="The user had planned a trip to Lisbon but cancelled it.",
        importance=0.6,
        confidence=0.8,
        slot="user.trip.lisbon",
        temporal=ended_by_reference(TemporalKind.PLAN),
        source_entry_ids=("m7",),
    ),
]

EXPECTED_SUGGESTIONS = [
    DirectiveSuggestion(
        kind=DirectiveKind.SUPPRESS_TOPIC, content="Do not bring up the divorce.", topic="divorce"
    ),
    DirectiveSuggestion(kind=DirectiveKind.INSTRUCTION, content="Answer in German."),
]


@pytest.fixture
def result(make_request: MakeRequest, run: RunExtractor) -> ExtractionResult:
    return run(RulesExtractor(), make_request(CONVERSATION))


def test_conversation_yields_exactly_the_expected_candidates(result: ExtractionResult) -> None:
    """R-WRITE-*, R-TIME-2, R-DOM-2: content, kind, slot and temporal metadata of each
    candidate, in conversation order; factual and temporal confidence differ."""
    assert list(result.candidates) == EXPECTED_CANDIDATES
    assert result.rejected == ()


def test_conversation_yields_directive_suggestions_only(result: ExtractionResult) -> None:
    """R-DIR-1: a suppression request and a standing instruction become suggestions (drafts
    once stored), never candidates and never active directives."""
    assert list(result.suggestions) == EXPECTED_SUGGESTIONS


def test_nothing_extracted_carries_the_api_key(result: ExtractionResult) -> None:
    """R-PRIV-1: "my API key is sk-..." produces nothing storable."""
    texts = [c.content for c in result.candidates]
    texts += [s.content for s in result.suggestions] + [s.topic or "" for s in result.suggestions]
    assert not any(API_KEY in text or "sk-proj" in text for text in texts)
    assert not any("m9" in c.source_entry_ids for c in result.candidates)


def test_assistant_sentences_are_never_a_source(result: ExtractionResult) -> None:
    """Assistant text is never evidence of a user fact (the assistant "lives in the cloud")."""
    sources = {source for c in result.candidates for source in c.source_entry_ids}
    assert sources.isdisjoint({"m2", "m5"})
    assert not any("cloud" in c.content or "Rome" in c.content for c in result.candidates)


def test_cancelled_trip_leaves_the_plan_previously_planned(result: ExtractionResult) -> None:
    """R-TIME-2: the cancellation closes the trip's slot with a plan whose window ended at the
    reference time, so it reads "previously planned" while the original plan reads planned."""
    by_content = {c.content: c for c in result.candidates}
    planned = by_content["The user plans a trip to Lisbon on 2026-12-04."]
    closed = by_content["The user had planned a trip to Lisbon but cancelled it."]
    assert planned.slot == closed.slot
    assert assess(planned.temporal, REFERENCE).status is TemporalStatus.PLANNED
    assert assess(closed.temporal, REFERENCE).status is TemporalStatus.PREVIOUSLY_PLANNED


# --- the same month name, said of the past and of a plan ---------------------------------------

# Said on Monday 2026-11-30: one move that already happened, one trip still to come.
MAY_CONVERSATION = [
    ("user", "I moved to Lisbon in May."),
    ("user", "I'm flying to Rome in May."),
]

EXPECTED_MAY_CANDIDATES = [
    CandidateClaim(
        content="The user lives in Lisbon.",
        importance=0.7,
        confidence=0.8,
        slot="user.home_city",
        temporal=TemporalMetadata(
            kind=TemporalKind.STATE,
            interval=Interval(valid_from=berlin(2026, 5, 1)),  # the May just past
            precision=Precision.MONTH,
            timezone=ZONE,
            confidence=0.85,
        ),
        source_entry_ids=("m1",),
    ),
    CandidateClaim(
        content="The user plans a trip to Rome in May 2027.",
        importance=0.6,
        confidence=0.8,
        slot="user.trip.rome",
        temporal=TemporalMetadata(
            kind=TemporalKind.PLAN,
            interval=Interval(valid_from=berlin(2027, 5, 1), valid_until=berlin(2027, 6, 1)),
            precision=Precision.MONTH,
            timezone=ZONE,
            confidence=0.85,
        ),
        source_entry_ids=("m2",),
    ),
]


def test_a_month_without_a_year_is_past_for_a_move_and_future_for_a_trip(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    """R-TIME-1/2: "I moved to Lisbon in May", said in November, has been true since this May
    (current now), while "I'm flying to Rome in May" plans next May (the conversation two
    engineers reported: the move had been stored as starting in May 2027)."""
    result = run(RulesExtractor(), make_request(MAY_CONVERSATION))
    assert list(result.candidates) == EXPECTED_MAY_CANDIDATES
    home, rome = result.candidates
    assert assess(home.temporal, REFERENCE).status is TemporalStatus.CURRENT
    assert assess(rome.temporal, REFERENCE).status is TemporalStatus.PLANNED


def test_an_event_in_january_said_in_may_is_this_january(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    """R-TIME-2: "I got divorced in January", said in May 2026, happened in January 2026 — an
    event is never dated after the moment it was told."""
    request = make_request([("user", "I got divorced in January.")])
    may = attrs.evolve(request, reference_time=datetime(2026, 5, 12, 9, tzinfo=UTC))
    (claim,) = run(RulesExtractor(), may).candidates
    assert claim.content == "The user got divorced in January 2026."
    assert claim.kind is ClaimKind.EPISODIC
    assert claim.temporal == TemporalMetadata(
        kind=TemporalKind.EVENT,
        interval=Interval(valid_from=berlin(2026, 1, 1), valid_until=berlin(2026, 2, 1)),
        precision=Precision.MONTH,
        timezone=ZONE,
        confidence=0.85,
    )
    assert assess(claim.temporal, may.reference_time).status is TemporalStatus.HISTORICAL
