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

OWNER, OTHER = "owner", "other"


def test_the_management_view_is_the_owners_only(tmp_path: Path) -> None:
    """R-STORE-3, R-FORGET-2: list and get name their agent; archived rows show with
    `include_inactive` only; another agent's id is NotFound."""

    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        kept = await memory.remember(OWNER, "The user rides a green bicycle.")
        gone = await memory.remember(OWNER, "The user owns a red kayak.")
        assert kept.claim_id is not None and gone.claim_id is not None
        await memory.forget(OWNER, gone.claim_id)
        assert [c.id for c in memory.list_claims(OWNER)] == [kept.claim_id]
        assert {c.id for c in memory.list_claims(OWNER, include_inactive=True)} == {
            kept.claim_id,
            gone.claim_id,
        }
        assert memory.get_claim(OWNER, gone.claim_id).lifecycle.value == "archived"
        with pytest.raises(NotFound):
            memory.get_claim(OTHER, kept.claim_id)
        await memory.aclose()

    asyncio.run(go())


def test_an_import_is_one_owners_history_and_never_releases_a_tombstone(tmp_path: Path) -> None:
    """R-WRITE-5: imported drafts of another agent are refused whole; a deleted text comes
    back from an import as SUPPRESSED; imported claims are embedded."""

    async def go() -> None:
        memory = make_memory(tmp_path, clock := ManualClock())
        deleted = await memory.remember(OWNER, "The user's locker code is on a sticky note.")
        assert deleted.claim_id is not None
        await memory.delete(OWNER, deleted.claim_id)
        past = clock.now() - timedelta(days=3)
        with pytest.raises(ValidationError, match="drafts"):
            await memory.import_claims(
                OWNER,
                [ClaimDraft(agent_id=OWNER, kind="semantic", content="Mine."),
                 ClaimDraft(agent_id=OTHER, kind="semantic", content="Not mine.")],
                recorded_at=past,
            )  # fmt: skip
        assert memory.list_claims(OWNER) == [] and memory.list_claims(OTHER) == []
        outcomes = await memory.import_claims(
            OWNER,
            [ClaimDraft(agent_id=OWNER, kind="semantic", content="The user grows basil."),
             ClaimDraft(agent_id=OWNER, kind="semantic",
                        content="The user's locker code is on a sticky note.")],
            recorded_at=past,
        )  # fmt: skip
        assert [o.status for o in outcomes] == [InsertStatus.INSERTED, InsertStatus.SUPPRESSED]
        assert outcomes[0].claim is not None and outcomes[0].claim.created_at == past
        await memory.embed_pending(OWNER)
        assert memory.pending_embeddings(OWNER) == 0
        await memory.aclose()

    asyncio.run(go())


def test_reindex_diagnose_and_rank_through_the_service(tmp_path: Path) -> None:
    """R-PROV-4, R-VEC-4, R-READ-3: reindex re-embeds every claim and earns the certificate;
    diagnose reports the agent healthy; every ranking source finds the claim."""

    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock())
        stored = await memory.remember(OWNER, "The user plays the cello on Sundays.")
        seen: list[tuple[int, int]] = []
        report = await memory.reindex(
            OWNER, progress=lambda done, queued: seen.append((done, queued))
        )
        assert (report.claims, report.embedded, report.pending, report.ready) == (1, 1, 0, True)
        assert seen[0] == (0, 1) and seen[-1] == (1, 1)
        health = await memory.diagnose([OWNER])
        assert health.healthy
        (agent,) = health.agents
        assert agent.vectors == agent.ready_claims == 1
        assert {check.status for check in health.checks} == {CheckStatus.OK}
        for source in RankSource:
            ranking = await memory.rank(OWNER, "cello", source=source, depth=5)
            assert ranking.claim_ids == (stored.claim_id,), source
        await memory.aclose()

    asyncio.run(go())


def test_reindex_without_vectors_is_a_config_error(tmp_path: Path) -> None:
    async def go() -> None:
        memory = make_memory(tmp_path, ManualClock(), embedder="none")
        with pytest.raises(ConfigError, match="reindex needs an embedding_provider"):
            await memory.reindex(OWNER)
        await memory.aclose()

    asyncio.run(go())
