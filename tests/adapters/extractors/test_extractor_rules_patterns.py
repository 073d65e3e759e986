"""The rules extractor sentence by sentence: what each rule yields, what it declines, and
the guarantees around it (user messages only, secrets, cancellation, phrasing helpers).

Reference: Monday 2026-11-30 10:00Z, Europe/Berlin.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest
from extractor_support import REFERENCE, MakeRequest, RunExtractor

from memory_adapters.extractors import RulesExtractor
from memory_adapters.extractors.phrasing import slot_key, third_person_verb
from memory_adapters.extractors.rules_clauses import MessageReading, clauses_of
from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.claims import Category, ClaimKind
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.errors import DeadlineExceeded, OperationCancelled
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.domain.temporal import Precision, TemporalKind
from memory_core.ports.extraction import ExtractionResult, RejectionReason
from memory_core.ports.tape import EntryStatus

BERLIN = ZoneInfo("Europe/Berlin")
Extract = Callable[..., ExtractionResult]


def berlin(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=BERLIN)


@pytest.fixture
def extract(make_request: MakeRequest, run: RunExtractor) -> Extract:
    def go(*texts: str, extractor: RulesExtractor | None = None) -> ExtractionResult:
        turns = [("user", text) for text in texts]
        return run(extractor or RulesExtractor(), make_request(turns))

    return go


# sentence -> (content, slot, temporal kind)
FACTS = {
    "I live in Hamburg.": ("The user lives in Hamburg.", "user.home_city", TemporalKind.STATE),
    "I'm based in the Netherlands.": (
        "The user lives in the Netherlands.",
        "user.home_city",
        TemporalKind.STATE,
    ),
    "i live in munich": ("The user lives in munich.", "user.home_city", TemporalKind.STATE),
    "I work for a startup.": ("The user works at a startup.", "user.employer", TemporalKind.STATE),
    "I live in Bosnia and Herzegovina.": (
        "The user lives in Bosnia and Herzegovina.",
        "user.home_city",
        TemporalKind.STATE,
    ),
    "I live in Berlin and work from home.": (
        "The user lives in Berlin.",
        "user.home_city",
        TemporalKind.STATE,
    ),
    "I'm planning a trip to Lisbon in December.": (
        "The user plans a trip to Lisbon in December 2026.",
        "user.trip.lisbon",
        TemporalKind.PLAN,
    ),
    "I booked a flight to Tokyo for March 3.": (
        "The user plans a trip to Tokyo on 2027-03-03.",
        "user.trip.tokyo",
        TemporalKind.PLAN,
    ),
    "Call me Sam.": ("The user prefers to be called Sam.", "user.preferred_name", None),
    "I love hiking in the Alps.": ("The user loves hiking in the Alps.", None, None),
    "I hate cilantro.": ("The user hates cilantro.", None, None),
    "I don't like long meetings.": ("The user does not like long meetings.", None, None),
    "I'm allergic to peanuts.": ("The user is allergic to peanuts.", None, None),
    "I'm vegetarian.": ("The user is vegetarian.", "user.diet", None),
    # The habit's slot, so that "I no longer eat meat" retires "The user eats meat".
    "I no longer eat meat.": (
        "The user no longer eats meat.",
        "user.does.eat_meat",
        TemporalKind.STATE,
    ),
    "I don't live in Paris anymore.": (
        "The user no longer lives in Paris.",
        "user.home_city",
        TemporalKind.STATE,
    ),
    "I no longer work at Acme.": (
        "The user no longer works at Acme.",
        "user.employer",
        TemporalKind.STATE,
    ),
    "I'm going to visit my parents next week.": (
        "The user plans to visit their parents in the week of 2026-12-07.",
        None,
        TemporalKind.PLAN,
    ),
    "I have a dentist appointment on Friday.": (
        "The user has a dentist appointment on 2026-12-04.",
        None,
        TemporalKind.PLAN,
    ),
    "I plan to learn Rust in January.": (
        "The user plans to learn Rust in January 2027.",
        None,
        TemporalKind.PLAN,
    ),
    "I visited Japan last year.": ("The user visited Japan in 2025.", None, TemporalKind.EVENT),
    "I finished the migration yesterday.": (
        "The user finished the migration on 2026-11-29.",
        None,
        TemporalKind.EVENT,
    ),
    "My trip to Rome was cancelled yesterday.": (
        "The user cancelled the trip to Rome on 2026-11-29.",
        None,
        TemporalKind.EVENT,
    ),
}


@pytest.mark.parametrize("text", FACTS)
def test_first_person_sentence_becomes_a_third_person_candidate(
    extract: Extract, text: str
) -> None:
    """R-WRITE-*, R-TIME-2: each supported shape yields a concise third-person claim."""
    content, slot, temporal_kind = FACTS[text]
    first = extract(text).candidates[0]
    assert (first.content, first.slot) == (content, slot)
    assert first.temporal.kind is (temporal_kind or TemporalKind.ATEMPORAL)
    assert first.source_entry_ids == ("m1",)


@pytest.mark.parametrize(
    "text",
    [
        "I like that idea.",  # a reaction, not a preference
        "I love it!",
        "I'm going to try that.",  # a plan needs a date
        "I'm going to the gym tomorrow.",  # a place, not an action
        "I'm flying to Lisbon.",  # a trip needs a date
        "I went to check the logs.",  # an event needs a date
        "I work at night.",
        "I live in a small flat.",
        "please call me later",
        "I don't want to talk about it.",  # too vague a topic
        "Can you summarise this article?",
        "The user lives in Berlin.",  # third person: not the user speaking about themselves
        "No.",
    ],
)
def test_conversation_that_is_not_a_durable_fact_yields_nothing(
    extract: Extract, text: str
) -> None:
    """No rule takes these; whether one is still kept as said is `rules_kept`'s question
    (test_extractor_rules_kept.py), so keeping is off here."""
    result = extract(text, extractor=RulesExtractor(keep_unmatched=False))
    assert (result.candidates, result.suggestions) == ((), ())


def test_state_since_a_date_starts_at_that_period(extract: Extract) -> None:
    """R-TIME-1: "since March" dates the state from the March that began most recently, at
    month precision, with the resolver's confidence for an inferred year."""
    (claim,) = extract("I have been living in Madrid since March.").candidates
    temporal = claim.temporal
    assert temporal.kind is TemporalKind.STATE
    assert temporal.interval.valid_from == berlin(2026, 3, 1)
    assert temporal.interval.valid_until is None
    assert (temporal.precision, temporal.confidence) == (Precision.MONTH, 0.85)


