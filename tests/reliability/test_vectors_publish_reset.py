"""A namespace rebuilt for a new embedder whose claims were never reset (the state an older
version left when killed between publish and reset): doctor must fail it and name the fix,
and reindex must repair it (R-VEC-2, R-PROV-4). The kill itself is in
tests/adapters/duckdb_vectors/test_duckdb_crash.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_adapters.clocks import MonotonicClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.services.memory.diagnostics import CheckStatus
from memory_plugins.bootstrap import open_memory

AGENT = "ana"


def hashing(dimensions: int) -> str:
    return (
        '[plugins.embedding_provider]\nname = "hashing"\n'
        f"[plugins.embedding_provider.options]\ndimensions = {dimensions}\n"
    )


def test_doctor_fails_claims_ready_under_another_model_and_reindex_repairs_them(
    tmp_path: Path,
) -> None:
    """R-VEC-2: coverage alone cannot see it (no claim is ready for the new model, the
    namespace is empty), so doctor counts claims ready under a foreign identity."""
    (tmp_path / "old.toml").write_text(hashing(8), encoding="utf-8")
    (tmp_path / "new.toml").write_text(hashing(16), encoding="utf-8")

    async def seed() -> None:
        memory = open_memory(tmp_path, config=tmp_path / "old.toml")
        try:
            for fact in ("The user keeps bees.", "The user sails on Sundays."):
                await memory.remember(AGENT, fact)
            assert await memory.warm(AGENT)
        finally:
            await memory.aclose()

    async def break_and_repair() -> None:
        memory = open_memory(tmp_path, config=tmp_path / "new.toml")
        try:
            vectors = memory.index.vectors
            assert vectors is not None
            identity = (await memory.diagnose()).provider.identity
            assert identity is not None
            calls = {
                "deadline": Deadline.after(MonotonicClock(), 60),
                "cancel": CancellationToken(),
            }
            # The publish half alone: exactly what a kill before the reset's commit left.
            await vectors.rebuild(AGENT, identity, **calls)

            broken = await memory.diagnose([AGENT])
            (agent,), check = broken.agents, broken.checks[-1]
            assert agent.stale_ready_claims == 2
            assert check.status is CheckStatus.FAIL
            assert "reindex" in check.detail

            report = await memory.reindex(AGENT)
            assert report.embedded == 2
            after = await memory.diagnose([AGENT])
            assert after.agents[0].stale_ready_claims == 0
            assert {c.status for c in after.checks} == {CheckStatus.OK}, after.checks
        finally:
            await memory.aclose()

    asyncio.run(seed())
    asyncio.run(break_and_repair())
