"""What PostgreSQL keeps of a forgotten claim, measured on the server's own files (R-PRIV-3).

PostgreSQL is MVCC: a DELETE leaves the row's bytes in the table page, and the INSERT's
record stays in the WAL, until something rewrites them. These tests pin down, byte scan by
byte scan over the data directory, which step removes which copy — the facts
docs/scale-out.md states. Content here is short and so stored uncompressed: a byte scan can
only vouch for text PostgreSQL did not pglz-compress (long, repetitive values it does).
Row layout matters (VACUUM compacts a page by moving later rows over freed space), so each
test fixes where the forgotten row sits in its page.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import psycopg

from memory_adapters.postgres_store import PostgresClaimStore
from memory_adapters.postgres_store.testing import ThrowawayServer
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin


def _holding(root: Path, needle: bytes) -> set[str]:
    """Every file under `root` containing `needle`, as paths relative to it."""
    return {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and needle in path.read_bytes()
    }


def _tables(found: set[str]) -> set[str]:
    return {name for name in found if name.startswith("base/")}


def _store_with(
    store: PostgresClaimStore, clock: ManualClock, text: str, *, later_rows: int
) -> str:
    """Five rows, then `text`, then `later_rows` more rows — with `later_rows` ≤ 20 all in
    the table's first page; the id of `text`'s claim."""

    def rows(label: str, count: int) -> list[ClaimDraft]:
        return [
            ClaimDraft(agent_id="a", kind="semantic", content=f"{label} fact {i} about tea")
            for i in range(count)
        ]

    store.insert_many(rows("early", 5), origin=WriteOrigin.EXTRACTION, now=clock.now())
    outcome = store.insert(
        ClaimDraft(agent_id="a", kind="semantic", content=f"The plan is {text} tomorrow"),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )
    assert outcome.claim is not None
    if later_rows:
        store.insert_many(rows("later", later_rows), origin=WriteOrigin.EXTRACTION, now=clock.now())
    return outcome.claim.id


def _retire_wal(admin: psycopg.Connection) -> None:
    # Two segment switches and checkpoints move the redo point past the old segment, which
    # is then deleted (the embedded server runs with wal_recycle=off).
    for _ in range(2):
        admin.execute("SELECT pg_switch_wal()")
        admin.execute("CHECKPOINT")


def _last_in_its_page(admin: psycopg.Connection, schema: str, claim_id: str) -> bool:
    """Whether the claim's row is the last one stored in its page (and not alone there)."""
    row = admin.execute(
        f"""SELECT (m.ctid::text::point)[1] = max((o.ctid::text::point)[1]), count(*) > 1
            FROM {schema}.agent_memory m JOIN {schema}.agent_memory o
              ON (o.ctid::text::point)[0] = (m.ctid::text::point)[0]
            WHERE m.id = %s GROUP BY m.ctid""",
        (claim_id,),
    ).fetchone()
    assert row is not None
    return bool(row[0] and row[1])


def _marker() -> str:
    return "FORGETMARK" + secrets.token_hex(6).upper()


def test_vacuum_after_delete_scrubs_a_row_that_later_rows_are_compacted_over(
    postgres: ThrowawayServer,
    open_claims: Callable[..., PostgresClaimStore],
    clock: ManualClock,
) -> None:
    """R-PRIV-3, R-FORGET-1 (PostgreSQL): with rows stored after it in its page, `delete`
    (which runs VACUUM) plus a checkpoint leave the text in no table file; the WAL keeps it
    until its segment is retired, then no file of the data directory holds it."""
    data, marker = postgres.server.data_dir, _marker()
    store = open_claims()
    claim_id = _store_with(store, clock, marker, later_rows=5)
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        assert not _last_in_its_page(admin, store.schema, claim_id)
        admin.execute("CHECKPOINT")
        before = _holding(data, marker.encode())
        assert _tables(before) and before - _tables(before), before  # the scan sees both

        store.delete("a", claim_id, now=clock.now())
        admin.execute("CHECKPOINT")
        after = _holding(data, marker.encode())
        assert not _tables(after), after
        assert after, "the WAL still holds the INSERT record until its segment retires"

        _retire_wal(admin)
        assert _holding(data, marker.encode()) == set()


def test_vacuum_leaves_the_last_row_of_a_page_in_free_space_until_a_rewrite(
    postgres: ThrowawayServer,
    open_claims: Callable[..., PostgresClaimStore],
    clock: ManualClock,
) -> None:
    """R-PRIV-3 (PostgreSQL limitation, measured): VACUUM does not zero freed space, so the
    last row stored in its page survives there; `compact(rewrite=True)` (VACUUM FULL) and a
    retired WAL leave it in no file."""
    data, marker = postgres.server.data_dir, _marker()
    store = open_claims()
    claim_id = _store_with(store, clock, marker, later_rows=0)
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        assert _last_in_its_page(admin, store.schema, claim_id)
        store.delete("a", claim_id, now=clock.now())
        _retire_wal(admin)
        assert _tables(_holding(data, marker.encode()))  # still in the page's free space

        store.compact(rewrite=True)
        _retire_wal(admin)
        assert _holding(data, marker.encode()) == set()


def test_without_vacuum_the_deleted_row_stays_in_the_table_file(
    postgres: ThrowawayServer,
    open_claims: Callable[..., PostgresClaimStore],
    clock: ManualClock,
) -> None:
    """R-PRIV-3 negative control: without VACUUM even a row with later rows in its page
    keeps its bytes in the table file across checkpoints."""
    data, marker = postgres.server.data_dir, _marker()
    store = open_claims(vacuum_after_forget=False)
    claim_id = _store_with(store, clock, marker, later_rows=5)
    store.delete("a", claim_id, now=clock.now())
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:
        _retire_wal(admin)
    assert _tables(_holding(data, marker.encode()))


def test_the_trigram_index_keeps_fragments_until_compact_rebuilds_it(
    postgres: ThrowawayServer,
    open_claims: Callable[..., PostgresClaimStore],
    clock: ManualClock,
) -> None:
    """R-PRIV-3 (PostgreSQL): the GIN index keeps the 3-character keys of deleted text
    through VACUUM; `compact()` rebuilds it without them, concurrently."""
    data, word = postgres.server.data_dir, "zqxjkvwyqz"  # trigrams no other row shares
    # gin_trgm_ops stores an ASCII trigram as an int4: little-endian, its bytes reversed + 0.
    keys = [word[i : i + 3][::-1].encode() + b"\0" for i in range(len(word) - 2)]
    store = open_claims()
    claim_id = _store_with(store, clock, word, later_rows=0)
    with psycopg.connect(postgres.dsn, autocommit=True) as admin:

        def index_file() -> bytes:
            row = admin.execute(
                "SELECT pg_relation_filepath(%s)", (f"{store.schema}.agent_memory_trigram",)
            ).fetchone()
            assert row is not None
            admin.execute("CHECKPOINT")
            return (data / row[0]).read_bytes()

        assert all(key in index_file() for key in keys)
        store.delete("a", claim_id, now=clock.now())
        assert all(key in index_file() for key in keys)  # VACUUM leaves GIN keys
        store.compact()
        assert not any(key in index_file() for key in keys)
