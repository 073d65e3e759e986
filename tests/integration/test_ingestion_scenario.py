"""A scripted conversation through the whole write path: JSONL tape → rules extractor →
decisions → apsw store, turn by turn, with the real ingestion runtime."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ingestion_support import AGENT, Harness, make_harness

from memory_adapters.tapes.jsonl import JsonlTape
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.temporal_policy import TemporalStatus, assess
from memory_core.ports.claims import DerivationKind
from memory_core.services.write.ingestion.service import IngestionOutcome, IngestionReport

API_KEY = "sk-proj-Zq8xV3nL5tR7wY9aB2cD4eF6gH8jK0mN1pQ3"
TURNS = (
    "I live in Paris.",
    "Actually, I moved to Berlin last month, so I live in Berlin now.",
    "I'm planning to fly to Lisbon in December.",
    "My trip to Lisbon was cancelled.",
    "I prefer tea over coffee.",
    "Please stop mentioning my divorce.",
    f"My API key is {API_KEY}, keep it handy.",
)


@pytest.fixture
def tape_path(tmp_path: Path) -> Path:
    return tmp_path / "tape.jsonl"


@pytest.fixture
def harness(tmp_path: Path, tape_path: Path) -> Iterator[Harness]:
    tape = JsonlTape(tape_path)
    built = make_harness(tmp_path, tape=tape)
    yield built
    built.close()
    tape.close()


def _run_conversation(harness: Harness) -> list[IngestionOutcome]:
    async def scenario() -> list[IngestionOutcome]:
        runtime = harness.runtime("s1")
        outcomes = []
        for text in TURNS:
            report = await harness.turn(runtime, text)
            outcomes.append(report.outcome)
            assert harness.cursors.get(AGENT, "s1") == report.cursor_after
        return outcomes

    return asyncio.run(scenario())


def test_every_turn_is_extracted_and_commits_the_cursor(harness: Harness) -> None:
    """R-WRITE-8, R-HOST-1: a current projection lets each turn's chunk advance the cursor
    to the turn's last message; every pass ends COMPLETED."""
    outcomes = _run_conversation(harness)
    assert outcomes == [IngestionOutcome.COMPLETED] * len(TURNS)
    assert harness.cursors.get(AGENT, "s1") == 2 * len(TURNS)


def test_move_supersedes_the_old_home_with_a_lineage_edge(harness: Harness) -> None:
    """R-LINEAGE-1, R-TIME-1: Berlin is current, Paris superseded by it, its interval closed,
    and the supersede edge committed with the mutation."""
    _run_conversation(harness)
    berlin = harness.live("The user lives in Berlin.")
    (paris,) = [
        claim
        for claim in harness.claims(include_inactive=True)
        if claim.content == "The user lives in Paris."
    ]
    assert berlin.is_recallable and berlin.slot == "user.home_city"
    assert paris.superseded_by == berlin.id and not paris.is_recallable
    assert paris.temporal.interval.valid_until is not None
    assert paris.temporal.interval.valid_until <= harness.clock.now()
    edges = harness.store.list_derivations(AGENT, paris.id)
    assert [(e.parent_id, e.child_id, e.kind) for e in edges] == [
        (paris.id, berlin.id, DerivationKind.SUPERSEDE)
    ]


def test_cancelled_trip_reads_previously_planned(harness: Harness) -> None:
    """R-TIME-2: the plan is superseded in its slot by the cancelled plan, which the temporal
    policy labels "previously planned" — never a trip that happened."""
    _run_conversation(harness)
    everything = harness.claims(include_inactive=True)
    trip_slot = [claim for claim in everything if claim.slot == "user.trip.lisbon"]
    planned = [claim for claim in trip_slot if not claim.is_recallable]
    live = [claim for claim in trip_slot if claim.is_recallable]
    assert len(planned) == 1 and len(live) == 1
    assert planned[0].superseded_by == live[0].id
    assert assess(live[0].temporal, harness.clock.now()).status is (
        TemporalStatus.PREVIOUSLY_PLANNED
    )
    assert assess(live[0].temporal, harness.clock.now()).label == "previously planned"
    assert any(
        claim.content.startswith("The user cancelled the trip to Lisbon") for claim in everything
    )


def test_preference_is_stored(harness: Harness) -> None:
    """R-WRITE-1: an atemporal preference is remembered."""
    _run_conversation(harness)
    assert harness.live("The user prefers tea over coffee.").temporal.is_atemporal


def test_stop_mentioning_becomes_a_draft_directive_only(harness: Harness) -> None:
    """R-DIR-1: extraction can only suggest; the suppress_topic directive stays a draft."""
    _run_conversation(harness)
    (directive,) = harness.store.list_directives(AGENT)
    assert directive.kind is DirectiveKind.SUPPRESS_TOPIC
    assert directive.status is DirectiveStatus.DRAFT
    assert directive.topic == "divorce"
    assert harness.store.list_directives(AGENT, status=DirectiveStatus.ACTIVE) == []


