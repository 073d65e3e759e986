"""Behaviour of the apsw store beyond the port contract: transactional FTS mirror, dirty
generations, audit hygiene, secret redaction, the bounded LIKE fallback, the clear runner."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import apsw
import pytest
from clear_support import run_clear

from memory_adapters.sql_claims import lexical
from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.errors import ClearInProgress
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import MatchMode

A, B = "agent-a", "agent-b"
AGENT_ONLY = ScopeFilter.agent_only()
EXTRACTION = WriteOrigin.EXTRACTION


def _add(store: ApswClaimStore, clock: ManualClock, content: str, **kwargs: object) -> str:
    kwargs.setdefault("agent_id", A)
    kwargs.setdefault("kind", "semantic")
    outcome = store.insert(
        ClaimDraft(content=content, **kwargs), origin=EXTRACTION, now=clock.now()
    )  # type: ignore[arg-type]
    assert outcome.claim is not None
    return outcome.claim.id


def _mirror(raw: apsw.Connection) -> tuple[set[int], set[int]]:
    mirrored = fts.mirror_rowids(raw)
    recallable = {
        r
        for (r,) in raw.execute(
            "SELECT rid FROM agent_memory WHERE lifecycle_state = 'active'"
            " AND superseded_by IS NULL AND kind IN ('episodic', 'semantic', 'reflection')"
        )
    }
    return mirrored, recallable


def test_a_failed_batch_leaves_neither_claims_nor_mirror_entries(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-1, R-WRITE-4: the FTS mirror is written in the claim's own transaction, so a
    batch that fails half-way leaves no claim and no index entry behind."""
    store.begin_clear(B, now=clock.now())
    with pytest.raises(ClearInProgress):
        store.insert_many(
            [
                ClaimDraft(agent_id=A, kind="semantic", content="first of the batch"),
                ClaimDraft(agent_id=B, kind="semantic", content="fenced agent"),
            ],
            origin=EXTRACTION,
            now=clock.now(),
        )
    assert raw.execute("SELECT count(*) FROM agent_memory").fetchone() == (0,)
    assert fts.owner_tables(raw) == []  # not even the table the first row created


