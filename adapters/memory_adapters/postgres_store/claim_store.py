"""`PostgresClaimStore`: the authoritative claim store on one PostgreSQL connection.

The SQL claim store (`sql_claims.SqlClaimStore`) on the PostgreSQL dialect. Writers take
the owner's transaction-scoped advisory lock first, so writers of one agent serialise (as
SQLite's single writer does) while other agents — in this process or any other sharing the
database — never wait on each other.

Forgetting on PostgreSQL: MVCC keeps a deleted row's bytes in the table file (and its WAL
record) until the page is rewritten. After each delete and clear batch this store runs
`VACUUM` on the claim table (`vacuum_after_forget`), which prunes the dead tuples; it does
not zero free space, so `compact()` exists for the rest. docs/scale-out.md states what
each step removes, as measured.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

import psycopg

from memory_adapters.postgres_store.claim_schema import COMPONENT, MIGRATIONS, OPTIONAL_EXTENSIONS
from memory_adapters.postgres_store.connection import ConnectionSettings, agent_lock_key, connect
from memory_adapters.postgres_store.dialect import POSTGRES
from memory_adapters.postgres_store.errors import translate_errors
from memory_adapters.postgres_store.interrupt import StatementGate
from memory_adapters.postgres_store.migrations import migrate
from memory_adapters.sql_claims import Session, SqlClaimStore
from memory_adapters.sql_claims.store import random_id
from memory_core.domain.errors import StoreError
from memory_core.ports.claims import ClearProgress
from memory_core.ports.clock import DomainClock
from memory_core.ports.secrets import SecretPolicy

__all__ = ["PostgresClaimStore"]

_log = logging.getLogger(__name__)


class PostgresClaimStore(SqlClaimStore):
    """`ClaimStore` on PostgreSQL (SPEC §3 semantics; R-BEYOND-4).

    Opening runs the `claims` migrations (pg_trgm and btree_gin are created when available;
    without them search gives the same answers, slower). `on_close` runs once after `close`
    (the plugin releases an embedded server there).
    """

    def __init__(
        self,
        settings: ConnectionSettings,
        *,
        secret_policy: SecretPolicy,
        clock: DomainClock,
        vacuum_after_forget: bool = True,
        extension_schema: str = "public",
        id_factory: Callable[[str], str] = random_id,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(
            dialect=POSTGRES, secret_policy=secret_policy, clock=clock, id_factory=id_factory
        )
        self._settings = settings
        self._vacuum = vacuum_after_forget
        self._on_close = on_close
        self._gate = StatementGate(cancel_timeout_s=settings.connect_timeout_s)
        self._conn: psycopg.Connection | None = connect(settings)
        try:
            self.extensions = migrate(
                self._conn,
                schema=settings.schema,
                component=COMPONENT,
                migrations=MIGRATIONS,
                optional_extensions=OPTIONAL_EXTENSIONS,
                extension_schema=extension_schema,
                now=clock.now(),
            )
        except BaseException:
            self._conn.close()
            raise

    @property
    def schema(self) -> str:
        return self._settings.schema

    def _open(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            raise StoreError("claim store is closed")
        return self._conn

    # --- the kit's transactions and forget hooks ----------------------------------------
    @contextlib.contextmanager
    def _write(self, *agent_ids: str) -> Iterator[Session]:
        """One transaction holding the owners' advisory locks (sorted: no lock cycles)."""
        conn = self._open()
        with self._gate.held(), translate_errors("claim store write"), conn.transaction():
            for agent_id in sorted(set(agent_ids)):
                conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    (agent_lock_key(self.schema, agent_id),),
                )
            yield Session(conn, POSTGRES)

    @contextlib.contextmanager
    def _read(self) -> Iterator[Session]:
        conn = self._open()
        with self._gate.held(), translate_errors("claim store read"):
            yield Session(conn, POSTGRES)

    def interrupt(self, thread_id: int) -> None:
        """Cancel the statement `thread_id` runs here, if it still does (read offload)."""
        conn = self._conn
        if conn is not None:
            self._gate.interrupt(conn, thread_id)

    def _statement(self) -> contextlib.AbstractContextManager[Session]:
        return self._read()  # autocommit: one UPDATE is atomic without an explicit block

    def _scrub(self) -> None:
        """Prune the dead tuples a forget left (R-PRIV-3, best effort: see module doc)."""
        if not self._vacuum:
            return
        try:
            with self._read() as session:
                session.execute("VACUUM agent_memory")
        except StoreError as exc:
            _log.warning("vacuum after forget failed: %s", exc)

    def _after_delete(self) -> None:
        self._scrub()

    def _after_clear_batch(self, progress: ClearProgress) -> None:
        if progress.batch_removed:
            self._scrub()

    def _after_retire(self) -> None:
        self._scrub()

    # --- maintenance beyond the port -----------------------------------------------------
    def compact(self, *, rewrite: bool = False) -> None:
        """Forensic maintenance after forgetting (R-PRIV-3), measured in
        tests/adapters/postgres_store/test_postgres_forensic.py.

        Default: rebuild the trigram index (GIN keeps the 3-character keys of deleted text
        through VACUUM) with `REINDEX … CONCURRENTLY`, which blocks neither readers nor
        writers, then VACUUM. VACUUM does not zero a page's free space, so a deleted row that
        was the last one stored in its page can survive there; `rewrite=True` runs
        `VACUUM FULL` instead, which rewrites the claim table and all its indexes into new
        files — but holds an exclusive lock on the table while it runs: a maintenance-window
        operation. What remains afterwards is the WAL, until checkpoints retire its segments.
        """
        with self._read() as session:
            if rewrite:
                session.execute("VACUUM FULL agent_memory")
                return
            if self.extensions.has("pg_trgm"):
                session.execute("REINDEX INDEX CONCURRENTLY agent_memory_trigram")
            session.execute("VACUUM agent_memory")

    def checkpoint(self) -> None:
        """The port's forensic checkpoint (R-PRIV-3) — here a no-op beyond checking the store
        is open. `delete` and clear batches already VACUUM (`vacuum_after_forget`); the WAL
        and its checkpoints belong to the server; what remains after that — trigram keys in
        the GIN index, a page's free space — takes `compact()`, which rebuilds an index
        shared by every agent and so is a maintenance operation, not a per-delete step
        (docs/scale-out.md states what each step removes)."""
        self._open()

    def close(self) -> None:
        """Close the connection; idempotent. Any later call raises StoreError."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            with self._gate.held():  # not under a call still running on another thread
                conn.close()
        finally:
            if self._on_close is not None:
                callback, self._on_close = self._on_close, None
                callback()