def test_api_key_is_nowhere_in_the_store(harness: Harness, tmp_path: Path) -> None:
    """R-PRIV-1: a shared credential is neither a claim, a directive, nor bytes on disk."""
    _run_conversation(harness)
    texts = [claim.content for claim in harness.claims(include_inactive=True)]
    texts += [directive.content for directive in harness.store.list_directives(AGENT)]
    assert not any(API_KEY in text or "API key" in text for text in texts)
    for path in tmp_path.glob("memory.sqlite3*"):
        assert API_KEY.encode() not in path.read_bytes()


def test_extract_anchors_carry_ids_and_counts_only(harness: Harness, tape_path: Path) -> None:
    """R-WRITE-8 / §7.1: one `memory/extract` anchor per committed chunk, content-free."""
    _run_conversation(harness)
    anchors = [
        record
        for record in map(json.loads, tape_path.read_text("utf-8").splitlines())
        if record.get("kind") == "anchor" and record.get("anchor_kind") == "memory/extract"
    ]
    assert len(anchors) == len(TURNS)
    stored = {claim.id for claim in harness.claims(include_inactive=True)}
    for anchor in anchors:
        payload = anchor["payload"]
        assert set(payload["memoryIds"]) <= stored
        assert payload["cursorAdvanced"] is True
        assert payload["reason"] == "fallback"
        serialised = json.dumps(anchor)
        assert not any(word in serialised for word in ("Berlin", "Paris", "Lisbon", API_KEY))
    assert sum(payload["count"] for payload in (a["payload"] for a in anchors)) == len(stored)


def test_commit_hook_sees_every_new_claim(harness: Harness) -> None:
    """R-WRITE-1: the embedding pipeline is told each committed claim id, per agent."""
    _run_conversation(harness)
    notified = {claim_id for agent, ids in harness.committed for claim_id in ids}
    assert {agent for agent, _ in harness.committed} == {AGENT}
    assert notified == {claim.id for claim in harness.claims(include_inactive=True)}


def test_returning_home_revives_the_old_claim_with_lineage_both_ways(
    harness: Harness,
) -> None:
    """R-LINEAGE-1, R-TIME-1, R-SCOPE-3: Paris → Berlin → Paris through the whole write path.
    The Paris row of the first turn is current again — not a copy — Berlin is retired in its
    favour with its interval closed where Paris starts again, and the supersede edges run
    Paris → Berlin and Berlin → Paris."""

    async def conversation() -> list[IngestionReport]:
        runtime = harness.runtime("s1")
        return [
            await harness.turn(runtime, text)
            for text in (
                "I live in Paris.",
                "Actually, I moved to Berlin last month, so I live in Berlin now.",
                "I moved back to Paris, so I live in Paris again.",
            )
        ]

    reports = asyncio.run(conversation())
    assert [report.outcome for report in reports] == [IngestionOutcome.COMPLETED] * 3
    paris = harness.live("The user lives in Paris.")
    everything = harness.claims(include_inactive=True)
    assert sorted(claim.content for claim in everything) == [
        "The user lives in Berlin.",
        "The user lives in Paris.",
    ]
    (berlin,) = [claim for claim in everything if claim.content == "The user lives in Berlin."]
    assert berlin.superseded_by == paris.id and not berlin.is_recallable
    assert paris.revision == 3  # inserted, retired by Berlin, revived
    assert paris.temporal.interval.valid_from == harness.clock.now()
    assert paris.temporal.interval.valid_until is None
    assert berlin.temporal.interval.valid_until == paris.temporal.interval.valid_from
    edges = harness.store.list_derivations(AGENT, paris.id)
    assert [(e.parent_id, e.child_id, e.kind) for e in edges] == [
        (paris.id, berlin.id, DerivationKind.SUPERSEDE),
        (berlin.id, paris.id, DerivationKind.SUPERSEDE),
    ]
    last = reports[-1].chunks[-1].report
    assert last.revived_ids == (paris.id,) and last.stored_ids == ()
    assert last.superseded == ((berlin.id, paris.id),)
    hits = harness.store.search_fts(
        AGENT, ["lives in"], scope_filter=ScopeFilter.agent_only(), limit=5
    )
    assert [hit.claim_id for hit in hits] == [paris.id]


def test_a_replayed_older_state_never_retires_the_newer_one(harness: Harness) -> None:
    """R-TIME-1, R-WRITE-3: a message about an earlier time (a replay dated as it was said)
    does not undo the state that followed it."""

    async def conversation() -> None:
        harness.clock.set(datetime(2026, 6, 10, 12, 0, tzinfo=UTC))
        first = harness.runtime("s1")
        await harness.turn(first, "I moved to Berlin in April.")
        # The same user's old session, imported later but dated as it was said: March.
        harness.clock.set(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
        await harness.turn(harness.runtime("s-old"), "I live in Paris.")

    asyncio.run(conversation())
    berlin = harness.live("The user lives in Berlin.")
    assert berlin.superseded_by is None
    assert all(
        claim.content != "The user lives in Paris." or not claim.is_recallable
        for claim in harness.claims(include_inactive=True)
    )