# sentence -> (content, where its date lands), said on Monday 2026-11-30 in Berlin. A month or
# weekday without a year or week looks back for events and for states told in the past tense
# (corrections included), forward for plans and for the present tense.
DIRECTIONS = {
    "I moved to Lisbon in May.": ("The user lives in Lisbon.", berlin(2026, 5, 1)),
    "I've relocated to Porto on March 5.": ("The user lives in Porto.", berlin(2026, 3, 5)),
    "Actually, I moved to Lisbon in May.": ("The user lives in Lisbon.", berlin(2026, 5, 1)),
    "No, I have lived in Braga since May.": ("The user lives in Braga.", berlin(2026, 5, 1)),
    "I live in Rome until May.": ("The user lives in Rome.", berlin(2027, 6, 1)),
    "I work at Acme until March.": ("The user works at Acme.", berlin(2027, 4, 1)),
    "I visited Japan in May.": ("The user visited Japan in May 2026.", berlin(2026, 5, 1)),
    "I finished the migration on Friday.": (
        "The user finished the migration on 2026-11-27.",
        berlin(2026, 11, 27),
    ),
    "Sorry, I meant I started at Acme in March.": (
        "The user started at Acme in March 2026.",
        berlin(2026, 3, 1),
    ),
    "My trip to Rome was cancelled on Friday.": (
        "The user cancelled the trip to Rome on 2026-11-27.",
        berlin(2026, 11, 27),
    ),
    "I'm flying to Rome in May.": (
        "The user plans a trip to Rome in May 2027.",
        berlin(2027, 5, 1),
    ),
    "Actually, I'm flying to Rome in May.": (
        "The user plans a trip to Rome in May 2027.",
        berlin(2027, 5, 1),
    ),
    "I'm going to visit my parents on Friday.": (
        "The user plans to visit their parents on 2026-12-04.",
        berlin(2026, 12, 4),
    ),
    "I have a dentist appointment in March.": (
        "The user has a dentist appointment in March 2027.",
        berlin(2027, 3, 1),
    ),
}


