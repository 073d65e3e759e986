"""Cross-agent isolation of the apsw store (R-PRIV-2, R-STORE-3): two agents holding the
very same texts; everything one does — forget, archive, edit, supersede, directives, clear,
retirement — leaves the other's rows, index hits, directives and tombstones unchanged."""

from __future__ import annotations

import asyncio

import apsw
from clear_support import run_clear

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.ports.claims import InsertStatus

A, B = "agent-a", "agent-b"
TEXTS = [f"shared memory number {i} about the lake house" for i in range(8)]
EVERYTHING = ScopeFilter.from_context(ScopeContext(session_id="s1", user_id="u1"))


def _seed(store: ApswClaimStore, clock: ManualClock, agent: str) -> list[str]:
    scopes = [Scope.agent(), Scope.session("s1"), Scope.user("u1")]
    drafts = [
        ClaimDraft(agent_id=agent, kind="semantic", content=text, scope=scopes[i % 3])
        for i, text in enumerate(TEXTS)
    ]
    outcomes = store.insert_many(drafts, origin=WriteOrigin.EXTRACTION, now=clock.now())
    store.create_directive(agent, DirectiveKind.INSTRUCTION, "Keep it short", now=clock.now())
    return [o.claim.id for o in outcomes if o.claim is not None]


def _snapshot(store: ApswClaimStore, raw: apsw.Connection, agent: str) -> tuple[object, ...]:
    return (
        store.list_claims(agent, include_inactive=True, limit=1_000),
        [h.claim_id for h in store.search_fts(agent, ["lake"], scope_filter=EVERYTHING, limit=50)],
        store.list_directives(agent),
        raw.execute(
            "SELECT identity_kind, identity_hash FROM agent_memory_tombstone WHERE agent_id = ?"
            " ORDER BY 1, 2",
            (agent,),
        ).fetchall(),
    )


def test_one_agents_every_operation_leaves_the_other_untouched(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-PRIV-2: no operation of A reads or changes anything of B, even for identical text."""
    a_ids = _seed(store, clock, A)
    b_ids = _seed(store, clock, B)
    assert not set(a_ids) & set(b_ids)
    baseline = _snapshot(store, raw, B)
    now = clock.now()
    store.delete(A, a_ids[0], now=now)
    store.archive(A, a_ids[1], now=now)
    store.update_content(A, a_ids[2], expected_revision=1, content="edited by A", now=now)
    store.supersede(
        A,
        a_ids[3],
        ClaimDraft(agent_id=A, kind="semantic", content="A's successor"),
        expected_revision=1,
        now=now,
    )
    store.record_access(A, a_ids + b_ids, now=now)
    suppressed = store.insert(
        ClaimDraft(agent_id=A, kind="semantic", content=TEXTS[0]),
        origin=WriteOrigin.MODEL_TOOL,
        now=now,
    )
    assert suppressed.status is InsertStatus.SUPPRESSED
    assert _snapshot(store, raw, B) == baseline
    store.begin_clear(A, now=now)
    assert _snapshot(store, raw, B) == baseline  # A's fence is not B's
    asyncio.run(run_clear(store, A, now=now))
    assert _snapshot(store, raw, B) == baseline
    store.retire_agent(A)
    assert _snapshot(store, raw, B) == baseline
    assert store.list_claims(A, include_inactive=True) == [] and store.list_directives(A) == []
    replay = store.insert(
        ClaimDraft(agent_id=B, kind="semantic", content=TEXTS[0]),
        origin=WriteOrigin.EXTRACTION,
        now=now,
    )
    assert replay.status is InsertStatus.DUPLICATE and replay.claim is not None
    assert replay.claim.id == b_ids[0]
