"""The PostgreSQL claim store beyond its contract: writers of one agent serialise across store
objects, the clear guard is a trigger, repair, search details, schemas as deployments, and
migrations that refuse a newer schema."""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import pytest

from memory_adapters.postgres_store import ConnectionSettings, PostgresClaimStore
from memory_adapters.postgres_store.claim_schema import scope_valid
from memory_adapters.postgres_store.dialect import POSTGRES, PostgresDialect
from memory_adapters.postgres_store.errors import SCOPE_CONSTRAINT, translate_errors
from memory_adapters.postgres_store.testing import ThrowawayServer
from memory_adapters.sql_claims import Session, reads
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, Lifecycle, WriteOrigin
from memory_core.domain.errors import ClearInProgress, StoreError, ValidationError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.ports.claims import InsertStatus, RepairReport

Opener = Callable[..., PostgresClaimStore]
AGENT_ONLY = ScopeFilter.agent_only()


def _draft(content: str, agent: str = "a", **fields: object) -> ClaimDraft:
    return ClaimDraft(agent_id=agent, kind="semantic", content=content, **fields)  # type: ignore[arg-type]


def test_concurrent_writers_of_one_agent_store_a_text_once(
    open_claims: Opener, clock: ManualClock
) -> None:
    """R-WRITE-4, R-BEYOND-4: store objects (as in separate processes) racing to insert the
    same text for one agent produce one row; the owner's advisory lock serialises them."""
    stores = [open_claims() for _ in range(4)]
    outcomes: list[InsertStatus] = []
    barrier = threading.Barrier(len(stores))

    def write(store: PostgresClaimStore) -> None:
        barrier.wait()
        for i in range(10):
            outcome = store.insert(
                _draft(f"shared fact {i}"), origin=WriteOrigin.EXTRACTION, now=clock.now()
            )
            outcomes.append(outcome.status)

    threads = [threading.Thread(target=write, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(InsertStatus.INSERTED) == 10
    assert outcomes.count(InsertStatus.DUPLICATE) == 30
    assert len(stores[0].list_claims("a")) == 10


def test_the_clear_guard_refuses_a_raw_writer_with_a_typed_error(
    open_claims: Opener, settings: ConnectionSettings, clock: ManualClock
) -> None:
    """R-FORGET-3: while a clear job exists the trigger refuses INSERT and UPDATE of the
    agent's claims from any session — not only through this store."""
    store = open_claims()
    claim = store.insert(
        _draft("kept until cleared"), origin=WriteOrigin.USER_ADD, now=clock.now()
    ).claim
    assert claim is not None
    store.begin_clear("a", now=clock.now())
    with psycopg.connect(settings.dsn, autocommit=True) as raw:
        raw.execute(f"SET search_path TO {settings.schema}")
        with pytest.raises(ClearInProgress), translate_errors():
            raw.execute("UPDATE agent_memory SET importance = 0.9 WHERE agent_id = 'a'")
        with pytest.raises(ClearInProgress), translate_errors():
            raw.execute(
                """INSERT INTO agent_memory (agent_id, id, kind, content, canonical_content,
                     created_at, updated_at) VALUES ('a', 'mem-raw', 'semantic', 'x', 'x',
                     now(), now())"""
            )


def test_repair_archives_a_claim_whose_time_zone_this_python_does_not_know(
    open_claims: Opener, settings: ConnectionSettings, clock: ManualClock
) -> None:
    """R-TIME-4: what the CHECK constraints cannot judge — an unknown IANA zone written by a
    raw writer — is normalised and the claim archived, never kept as a live fact."""
    store = open_claims()
    temporal = TemporalMetadata(
        kind="state",  # type: ignore[arg-type]
        interval=Interval(valid_from=clock.now()),
        precision="day",  # type: ignore[arg-type]
        timezone="Europe/Berlin",
        confidence=0.9,
    )
    bad = store.insert(
        _draft("moved flats", temporal=temporal), origin=WriteOrigin.EXTRACTION, now=clock.now()
    ).claim
    good = store.insert(_draft("likes tea"), origin=WriteOrigin.EXTRACTION, now=clock.now()).claim
    assert bad is not None and good is not None
    with psycopg.connect(settings.dsn, autocommit=True) as raw:
        raw.execute(
            f"UPDATE {settings.schema}.agent_memory SET temporal_timezone = 'Mars/Olympus_Mons'"
            " WHERE id = %s",
            (bad.id,),
        )
    report = store.repair(now=clock.now())
    assert (report.temporal_archived, report.sample_ids) == (1, (bad.id,))
    repaired = store.get("a", bad.id)
    assert repaired.lifecycle is Lifecycle.ARCHIVED and repaired.temporal.timezone == "UTC"
    assert store.get("a", good.id) == good
    assert store.repair(now=clock.now()).temporal_archived == 0


def test_repair_reads_no_row_unless_marked_and_then_fixes_what_a_raw_writer_broke(
    open_claims: Opener,
    settings: ConnectionSettings,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R-SCOPE-4, issue 15: a clean start's repair does not even ask for the probe of
    broken rows; a raw writer that lets a broken scope in behind a NOT VALID constraint
    marks the store, and the next repair fixes the row from its shadow and clears the mark."""
    store = open_claims()
    store.repair(now=clock.now())  # a fresh schema: nothing marked, nothing to do
    claim = store.insert(
        _draft("the user's note", scope=Scope.user("u1")),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    ).claim
    assert claim is not None
    probes: list[object] = []
    real_probe = PostgresDialect.repair_probe
    monkeypatch.setattr(
        PostgresDialect,
        "repair_probe",
        lambda self, session: probes.append(session) or real_probe(self, session),
    )
    assert store.repair(now=clock.now()) == RepairReport() and probes == []
    with psycopg.connect(settings.dsn, autocommit=True) as raw, raw.transaction():
        raw.execute(f"SET search_path TO {settings.schema}")
        raw.execute(f"ALTER TABLE agent_memory DROP CONSTRAINT {SCOPE_CONSTRAINT}")
        raw.execute("UPDATE agent_memory SET scope_id = NULL WHERE id = %s", (claim.id,))
        raw.execute(
            f"ALTER TABLE agent_memory ADD CONSTRAINT {SCOPE_CONSTRAINT}"
            f" CHECK ({scope_valid()}) NOT VALID"
        )
        raw.execute("INSERT INTO agent_memory_repair_mark (reason) VALUES ('requested')")
    report = store.repair(now=clock.now())
    assert (report.scope_fixed, report.sample_ids) == (1, (claim.id,)) and len(probes) == 1
    assert store.get("a", claim.id).scope == Scope.user("u1")
    assert store.repair(now=clock.now()) == RepairReport() and len(probes) == 1


def test_search_matches_substrings_in_any_script_case_insensitively(
    open_claims: Opener, settings: ConnectionSettings, clock: ManualClock
) -> None:
    """R-READ-3: substring matching for every script (CJK without a word breaker), Unicode
    case folding, and the trigram index with the owner inside it is in place."""
    store = open_claims()
    ids = {
        text: store.insert(_draft(text), origin=WriteOrigin.EXTRACTION, now=clock.now()).claim.id  # type: ignore[union-attr]
        for text in ("下个月去北京出差", "Ärger mit dem Vermieter", "Writes services in Go")
    }

    def found(*terms: str) -> list[str]:
        return [
            hit.claim_id
            for hit in store.search_fts("a", list(terms), scope_filter=AGENT_ONLY, limit=5)
        ]

    assert found("北京出差") == [ids["下个月去北京出差"]]
    assert found("ärger") == [ids["Ärger mit dem Vermieter"]]
    assert found("SERVICE") == [ids["Writes services in Go"]]
    assert store.extensions.has("pg_trgm")
    with psycopg.connect(settings.dsn) as raw:
        (fts_index,) = raw.execute(
            f"SELECT value FROM {store.schema}.agent_memory_meta WHERE key = 'fts_index'"
        ).fetchone()  # type: ignore[misc]
    assert fts_index == "trgm+owner"


def test_more_term_matches_rank_first(open_claims: Opener, clock: ManualClock) -> None:
    """R-READ-8: BM25 over substring matches — a row matching both rare terms outranks rows
    matching one; lexical hits precede short-term fallback hits."""
    store = open_claims()
    both = store.insert(
        _draft("oolong tea in Kyoto"), origin=WriteOrigin.EXTRACTION, now=clock.now()
    ).claim
    one = store.insert(
        _draft("green tea in Osaka"), origin=WriteOrigin.EXTRACTION, now=clock.now()
    ).claim
    store.insert(_draft("ramen in Kyoto station"), origin=WriteOrigin.EXTRACTION, now=clock.now())
    assert both is not None and one is not None
    hits = store.search_fts("a", ["oolong", "Kyoto", "in"], scope_filter=AGENT_ONLY, limit=5)
    assert hits[0].claim_id == both.id
    assert all(hit.rank < 0 for hit in hits if hit.claim_id == both.id)
    assert sorted(hit.rank for hit in hits) == [hit.rank for hit in hits]


def test_schemas_are_independent_deployments(
    postgres: ThrowawayServer, open_claims: Opener, clock: ManualClock
) -> None:
    """R-PRIV-2, R-STORE-3: two schemas in one database share nothing, even agent ids."""
    first = open_claims()
    second = open_claims(settings=postgres.settings())
    first.insert(
        _draft("only in the first deployment"), origin=WriteOrigin.EXTRACTION, now=clock.now()
    )
    assert second.list_claims("a") == []
    assert second.search_fts("a", ["deployment"], scope_filter=AGENT_ONLY, limit=5) == []


def test_a_schema_newer_than_the_code_is_refused(
    open_claims: Opener, settings: ConnectionSettings
) -> None:
    """R-STORE-1: migrations never guess at a newer schema."""
    open_claims()
    with psycopg.connect(settings.dsn, autocommit=True) as raw:
        raw.execute(
            f"INSERT INTO {settings.schema}.agent_memory_schema"
            " VALUES ('claims', 99, 'future', now())"
        )
    with pytest.raises(StoreError, match="newer than this code"):
        open_claims()


def test_a_schema_name_must_be_a_plain_identifier(postgres: ThrowawayServer) -> None:
    """The schema is interpolated into DDL: anything but [a-z_][a-z0-9_]* is refused."""
    with pytest.raises(ValidationError):
        ConnectionSettings(dsn=postgres.dsn, schema='x"; DROP TABLE y; --')


def test_session_scoped_rows_need_their_session(open_claims: Opener, clock: ManualClock) -> None:
    """R-SCOPE-1 on the lexical path: a session row is found only with its session."""
    store = open_claims()
    row = store.insert(
        _draft("debugging notes", scope=Scope.session("s1")),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    ).claim
    assert row is not None
    assert store.search_fts("a", ["debugging"], scope_filter=AGENT_ONLY, limit=5) == []
    with_session = ScopeFilter(scopes=(Scope.agent(), Scope.session("s1")))
    assert [
        h.claim_id for h in store.search_fts("a", ["debugging"], scope_filter=with_session, limit=5)
    ] == [row.id]


class _Recording:
    """A connection stand-in that records the statements a read module sends."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.statements: list[tuple[str, object]] = []

    def execute(self, sql: str, params: object = None) -> psycopg.Cursor:
        self.statements.append((sql, params))
        return self.conn.execute(sql, params)  # type: ignore[arg-type]


@pytest.mark.parametrize("scope", [Scope.agent(), Scope.session("s1")])
def test_slot_lookup_is_answered_by_the_live_slot_index(
    open_claims: Opener, clock: ManualClock, scope: Scope
) -> None:
    """R-SCOPE-3, R-BEYOND-4: among thousands of the owner's claims, the slot lookup is an
    index scan of the partial index of live slot holders, not a walk of the owner's rows."""
    store = open_claims()
    store.insert_many(
        [_draft(f"note {i} about the garden", scope=scope) for i in range(3_000)],
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    store.insert(
        _draft("Lives in Paris", slot="user.home_city", scope=scope),
        origin=WriteOrigin.EXTRACTION,
        now=clock.now(),
    )
    conn = store._open()
    conn.execute("ANALYZE agent_memory")
    recording = _Recording(conn)
    session = Session(recording, POSTGRES)  # type: ignore[arg-type]
    found = reads.find_live_by_slot(session, "a", scope, "user.home_city")
    assert found is not None and found.content == "Lives in Paris"
    ((sql, params),) = recording.statements
    plan = [row[0] for row in conn.execute(f"EXPLAIN {sql}", params)]  # type: ignore[arg-type]
    assert any("agent_memory_live_slot" in line for line in plan), "\n".join(plan)