def test_a_batch_mirrors_each_owners_new_rows_into_that_owners_table(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-2, R-READ-3: a batch mixing owners, a twin of an earlier draft and a claim
    already stored indexes each inserted row once, in its own owner's table only."""
    stored = _add(store, clock, "already stored before the batch")
    outcomes = store.insert_many(
        [
            ClaimDraft(agent_id=A, kind="semantic", content="owner a likes sailing"),
            ClaimDraft(agent_id=B, kind="episodic", content="owner b went sailing"),
            ClaimDraft(agent_id=A, kind="semantic", content="owner a likes sailing"),
            ClaimDraft(agent_id=A, kind="semantic", content="already stored before the batch"),
            ClaimDraft(agent_id=B, kind="semantic", content="owner b keeps bees"),
        ],
        origin=EXTRACTION,
        now=clock.now(),
    )
    assert [o.status.value for o in outcomes] == [
        "inserted",
        "inserted",
        "duplicate",
        "duplicate",
        "inserted",
    ]
    mirrored, recallable = _mirror(raw)
    assert mirrored == recallable and len(recallable) == 4
    for agent, expected in ((A, 2), (B, 2)):
        rids = {
            r for (r,) in raw.execute("SELECT rid FROM agent_memory WHERE agent_id = ?", (agent,))
        }
        table = {r for (r,) in raw.execute(f"SELECT rowid FROM {fts.owner_table(agent)}")}
        assert table == rids and len(rids) == expected
    hits = store.search_fts(B, ["sailing"], scope_filter=AGENT_ONLY, limit=10)
    assert [h.claim_id for h in hits] == [outcomes[1].claim.id]  # type: ignore[union-attr]
    found = store.search_fts(A, ["stored"], scope_filter=AGENT_ONLY, limit=10)
    assert [h.claim_id for h in found] == [stored]


@pytest.mark.parametrize("size", [1, 63, 64, 65, 130])
@pytest.mark.parametrize("origin", [EXTRACTION, WriteOrigin.USER_ADD])
def test_a_batch_of_any_size_stores_its_new_rows_in_order_with_their_audit(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection, size: int, origin: WriteOrigin
) -> None:
    """R-WRITE-4, R-STORE-2: rows go several to a statement; whatever the batch's size, each
    new draft is stored once, in the batch's order (rowids ascending), as its outcome says,
    indexed, and a user's adds are audited one event per claim in the same order."""
    stored = _add(store, clock, "fact number 5 of the batch")
    drafts = [
        ClaimDraft(agent_id=A, kind="semantic", content=f"fact number {n} of the batch")
        for n in range(size)
    ]
    outcomes = store.insert_many(drafts, origin=origin, now=clock.now())
    inserted = [o.claim.id for o in outcomes if o.status.value == "inserted"]  # type: ignore[union-attr]
    assert len(inserted) == size - (size > 5)  # draft 5 is the row stored before
    in_rowid_order = [
        claim_id
        for (claim_id,) in raw.execute(
            "SELECT id FROM agent_memory WHERE agent_id = ? AND id != ? ORDER BY rid", (A, stored)
        )
    ]
    assert in_rowid_order == inserted
    assert all(store.get(A, o.claim.id) == o.claim for o in outcomes)  # type: ignore[union-attr]
    mirrored, recallable = _mirror(raw)
    assert mirrored == recallable and len(recallable) == len(inserted) + 1
    events = store.list_audit(A, limit=1_000)
    added = [e.memory_id for e in reversed(events) if e.event == "memory/add"]  # newest first
    assert added == (inserted if origin is WriteOrigin.USER_ADD else [])


def test_mirror_follows_every_lifecycle_change_and_rebuilds_identically(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-2: the FTS mirror is a projection: after archive, restore, supersede, edit and
    delete it equals the recallable rows, and dropping and rebuilding it changes no answer."""
    ids = [_add(store, clock, f"garden note {i} about roses and tulips") for i in range(12)]
    store.archive(A, ids[0], now=clock.now())
    store.archive(A, ids[1], now=clock.now())
    store.restore(A, ids[1], now=clock.now())
    store.delete(A, ids[2], now=clock.now())
    store.update_content(
        A, ids[3], expected_revision=1, content="garden note about lilies", now=clock.now()
    )
    store.supersede(
        A,
        ids[4],
        ClaimDraft(agent_id=A, kind="semantic", content="garden note v2 roses"),
        expected_revision=1,
        now=clock.now(),
    )
    _add(store, clock, "garden note in a session", scope=Scope.session("s1"))
    mirrored, recallable = _mirror(raw)
    assert mirrored == recallable and len(recallable) == 11
    queries = [["roses"], ["tulips", "lilies"], ["garden"], ["no"], ["session"]]
    session = ScopeFilter.from_context(ScopeContext(session_id="s1"))
    before = [store.search_fts(A, q, scope_filter=session, limit=20) for q in queries]
    assert store.rebuild_fts() == 11
    after = [store.search_fts(A, q, scope_filter=session, limit=20) for q in queries]
    assert [[h.claim_id for h in hits] for hits in after] == [
        [h.claim_id for h in hits] for hits in before
    ]
    assert _mirror(raw)[0] == recallable


def test_fts_is_named_by_an_owner_hash_never_the_agent_id(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-PRIV-2 (reference §9): the owner's index is named by a hash of the agent id; neither
    the schema nor the index's terms hold the id."""
    _add(store, clock, "some ordinary text", agent_id="Customer-4711")
    table = fts.owner_table("Customer-4711")
    assert fts.owner_tables(raw) == [table]
    schema = " ".join(str(row) for row in raw.execute("SELECT name, sql FROM sqlite_master"))
    assert "4711" not in schema and "customer" not in schema.lower()
    terms = {t for (t,) in raw.execute(f"SELECT term FROM {table}_vocab")}
    assert not {"cus", "ust", "471", "711"} & terms


def test_an_owner_token_collision_never_leaks_another_agents_rows(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-READ-3, R-SCOPE-1, R-PRIV-2: even if every agent's owner hash collided into one FTS
    table, the join on the real agent_id before LIMIT keeps results exact and complete."""
    for module in (fts, fts.mirror, fts.search):  # every name the store reaches it by
        monkeypatch.setattr(
            module, "owner_table", lambda agent_id: "agent_memory_fts_0123456789abcdef"
        )
    store = open_store()
    for i in range(100):
        _add(store, clock, f"salsa salsa salsa lesson {i}", agent_id=B, importance=1.0)
    mine = {_add(store, clock, f"salsa class {i}", importance=0.0) for i in range(2)}
    hits = store.search_fts(A, ["salsa"], scope_filter=AGENT_ONLY, limit=2)
    assert {h.claim_id for h in hits} == mine
    assert (
        not {h.claim_id for h in store.search_fts(B, ["salsa"], scope_filter=AGENT_ONLY, limit=200)}
        & mine
    )


def test_dirty_generations_follow_semantic_and_embedding_changes_only(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-MAINT-1 (reference §7.7): insert seeds generation 1; revision and embedding changes
    and the delete re-dirty it; access bookkeeping does not; internal rows never seed."""

    def seed(claim_id: str) -> tuple[int, int] | None:
        return raw.execute(
            "SELECT generation, claim_revision FROM agent_memory_dirty WHERE memory_id = ?",
            (claim_id,),
        ).fetchone()

    cid = _add(store, clock, "dirty tracking")
    assert seed(cid) == (1, 1)
    store.record_access(A, [cid], now=clock.now())
    assert seed(cid) == (1, 1)
    store.mark_embedding(
        A,
        cid,
        expected_revision=1,
        identity=EmbeddingIdentity(provider="p", model="m", dim=4),
        ready=True,
        now=clock.now(),
    )
    assert seed(cid) == (2, 1)
    store.archive(A, cid, now=clock.now())
    assert seed(cid) == (3, 2)
    store.delete(A, cid, now=clock.now())
    assert seed(cid) == (4, 2)
    persona = _add(store, clock, "persona", kind="persona")
    assert seed(persona) is None


def test_audit_tombstones_and_jobs_never_hold_content(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-ARCH-6, R-FORGET-1: side tables hold ids, hashes, counts — never the text."""
    text = "Confidential appointment with Dr Quill"
    cid = store.insert(
        ClaimDraft(agent_id=A, kind="semantic", content=text),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    ).claim.id  # type: ignore[union-attr]
    store.archive(A, cid, now=clock.now())
    store.restore(A, cid, now=clock.now())
    store.update_content(A, cid, expected_revision=3, content=text + " on Monday", now=clock.now())
    store.create_directive(
        A, DirectiveKind.SUPPRESS_TOPIC, "Skip Dr Quill", topic="Quill", now=clock.now()
    )
    _add(store, clock, "another note")
    asyncio.run(run_clear(store, A, now=clock.now()))
    for table in (
        "agent_memory_audit",
        "agent_memory_tombstone",
        "agent_memory_clear_job",
        "agent_memory_derivation",
        "agent_memory_dirty",
    ):
        dump = " ".join(str(v) for row in raw.execute(f"SELECT * FROM {table}") for v in row)
        assert "Quill" not in dump and "appointment" not in dump, table
    events = [e for (e,) in raw.execute("SELECT event_type FROM agent_memory_audit")]
    expected = {"memory/add", "memory/archive", "memory/restore", "memory/manual_edit"}
    expected |= {"memory/directive_create", "memory/clear_begin", "memory/clear_done"}
    assert expected <= set(events)


def test_audit_retention_prunes_operational_events_and_keeps_lineage(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-1, R-LINEAGE-1: retention drops old housekeeping events only."""
    old = _add(store, clock, "v1")
    store.supersede(
        A,
        old,
        ClaimDraft(agent_id=A, kind="semantic", content="v2"),
        expected_revision=1,
        now=clock.now(),
    )
    raw.execute(
        "INSERT INTO agent_memory_audit (agent_id, event_type, actor_type, status, created_at)"
        " VALUES (?, 'memory/repair', 'system', 'completed', 0), (?, 'memory/delete', 'user',"
        " 'completed', 0)",
        (A, A),
    )
    clock.advance(86_400)
    assert store.prune_audit(older_than=clock.now()) == 1
    kinds = {e for (e,) in raw.execute("SELECT event_type FROM agent_memory_audit")}
    assert "memory/repair" not in kinds and "memory/delete" in kinds
    assert len(store.list_derivations(A, old)) == 1


def test_redacting_policy_stores_and_indexes_only_the_redacted_text(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock
) -> None:
    """R-PRIV-1: in redact mode the secret never reaches the row or the FTS index."""
    store = open_store(secret_policy=PatternSecretPolicy(mode="redact"))
    cid = _add(store, clock, "deploy key sk-abcdefghijklmnop1234567890 for staging")
    assert "sk-abc" not in store.get(A, cid).content
    assert store.search_fts(A, ["abcdefghijkl"], scope_filter=AGENT_ONLY, limit=5) == []
    assert [
        h.claim_id for h in store.search_fts(A, ["staging"], scope_filter=AGENT_ONLY, limit=5)
    ] == [cid]


def test_short_term_fallback_scans_a_bounded_importance_ordered_slice(
    store: ApswClaimStore, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-READ-3: the LIKE fallback is bounded: it inspects only the most important rows."""
    monkeypatch.setattr(lexical, "LIKE_SCAN_LIMIT", 3)
    ranked = [_add(store, clock, f"uses Go daily {i}", importance=i / 10) for i in range(6)]
    hits = store.search_fts(A, ["Go"], scope_filter=AGENT_ONLY, limit=10)
    assert [h.claim_id for h in hits] == ranked[::-1][:3]
    assert (
        store.search_fts(
            A, ["Go", "xx"], scope_filter=AGENT_ONLY, limit=10, match_mode=MatchMode.ALL
        )
        == []
    )


def test_supersede_never_closes_a_state_that_has_not_started(
    store: ApswClaimStore, clock: ManualClock
) -> None:
    """R-TIME-1: closing at `now` would make an empty interval; a future state keeps its own."""
    from datetime import timedelta

    from memory_core.domain.temporal import Interval, TemporalMetadata

    future = TemporalMetadata(
        kind="state",
        interval=Interval(valid_from=clock.now() + timedelta(days=2)),  # type: ignore[arg-type]
        precision="day",
        timezone="UTC",
        confidence=0.9,  # type: ignore[arg-type]
    )
    old = _add(store, clock, "Will live in Oslo", temporal=future)
    store.supersede(
        A,
        old,
        ClaimDraft(agent_id=A, kind="semantic", content="Will live in Bergen"),
        expected_revision=1,
        now=clock.now(),
    )
    assert store.get(A, old).temporal == future


def test_startup_repair_rebuilds_a_mirror_that_a_raw_writer_bypassed(
    store: ApswClaimStore, clock: ManualClock, raw: apsw.Connection
) -> None:
    """R-STORE-2: a row written behind the store's back (valid, but not indexed) makes the
    mirror disagree with the claims; once the writer marks the store for repair, startup
    repair notices and rebuilds it (unmarked, it does not look)."""
    _add(store, clock, "indexed through the store")
    raw.execute(
        "INSERT INTO agent_memory (id, agent_id, kind, content, canonical_content, created_at,"
        " updated_at) VALUES ('mem-raw', ?, 'semantic', 'imported by hand', 'imported by hand',"
        " 0, 0)",
        (A,),
    )
    assert store.search_fts(A, ["imported"], scope_filter=AGENT_ONLY, limit=5) == []
    assert not store.repair(now=clock.now()).fts_rebuilt
    store.request_repair()
    report = store.repair(now=clock.now())
    assert report.fts_rebuilt and report.scope_fixed == report.temporal_archived == 0
    hits = store.search_fts(A, ["imported"], scope_filter=AGENT_ONLY, limit=5)
    assert [h.claim_id for h in hits] == ["mem-raw"]
    store.request_repair()
    assert not store.repair(now=clock.now()).fts_rebuilt  # consistent now: nothing to do
