"""The use cases the CLI and the evaluation reach through `MemoryService` (R-ARCH-5): the
management view, imports, re-embedding, diagnostics and rankings, on the embedded stores."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft
from memory_core.domain.errors import ConfigError, NotFound, ValidationError
from memory_core.ports.claims import InsertStatus
from memory_core.services.memory import CheckStatus, RankSource

A, B = "agent-a", "agent-b"


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def test_the_management_view_is_the_owners_only(tmp_path: Path, clock: ManualClock) -> None:
    """R-STORE-3, R-FORGET-2: list and get name their agent; archived rows show with
    `include_inactive` only; another agent's id is NotFound."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        kept = await memory.remember(A, "The user rides a green bicycle.")
        gone = await memory.remember(A, "The user owns a red kayak.")
        assert kept.claim_id is not None and gone.claim_id is not None
        await memory.forget(A, gone.claim_id)
        assert [c.id for c in memory.list_claims(A)] == [kept.claim_id]
        assert {c.id for c in memory.list_claims(A, include_inactive=True)} == {
            kept.claim_id,
            gone.claim_id,
        }
        assert memory.get_claim(A, gone.claim_id).lifecycle.value == "archived"
        with pytest.raises(NotFound):
            memory.get_claim(B, kept.claim_id)
        await memory.aclose()

    run(go())


def test_an_import_is_one_owners_history_and_never_releases_a_tombstone(
    tmp_path: Path, clock: ManualClock
) -> None:
    """R-WRITE-5: imported drafts of another agent are refused whole; a deleted text comes
    back from an import as SUPPRESSED; imported claims are embedded."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        deleted = await memory.remember(A, "The user's locker code is on a sticky note.")
        assert deleted.claim_id is not None
        await memory.delete(A, deleted.claim_id)
        past = clock.now() - timedelta(days=3)
        with pytest.raises(ValidationError, match="drafts"):
            await memory.import_claims(
                A,
                [ClaimDraft(agent_id=A, kind="semantic", content="Mine."),
                 ClaimDraft(agent_id=B, kind="semantic", content="Not mine.")],
                recorded_at=past,
            )  # fmt: skip
        assert memory.list_claims(A) == [] and memory.list_claims(B) == []
        outcomes = await memory.import_claims(
            A,
            [ClaimDraft(agent_id=A, kind="semantic", content="The user grows basil."),
             ClaimDraft(agent_id=A, kind="semantic",
                        content="The user's locker code is on a sticky note.")],
            recorded_at=past,
        )  # fmt: skip
        assert [o.status for o in outcomes] == [InsertStatus.INSERTED, InsertStatus.SUPPRESSED]
        assert outcomes[0].claim is not None and outcomes[0].claim.created_at == past
        await memory.embed_pending(A)
        assert memory.pending_embeddings(A) == 0
        await memory.aclose()

    run(go())


def test_reindex_diagnose_and_rank_through_the_service(tmp_path: Path, clock: ManualClock) -> None:
    """R-PROV-4, R-VEC-4, R-READ-3: reindex re-embeds every claim and earns the certificate;
    diagnose reports the agent healthy; every ranking source finds the claim."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock)
        stored = await memory.remember(A, "The user plays the cello on Sundays.")
        seen: list[tuple[int, int]] = []
        report = await memory.reindex(A, progress=lambda done, queued: seen.append((done, queued)))
        assert (report.queued, report.embedded, report.pending, report.ready) == (1, 1, 0, True)
        assert seen[0] == (0, 1) and seen[-1] == (1, 1)
        health = await memory.diagnose([A])
        assert health.healthy
        (agent,) = health.agents
        assert agent.vectors == agent.ready_claims == 1
        assert {check.status for check in health.checks} == {CheckStatus.OK}
        for source in RankSource:
            ranking = await memory.rank(A, "cello", source=source, depth=5)
            assert ranking.claim_ids == (stored.claim_id,), source
        await memory.aclose()

    run(go())


def test_reindex_without_vectors_is_a_config_error(tmp_path: Path, clock: ManualClock) -> None:
    async def go() -> None:
        memory = make_memory(tmp_path, clock, embedder="none")
        with pytest.raises(ConfigError, match="reindex needs an embedding_provider"):
            await memory.reindex(A)
        await memory.aclose()

    run(go())
