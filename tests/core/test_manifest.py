"""The selection manifest: a content-free, JSON-stable record of one turn's selection."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from memory_core.domain.claims import Claim, ClaimKind
from memory_core.domain.directives import Directive
from memory_core.domain.errors import ValidationError
from memory_core.domain.manifest import (
    CandidateSource,
    Degradation,
    DirectiveManifest,
    DroppedItem,
    DropReason,
    SelectedDirective,
    SelectedItem,
    SelectionManifest,
    StageTimings,
)
from memory_core.domain.provenance import query_hash
from memory_core.services.read.contribution import ContributionRequest, RecalledMemory, assemble
from memory_core.services.read.fusion import Candidate
from memory_core.services.read.scoring import ScoringPolicy, filter_suppressed, rank_candidates
from memory_core.settings import MemorySettings

NOW = datetime(2026, 6, 1, tzinfo=UTC)
MARKER = "PLAINTEXT-MARKER-5e1d"


def test_degradation_values_are_the_reported_names() -> None:
    assert [d.value for d in Degradation] == [
        "vectorCold",
        "embeddingTimeout",
        "embeddingError",
        "embeddingCircuitOpen",
        "storeUnusable",
        "storeTimeout",
        "storeError",
        "revisionChanged",
        "ftsUnavailable",
        "candidateBudgetExhausted",
        "unknown",
    ]
    assert {r.value for r in DropReason} == {
        "budget",
        "item_budget",
        "total_budget",
        "suppressed",
        "duplicate",
        "temporal",
    }


def test_degradations_become_a_set_in_enum_order() -> None:
    manifest = SelectionManifest(degradations=["ftsUnavailable", "vectorCold", "ftsUnavailable"])
    assert manifest.degradations == (Degradation.VECTOR_COLD, Degradation.FTS_UNAVAILABLE)


def test_json_round_trip_keeps_every_field() -> None:
    manifest = SelectionManifest(
        selected=(
            SelectedItem(
                id="a", kind="semantic", score=0.5, sources=(CandidateSource.FTS,), tokens=4
            ),
        ),
        dropped=(DroppedItem(id="b", kind=ClaimKind.EPISODIC, reason="budget"),),
        token_budget=1200,
        estimated_tokens=90,
        allocation={"policy_version": 1, "used": {"recall": 12}},
        query_hash="v2:query:00",
        degradations=(Degradation.EMBEDDING_TIMEOUT,),
        directives=DirectiveManifest(
            selected=(SelectedDirective(id="d", kind="instruction", source="manual", tokens=9),),
            dropped=(DroppedItem(id="e", kind="suppress_topic", reason="item_budget"),),
            token_budget=512,
            item_token_budget=192,
            estimated_tokens=80,
        ),
        timings=StageTimings(keywords=0.2, vector=3.5, total=9.0),
    )
    text = manifest.to_json()
    assert json.loads(text)["degradations"] == ["embeddingTimeout"]
    assert json.loads(text)["dropped"] == [{"id": "b", "kind": "episodic", "reason": "budget"}]
    assert SelectionManifest.from_json(text) == manifest


def test_invalid_values_are_rejected_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="score"):
        SelectedItem(id="a", kind="semantic", score=math.nan)
    with pytest.raises(ValidationError, match="kind"):
        DroppedItem(id="a", kind="gossip", reason="budget")
    with pytest.raises(ValidationError, match="total"):
        StageTimings(total=-1.0)
    with pytest.raises(ValidationError, match="manifest"):
        SelectionManifest.from_json("{not json")


def test_empty_manifest_knows_it_is_empty() -> None:
    assert SelectionManifest().is_empty
    assert not SelectionManifest(degradations=(Degradation.VECTOR_COLD,)).is_empty
    assert not SelectionManifest(allocation={"constrained": True}).is_empty


def _claim(claim_id: str, content: str, **extra: object) -> Claim:
    return Claim(
        id=claim_id,
        agent_id="agent",
        kind=ClaimKind.SEMANTIC,
        content=content,
        canonical_content=content,
        created_at=NOW - timedelta(days=1),
        updated_at=NOW,
        **extra,
    )


def test_manifest_json_never_holds_claim_directive_or_query_text() -> None:
    """R-FORGET-1: no plaintext in diagnostics — ids, kinds, scores and counts only."""
    claims = [_claim(f"c{i}", f"{MARKER} fact {i} " + "pad " * (i * 40)) for i in range(6)]
    claims.append(_claim("dup", f"{MARKER} fact 0 "))
    claims.append(_claim("hidden", f"{MARKER} secret topic"))
    suppress = Directive(
        id="s",
        agent_id="agent",
        kind="suppress_topic",
        status="active",
        source="manual",
        content=f"{MARKER} secret topic",
        topic="secret topic",
        identity_hash="h",
        created_at=NOW,
        updated_at=NOW,
    )
    instruction = Directive(
        id="i",
        agent_id="agent",
        kind="instruction",
        status="active",
        source="explicit_user",
        content=f"{MARKER} " + "be brief " * 200,
        identity_hash="h2",
        created_at=NOW,
        updated_at=NOW,
    )
    candidates = [Candidate(claim=c, fts_rank=i) for i, c in enumerate(claims)]
    kept, suppressed = filter_suppressed(candidates, [suppress])
    ranking = rank_candidates(kept, now=NOW, top_k=10, policy=ScoringPolicy())
    contribution = assemble(
        ContributionRequest(
            total_budget=400,
            recalled=tuple(RecalledMemory.from_scored(item) for item in ranking.items),
            persona=f"{MARKER} persona",
            working=f"{MARKER} working",
            directives=(suppress, instruction),
            query_hash=query_hash("agent", f"{MARKER} query"),
            prior_drops=suppressed + ranking.dropped,
        ),
        settings=MemorySettings(),
    )
    manifest = contribution.manifest
    reasons = {d.reason for d in manifest.dropped} | {d.reason for d in manifest.directives.dropped}
    # Every path that records an item was exercised: selected, budget, duplicate, suppressed.
    assert manifest.selected
    assert {DropReason.BUDGET, DropReason.DUPLICATE, DropReason.SUPPRESSED} <= reasons
    assert DropReason.ITEM_BUDGET in reasons
    assert MARKER in (contribution.text or "")
    assert MARKER not in manifest.to_json()
    assert "secret" not in manifest.to_json()


def test_unknown_degradations_and_sources_are_rejected_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="degradations"):
        SelectionManifest(degradations=["slowDisk"])
    with pytest.raises(ValidationError, match="sources"):
        SelectedItem(id="a", kind="semantic", sources=["bm25"])
