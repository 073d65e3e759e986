"""The facade's view of stored claims: get, list, update, history (R-HOST-1, R-LINEAGE-1,
R-STORE-3, R-FORGET-2), on the embedded stores."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from memory_world import make_memory

from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimKind
from memory_core.domain.errors import NotFound, RevisionConflict, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import DerivationKind
from memory_core.services.memory import ClaimStatus, MemoryService

A, B = "owner", "other"


def run_with(
    tmp_path: Path,
    work: Callable[[MemoryService], Awaitable[None]],
    clock: ManualClock | None = None,
) -> None:
    async def go() -> None:
        memory = make_memory(tmp_path, clock or ManualClock())
        try:
            await work(memory)
        finally:
            await memory.aclose()

    asyncio.run(go())


async def _stored(memory: MemoryService, text: str, **kwargs: Any) -> str:
    result = await memory.remember(A, text, **kwargs)
    assert result.claim_id is not None
    return result.claim_id


def test_get_is_the_owners_and_any_lifecycle(tmp_path: Path) -> None:
    """R-STORE-3, R-FORGET-2: an archived claim is still got; another owner's id is NotFound."""

    async def work(memory: MemoryService) -> None:
        claim_id = await _stored(memory, "The user keeps bees on the roof.")
        await memory.forget(A, claim_id)
        assert (await memory.get(A, claim_id)).lifecycle.value == "archived"
        with pytest.raises(NotFound):
            await memory.get(B, claim_id)

    run_with(tmp_path, work)


def test_list_pages_newest_first_without_gaps_or_repeats(tmp_path: Path) -> None:
    """R-HOST-1: `next_after` continues a listing; the last page has none."""

    async def work(memory: MemoryService) -> None:
        ids = [await _stored(memory, f"Garden fact number {i} about tulips.") for i in range(7)]
        seen: list[str] = []
        page = await memory.list(A, limit=3)
        pages = 1
        while page.next_after is not None:
            seen += [claim.id for claim in page.claims]
            page = await memory.list(A, limit=3, after=page.next_after)
            pages += 1
        seen += [claim.id for claim in page.claims]
        assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen))
        assert pages == 3

    run_with(tmp_path, work)


def test_list_filters_by_kind_status_and_scope(tmp_path: Path) -> None:
    """R-SCOPE-1 (a management view sees every scope unless narrowed), R-FORGET-2."""

    async def work(memory: MemoryService) -> None:
        fact = await _stored(memory, "The user speaks Portuguese.")
        event = await _stored(memory, "The user moved flat in March.", kind=ClaimKind.EPISODIC)
        mine = await _stored(memory, "The user's desk is by the window.", scope=Scope.user("u1"))
        gone = await _stored(memory, "The user once owned a ferret.")
        await memory.forget(A, gone)

        def ids(page: Any) -> set[str]:
            return {claim.id for claim in page.claims}

        assert ids(await memory.list(A)) == {fact, event, mine}
        assert ids(await memory.list(A, kinds=[ClaimKind.EPISODIC])) == {event}
        assert ids(await memory.list(A, kinds=["semantic"], statuses=["archived"])) == {gone}
        everything = {ClaimStatus.ACTIVE, ClaimStatus.ARCHIVED}
        assert ids(await memory.list(A, statuses=everything)) == {fact, event, mine, gone}
        assert ids(await memory.list(A, scope=Scope.user("u1"))) == {mine}
        assert ids(await memory.list(A, scope=ScopeFilter.agent_only())) == {fact, event}
        assert ids(await memory.list(B)) == set()

    run_with(tmp_path, work)


def test_a_filtered_listing_reads_a_bounded_number_of_rows_per_call(tmp_path: Path) -> None:
    """A rare kind does not turn one call into a scan of the table: the short page still
    carries a cursor, and following it finds the match."""

    async def work(memory: MemoryService) -> None:
        rare = await _stored(memory, "The user broke a wrist in 2019.", kind=ClaimKind.EPISODIC)
        for i in range(25):
            await _stored(memory, f"Semantic filler fact {i} about maple trees.")
        page = await memory.list(A, kinds=[ClaimKind.EPISODIC], limit=2)
        found = list(page.claims)
        while not found and page.next_after is not None:
            page = await memory.list(A, kinds=[ClaimKind.EPISODIC], limit=2, after=page.next_after)
            found += page.claims
        assert [claim.id for claim in found] == [rare]

    run_with(tmp_path, work)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m: m.list(A, kinds=["nope"]), "kinds"),
        (lambda m: m.list(A, kinds="semantic"), "kinds"),
        (lambda m: m.list(A, statuses=["gone"]), "statuses"),
        (lambda m: m.list(A, scope="user:u1"), "scope"),
        (lambda m: m.list(A, limit=0), "limit"),
        (lambda m: m.list(A, after=" x"), "after"),
        (lambda m: m.update(A, "c-1", "  "), "content"),
        (lambda m: m.update(A, "c-1", "text", expected_revision=0), "expected_revision"),
        (lambda m: m.history("bad id", "c-1"), "agent_id"),
    ],
)
def test_bad_arguments_are_refused_naming_the_field(
    tmp_path: Path, call: Callable[[MemoryService], Awaitable[object]], field: str
) -> None:
    """R-DOM-4: a typed error at the boundary, naming what is wrong."""

    async def work(memory: MemoryService) -> None:
        with pytest.raises(ValidationError) as caught:
            await call(memory)
        assert caught.value.field == field

    run_with(tmp_path, work)


