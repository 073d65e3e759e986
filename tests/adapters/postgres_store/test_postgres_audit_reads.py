"""The audit trail read back on PostgreSQL (`AuditReader`, a claim's history): the refs come
out of `jsonb` as the same mapping SQLite's JSON text gives, newest first, owner-scoped."""

from __future__ import annotations

from collections.abc import Callable

from memory_adapters.postgres_store import PostgresClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.ports.claims.audit import AuditReader


def test_a_claims_audit_events_read_back_newest_first_for_their_owner_only(
    open_claims: Callable[..., PostgresClaimStore], clock: ManualClock
) -> None:
    """R-LINEAGE-1, R-STORE-3: add, manual edit, delete; another owner sees none of them."""
    store = open_claims()
    assert isinstance(store, AuditReader)
    draft = ClaimDraft(agent_id="a", kind="semantic", content="The user keeps koi.")
    old = store.insert(draft, origin=WriteOrigin.USER_ADD, now=clock.now()).claim
    assert old is not None
    clock.advance(1)
    new = store.update_content(
        "a", old.id, expected_revision=old.revision, content="The user keeps carp.", now=clock.now()
    )
    clock.advance(1)
    store.delete("a", new.id, now=clock.now())

    events = list(reversed(store.list_audit("a", memory_ids=[old.id, new.id], limit=10)))

    assert [(e.event, e.memory_id) for e in events] == [
        ("memory/add", old.id),
        ("memory/add", new.id),
        ("memory/manual_edit", old.id),
        ("memory/delete", new.id),
    ]
    assert events[2].refs == {"successor_id": new.id}
    assert [e.created_at for e in events] == sorted(e.created_at for e in events)
    assert store.list_audit("b", memory_ids=[old.id, new.id], limit=10) == []
    # Without ids: the agent's whole trail, newest first (the operator's `agent-memory audit`).
    assert [e.event for e in store.list_audit("a", limit=2)] == [
        "memory/delete",
        "memory/manual_edit",
    ]
    assert [e.event for e in store.list_audit("a", memory_ids=[new.id], limit=1)] == [
        "memory/delete"
    ]