@pytest.mark.parametrize("text", DIRECTIONS)
def test_a_yearless_date_follows_the_tense_of_what_is_said(extract: Extract, text: str) -> None:
    """R-TIME-1/2: "I moved to Lisbon in May" said in November is this May, never next May;
    "I'm flying to Rome in May" is next May. States bound by "until" keep their end bound."""
    content, bound = DIRECTIONS[text]
    first = extract(text).candidates[0]
    interval = first.temporal.interval
    assert first.content == content
    assert (
        interval.valid_from if interval.valid_from is not None else interval.valid_until
    ) == bound


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("I moved to Lisbon in May", True),
        ("I've been living in Madrid since March", True),
        ("I have lived in Porto for years", True),
        ("I had just started at Acme", True),
        ("I got divorced in January", True),
        ("I went to Oslo", True),
        ("We were in Rome", True),
        ("I used to live in Paris", True),
        ("My trip to Rome was cancelled yesterday", True),
        ("I live in Lisbon", False),
        ("I'm based in Lisbon", False),  # an "-ed" adjective, not a verb
        ("I need a flat in Lisbon", False),  # "need" is no past tense
        ("I'm flying to Rome in May", False),
        ("I have a meeting on Friday", False),
        ("I'd prefer short answers", False),
        ("My name is Ana", False),
    ],
)
def test_a_clause_knows_whether_its_own_verb_is_past(text: str, past: bool) -> None:
    """The tense the rules read a yearless date by, when the rule's shape does not say it."""
    (clause,) = clauses_of(text, entry_id="m1", reading=MessageReading(REFERENCE, "Europe/Berlin"))
    assert clause.past_tense is past
    assert clause.tense == ("past" if past else "future")


def test_correction_supersedes_by_slot_with_higher_confidence(extract: Extract) -> None:
    """A correction restates the fact in the same slot, so the decision step supersedes; the
    user's explicit correction counts as stronger evidence (R-DOM-2)."""
    first, second = extract("I live in Paris.", "Sorry, I meant I live in Hamburg.").candidates
    assert first.slot == second.slot == "user.home_city"
    assert second.content == "The user lives in Hamburg."
    assert second.confidence is not None and first.confidence is not None
    assert second.confidence > first.confidence


def test_preferences_are_atemporal_user_preferences(extract: Extract) -> None:
    (claim,) = extract("I prefer short answers.").candidates
    assert claim.category is Category.USER_PREFERENCE
    assert claim.kind is ClaimKind.SEMANTIC
    assert claim.temporal.is_atemporal


def test_events_are_episodic_and_keep_the_resolved_period(extract: Extract) -> None:
    """R-TIME-2: "last year" is the whole of 2025 at year precision, confidence 0.6."""
    (claim,) = extract("I visited Japan last year.").candidates
    assert claim.kind is ClaimKind.EPISODIC
    interval = claim.temporal.interval
    assert (interval.valid_from, interval.valid_until) == (berlin(2025, 1, 1), berlin(2026, 1, 1))
    assert (claim.temporal.precision, claim.temporal.confidence) == (Precision.YEAR, 0.6)


@pytest.mark.parametrize(
    ("text", "kind", "content", "topic"),
    [
        (
            "Never mention my ex-husband again.",
            DirectiveKind.SUPPRESS_TOPIC,
            "Do not bring up the user's ex-husband.",
            "ex-husband",
        ),
        (
            "Don't bring up politics.",
            DirectiveKind.SUPPRESS_TOPIC,
            "Do not bring up politics.",
            "politics",
        ),
        (
            "Always answer with examples.",
            DirectiveKind.INSTRUCTION,
            "Always answer with examples.",
            None,
        ),
        (
            "Going forward, please use metric units.",
            DirectiveKind.INSTRUCTION,
            "Use metric units.",
            None,
        ),
    ],
)
def test_explicit_persistent_requests_become_suggestions(
    extract: Extract, text: str, kind: DirectiveKind, content: str, topic: str | None
) -> None:
    """R-DIR-1: suggestions only, with the literal topic the user named (R-DIR-2)."""
    result = extract(text)
    assert result.candidates == ()
    (suggestion,) = result.suggestions
    assert (suggestion.kind, suggestion.content, suggestion.topic) == (kind, content, topic)


@pytest.mark.parametrize(
    "text", ["I want you to call me Sam from now on.", "Call me Sam from now on."]
)
def test_call_me_from_now_on_is_the_preferred_name_with_a_draft_beside_it(
    extract: Extract, text: str
) -> None:
    """R-DIR-1: the name is a fact at once; the standing request only a suggestion."""
    result = extract(text)
    assert [(c.content, c.slot) for c in result.candidates] == [
        ("The user prefers to be called Sam.", "user.preferred_name")
    ]
    assert [(s.kind, s.content) for s in result.suggestions] == [
        (DirectiveKind.INSTRUCTION, "Call me Sam.")
    ]