def test_update_rewords_in_place_or_supersedes_with_a_manual_edit_edge(tmp_path: Path) -> None:
    """R-LINEAGE-1: a new fact supersedes the old row with a `manual_edit` edge that
    `history` shows from either end; the old text leaves recall, the new one is found."""

    async def work(memory: MemoryService) -> None:
        old = await _stored(memory, "The user lives in Porto.")
        edited = await memory.update(A, old, "The user lives in Braga.")
        assert edited.id != old and edited.content == "The user lives in Braga."
        assert (await memory.get(A, old)).superseded_by == edited.id
        for end in (old, edited.id):
            history = await memory.history(A, end)
            assert [(d.parent_id, d.child_id, d.kind) for d in history.derivations] == [
                (old, edited.id, DerivationKind.MANUAL_EDIT)
            ]
        found = await memory.recall(A, "where does the user live")
        assert [item.claim.id for item in found.items] == [edited.id]
        with pytest.raises(RevisionConflict):
            await memory.update(A, edited.id, "The user lives in Faro.", expected_revision=9)

    run_with(tmp_path, work)


def test_history_follows_a_chain_of_edits(tmp_path: Path) -> None:
    """R-LINEAGE-1: Porto → Braga → Faro: the first claim's history holds both edges,
    oldest first."""
    clock = ManualClock()

    async def work(memory: MemoryService) -> None:
        first = await _stored(memory, "The user lives in Porto.")
        second = await memory.update(A, first, "The user lives in Braga.")
        clock.advance(60)
        third = await memory.update(A, second.id, "The user lives in Faro.")
        history = await memory.history(A, first)
        assert history.claim is not None and history.claim.id == first
        assert [(d.parent_id, d.child_id) for d in history.derivations] == [
            (first, second.id),
            (second.id, third.id),
        ]
        assert not history.truncated

    run_with(tmp_path, work, clock)


def test_history_outlives_a_deleted_claim_but_not_a_foreign_id(tmp_path: Path) -> None:
    """R-LINEAGE-1 (edges outlive their endpoints), R-PRIV-2 (a foreign id is NotFound)."""

    async def work(memory: MemoryService) -> None:
        first = await _stored(memory, "The user drinks oat milk.")
        second = await memory.update(A, first, "The user drinks soy milk.")
        await memory.delete(A, first)
        history = await memory.history(A, first)
        assert history.claim is None
        assert [d.child_id for d in history.derivations] == [second.id]
        with pytest.raises(NotFound):
            await memory.history(B, first)
        lonely = await _stored(memory, "The user hums while cooking.")
        assert (await memory.history(A, lonely)).derivations == ()

    run_with(tmp_path, work)


def test_history_carries_the_audit_refs_of_its_lineage_and_no_content(tmp_path: Path) -> None:
    """R-LINEAGE-1, R-ARCH-6: the add, the manual edit and the delete are in the history's
    audit, as ids and counts; neither text appears anywhere in it."""

    async def work(memory: MemoryService) -> None:
        # A user's add is audited (the model's tool writes are not: they are not the user's).
        old = await _stored(memory, "The user collects Hungarian stamps.", user_add=True)
        new = await memory.update(A, old, "The user collects Estonian coins.")
        await memory.delete(A, new.id)
        history = await memory.history(A, old)
        events = [(event.event, event.memory_id) for event in history.audit]
        assert events == [
            ("memory/add", old),
            ("memory/add", new.id),
            ("memory/manual_edit", old),
            ("memory/delete", new.id),
        ]
        (edit,) = [event for event in history.audit if event.event == "memory/manual_edit"]
        assert edit.refs == {"successor_id": new.id} and edit.actor == "user"
        refs = repr([event.refs for event in history.audit])
        assert "Hungarian" not in refs and "Estonian" not in refs

    run_with(tmp_path, work)
