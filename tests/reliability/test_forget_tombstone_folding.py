"""A forgotten fact stays forgotten for the model however it is re-spelt (R-WRITE-5, R-FORGET-1).

`memory_remember` used to re-save a user-deleted fact with a change of case or punctuation,
an inserted zero-width space (all render alike), or at agent scope after the user deleted
it at session scope. The folded tombstone identity (NFKC, casefold, format characters,
punctuation and whitespace folded; scope left out) closes that for the model's tool; the
user's explicit add still releases it, and extraction keeps the exact rule.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from forget_world import open_world

from memory_core.domain import provenance
from memory_core.domain.scope import Scope
from memory_core.services.memory import MemoryService
from memory_core.services.memory.tools import RememberStatus

A = "agent-a"
FACT = "The user's sister lives in Porto."
RESPELT = [
    "the user's sister lives in porto.",
    "THE USER'S SISTER LIVES IN PORTO",
    "The user's sister lives in Porto!",
    "The user\u2019s sister lives in Porto.",
    "The user's sis\u200bter lives in Porto.",
    "The user's sister lives in Por\u00adto.",
    "Ｔｈｅ user's sister lives in Porto.",
    "The  user's sister, lives in Porto …",
]


def _run(tmp_path: Path, work) -> None:  # type: ignore[no-untyped-def]
    async def go() -> None:
        memory = open_world(tmp_path / "data")
        try:
            await work(memory)
        finally:
            await memory.aclose()

    asyncio.run(go())


@pytest.mark.parametrize("variant", RESPELT)
def test_the_model_cannot_re_save_a_deleted_fact_respelt(tmp_path: Path, variant: str) -> None:
    """R-WRITE-5: a re-spelling that reads the same needs the user's re-authorisation."""

    async def work(memory: MemoryService) -> None:
        stored = await memory.remember(A, FACT, user_add=True)
        assert stored.claim_id is not None
        await memory.delete(A, stored.claim_id)
        again = await memory.remember(A, variant)
        assert again.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION
        assert list(memory.list_claims(A)) == []

    _run(tmp_path, work)


def test_a_fact_deleted_at_session_scope_is_not_re_saved_at_agent_scope(tmp_path: Path) -> None:
    """R-WRITE-5: the folded identity leaves the scope out, so a session fact the user
    deleted does not come back at agent scope (visible in every session)."""

    async def work(memory: MemoryService) -> None:
        stored = await memory.remember(A, FACT, scope=Scope.session("s1"), user_add=True)
        assert stored.claim_id is not None
        await memory.delete(A, stored.claim_id)
        for scope in (Scope.agent(), Scope.session("s2"), Scope.session("s1")):
            again = await memory.remember(A, FACT, scope=scope)
            assert again.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION, scope
        assert list(memory.list_claims(A)) == []

    _run(tmp_path, work)


def test_only_the_users_explicit_add_releases_the_folded_identity(tmp_path: Path) -> None:
    """R-WRITE-5: the user's add of a re-spelling releases the tombstone; afterwards the
    model may store the fact again (it is then a duplicate or a new row, never suppressed)."""

    async def work(memory: MemoryService) -> None:
        stored = await memory.remember(A, FACT, user_add=True)
        assert stored.claim_id is not None
        await memory.delete(A, stored.claim_id)
        readded = await memory.remember(A, RESPELT[0], user_add=True)
        assert readded.status is RememberStatus.STORED
        assert readded.released_tombstones >= 1
        later = await memory.remember(A, RESPELT[1])
        assert later.status is not RememberStatus.REQUIRES_USER_REAUTHORIZATION

    _run(tmp_path, work)


def test_another_owner_and_a_different_fact_are_not_suppressed(tmp_path: Path) -> None:
    """R-FORGET-1, R-PRIV-2: the identity is per owner, and a fact that reads differently
    is independent."""

    async def work(memory: MemoryService) -> None:
        stored = await memory.remember(A, FACT, user_add=True)
        assert stored.claim_id is not None
        await memory.delete(A, stored.claim_id)
        other = await memory.remember("agent-b", RESPELT[0])
        assert other.status is RememberStatus.STORED
        different = await memory.remember(A, "The user's sister lives in Lisbon.")
        assert different.status is RememberStatus.STORED

    _run(tmp_path, work)


def test_folded_content_is_what_reads_alike() -> None:
    """R-FORGET-1: the folding the identity hashes."""
    assert {provenance.folded_content(variant) for variant in [FACT, *RESPELT]} == {
        "the user s sister lives in porto"
    }
    assert provenance.folded_content("...") == ""