def test_from_now_on_with_a_first_person_statement_is_a_fact(extract: Extract) -> None:
    result = extract("From now on, I live in Berlin.")
    assert result.suggestions == ()
    assert [c.content for c in result.candidates] == ["The user lives in Berlin."]


def test_only_sent_user_messages_are_read(make_request: MakeRequest, run: RunExtractor) -> None:
    """Assistant, system and tool text and failed user messages are never a source."""
    said = "I live in Paris. I prefer tea. Please stop mentioning the divorce."
    request = make_request([("assistant", said), ("system", said), ("tool", said)])
    assert run(RulesExtractor(), request) == ExtractionResult()


def test_failed_or_pending_user_message_is_not_read(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    request = make_request([("user", "I live in Paris."), ("user", "I prefer tea.")])
    failed, pending = (
        attrs.evolve(request.entries[0], status=EntryStatus.ERROR),
        attrs.evolve(request.entries[1], status=EntryStatus.PENDING),
    )
    assert run(RulesExtractor(), attrs.evolve(request, entries=(failed, pending))).candidates == ()


def test_candidate_holding_a_secret_is_rejected(extract: Extract) -> None:
    """R-PRIV-1: the default (reject) policy drops the candidate and counts why."""
    token = "ghp_" + "a1B2c3D4e5" * 4
    result = extract(f"I prefer the token {token} for scripts.")
    assert result.candidates == ()
    assert result.rejected == (RejectionReason.SECRET,)


def test_redacting_policy_keeps_the_candidate_without_the_secret(extract: Extract) -> None:
    """R-PRIV-1: with a redacting policy the claim survives, the credential does not."""
    token = "ghp_" + "a1B2c3D4e5" * 4
    extractor = RulesExtractor(secret_policy=PatternSecretPolicy(mode="redact"))
    (claim,) = extract(f"I prefer the token {token} for scripts.", extractor=extractor).candidates
    assert token not in claim.content
    assert "[REDACTED:github_token]" in claim.content


def test_suggestion_holding_a_secret_is_dropped(extract: Extract) -> None:
    result = extract("Always use the key sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c for requests.")
    assert result.suggestions == ()
    assert result.rejected == (RejectionReason.SUGGESTION_SECRET,)


def test_repeated_statements_merge_into_one_candidate_with_both_sources(extract: Extract) -> None:
    (claim,) = extract("I prefer tea.", "I prefer tea.").candidates
    assert claim.source_entry_ids == ("m1", "m2")


def test_same_input_gives_the_same_output(extract: Extract) -> None:
    text = "Actually, I moved to Berlin last year and I work at Acme. I'm flying to Rome on Friday."
    assert extract(text) == extract(text)


def test_cancelled_token_stops_extraction(make_request: MakeRequest, run: RunExtractor) -> None:
    token = CancellationToken()
    token.cancel("shutdown")
    with pytest.raises(OperationCancelled):
        run(RulesExtractor(), make_request([("user", "I live in Paris.")]), cancel=token)


def test_expired_deadline_stops_extraction(make_request: MakeRequest, run: RunExtractor) -> None:
    with pytest.raises(DeadlineExceeded):
        run(RulesExtractor(), make_request([("user", "I live in Paris.")]), seconds=0)


def test_relative_dates_resolve_against_the_request_not_the_wall_clock(
    make_request: MakeRequest, run: RunExtractor
) -> None:
    """The same words a week later name a different Friday."""
    request = make_request([("user", "I'm flying to Lisbon on Friday.")])
    later = attrs.evolve(request, reference_time=REFERENCE + timedelta(days=7))
    (now_claim,) = run(RulesExtractor(), request).candidates
    (later_claim,) = run(RulesExtractor(), later).candidates
    assert now_claim.content.endswith("on 2026-12-04.")
    assert later_claim.content.endswith("on 2026-12-11.")


def test_slot_keys_are_lowercase_ascii_and_stable() -> None:
    assert slot_key("user.trip", "New York") == "user.trip.new_york"
    assert slot_key("user.trip", "Zürich") == "user.trip.zurich"
    assert slot_key("user.trip", "the Alps") == "user.trip.alps"
    assert slot_key("user.trip", "東京") == slot_key("user.trip", "東京")
    assert slot_key("user.trip", "東京").startswith("user.trip.h")


@pytest.mark.parametrize(
    ("verb", "conjugated"),
    [
        ("eat", "eats"),
        ("watch", "watches"),
        ("study", "studies"),
        ("play", "plays"),
        ("have", "has"),
        ("go", "goes"),
    ],
)
def test_third_person_verbs(verb: str, conjugated: str) -> None:
    assert third_person_verb(verb) == conjugated
