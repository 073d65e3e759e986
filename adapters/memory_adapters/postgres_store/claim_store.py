"""`PostgresClaimStore`: the authoritative claim store on one PostgreSQL connection.

A thin façade like the SQLite store's: each port method is one transaction and delegates to
the module that owns the concept. Writers take the owner's transaction-scoped advisory lock
first, so writers of one agent serialise (as SQLite's single writer does) while other agents
— in this process or any other sharing the database — never wait on each other.

Forgetting on PostgreSQL: MVCC keeps a deleted row's bytes in the table file (and its WAL
record) until the page is rewritten. After each delete and clear batch this store runs
`VACUUM` on the claim table (`vacuum_after_forget`), which prunes the dead tuples; it does
not zero free space, so `compact()` exists for the rest. docs/scale-out.md states what
each step removes, as measured.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime

import psycopg

from memory_adapters.postgres_store import (
    bookkeeping,
    claims,
    directives,
    fts,
    jobs,
    lifecycle,
    reads,
)
from memory_adapters.postgres_store import repair as repair_module
from memory_adapters.postgres_store.audit import prune
from memory_adapters.postgres_store.claim_schema import COMPONENT, MIGRATIONS, OPTIONAL_EXTENSIONS
from memory_adapters.postgres_store.connection import ConnectionSettings, agent_lock_key, connect
from memory_adapters.postgres_store.errors import translate_errors
from memory_adapters.postgres_store.interrupt import StatementGate
from memory_adapters.postgres_store.migrations import migrate
from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.errors import StoreError
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.ports.claims import (
    ClearProgress,
    DeleteOutcome,
    Derivation,
    DerivationKind,
    FtsHit,
    InsertOutcome,
    MatchMode,
    RepairReport,
)
from memory_core.ports.clock import DomainClock
from memory_core.ports.secrets import SecretPolicy

__all__ = ["PostgresClaimStore"]

_log = logging.getLogger(__name__)


def _random_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(8)}"


class PostgresClaimStore:
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
        id_factory: Callable[[str], str] = _random_id,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._settings = settings
        self._policy = secret_policy
        self._clock = clock
        self._vacuum = vacuum_after_forget
        self._new_id = id_factory
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

    # --- plumbing ------------------------------------------------------------------------
    @property
    def schema(self) -> str:
        return self._settings.schema

    def _open(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            raise StoreError("claim store is closed")
        return self._conn

    @contextlib.contextmanager
    def _write(self, *agent_ids: str) -> Iterator[psycopg.Connection]:
        """One transaction holding the owners' advisory locks (sorted: no lock cycles)."""
        conn = self._open()
        with self._gate.held(), translate_errors("claim store write"), conn.transaction():
            for agent_id in sorted(set(agent_ids)):
                conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    (agent_lock_key(self.schema, agent_id),),
                )
            yield conn

    @contextlib.contextmanager
    def _read(self) -> Iterator[psycopg.Connection]:
        conn = self._open()
        with self._gate.held(), translate_errors("claim store read"):
            yield conn

    def interrupt(self, thread_id: int) -> None:
        """Cancel the statement `thread_id` runs here, if it still does (read offload)."""
        conn = self._conn
        if conn is not None:
            self._gate.interrupt(conn, thread_id)

    def _claim_id(self) -> str:
        return self._new_id("mem")

    def _directive_id(self) -> str:
        return self._new_id("dir")

    def _scrub(self) -> None:
        """Prune the dead tuples a forget left (R-PRIV-3, best effort: see module doc)."""
        if not self._vacuum:
            return
        try:
            with self._read() as conn:
                conn.execute("VACUUM agent_memory")
        except StoreError as exc:
            _log.warning("vacuum after forget failed: %s", exc)

    # --- claims --------------------------------------------------------------------------
    def insert(self, draft: ClaimDraft, *, origin: WriteOrigin, now: datetime) -> InsertOutcome:
        return self.insert_many([draft], origin=origin, now=now)[0]

    def insert_many(
        self, drafts: Sequence[ClaimDraft], *, origin: WriteOrigin, now: datetime
    ) -> Sequence[InsertOutcome]:
        origin = WriteOrigin(origin)
        # The secret policy and hashing run before any lock is taken.
        prepared = [claims.prepare(draft, self._policy) for draft in drafts]
        with self._write(*(item.draft.agent_id for item in prepared)) as conn:
            return [
                claims.insert_prepared(conn, item, origin=origin, now=now, new_id=self._claim_id)
                for item in prepared
            ]

    def get(self, agent_id: str, claim_id: str) -> Claim:
        with self._read() as conn:
            return reads.get(conn, agent_id, claim_id)

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        with self._read() as conn:
            return reads.list_claims(
                conn,
                agent_id,
                scope_filter=scope_filter,
                include_inactive=include_inactive,
                limit=limit,
                after_id=after_id,
            )

    def update_content(
        self, agent_id: str, claim_id: str, *, expected_revision: int, content: str, now: datetime
    ) -> Claim:
        with self._write(agent_id) as conn:
            row = claims.update_content(
                conn,
                agent_id,
                claim_id,
                expected_revision=expected_revision,
                content=content,
                policy=self._policy,
                now=now,
                new_id=self._claim_id,
            )
            return row.to_claim()

    def supersede(
        self,
        agent_id: str,
        old_id: str,
        draft: ClaimDraft,
        *,
        expected_revision: int,
        now: datetime,
        origin: WriteOrigin = WriteOrigin.EXTRACTION,
    ) -> InsertOutcome:
        prepared = claims.prepare(draft, self._policy)
        with self._write(agent_id) as conn:
            return claims.supersede(
                conn,
                agent_id,
                old_id,
                prepared,
                expected_revision=expected_revision,
                origin=WriteOrigin(origin),
                now=now,
                new_id=self._claim_id,
            )

    def find_live_by_slot(self, agent_id: str, scope: Scope, slot: str) -> Claim | None:
        with self._read() as conn:
            return reads.find_live_by_slot(conn, agent_id, scope, slot)

    def archive(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        with self._write(agent_id) as conn:
            return lifecycle.archive(conn, agent_id, claim_id, now=now).to_claim()

    def restore(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        with self._write(agent_id) as conn:
            return lifecycle.restore(conn, agent_id, claim_id, now=now).to_claim()

    def delete(self, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
        with self._write(agent_id) as conn:
            outcome = lifecycle.delete(conn, agent_id, claim_id, now=now)
        self._scrub()
        return outcome

    # --- retrieval -----------------------------------------------------------------------
    def search_fts(
        self,
        agent_id: str,
        terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        match_mode: MatchMode = MatchMode.ANY,
    ) -> Sequence[FtsHit]:
        with self._read() as conn:
            return fts.search(
                conn,
                agent_id,
                terms,
                scope_filter=scope_filter,
                limit=limit,
                match_mode=MatchMode(match_mode),
            )

    def list_applicable_by_ids(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        embedding: EmbeddingIdentity | None = None,
        revisions: Mapping[str, int] | None = None,
    ) -> Sequence[Claim]:
        with self._read() as conn:
            return reads.list_applicable_by_ids(
                conn,
                agent_id,
                claim_ids,
                scope_filter=scope_filter,
                embedding=embedding,
                revisions=revisions,
            )

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        with self._read() as conn:  # one UPDATE statement: atomic without an explicit block
            return bookkeeping.record_access(conn, agent_id, claim_ids, now=now)

    # --- embeddings ----------------------------------------------------------------------
    def list_pending_embeddings(self, agent_id: str, *, limit: int) -> Sequence[Claim]:
        with self._read() as conn:
            return reads.list_pending_embeddings(conn, agent_id, limit=limit)

    def list_ready_ids(self, agent_id: str, identity: EmbeddingIdentity) -> Sequence[str]:
        with self._read() as conn:
            return reads.list_ready_ids(conn, agent_id, identity)

    def reset_embeddings(
        self, agent_id: str, claim_ids: Sequence[str] | None, *, now: datetime
    ) -> int:
        with self._read() as conn:
            return bookkeeping.reset_embeddings(conn, agent_id, claim_ids)

    def mark_embedding(
        self,
        agent_id: str,
        claim_id: str,
        *,
        expected_revision: int,
        identity: EmbeddingIdentity | None,
        ready: bool,
        now: datetime,
    ) -> bool:
        with self._read() as conn:
            return bookkeeping.mark_embedding(
                conn,
                agent_id,
                claim_id,
                expected_revision=expected_revision,
                identity=identity,
                ready=ready,
            )

    # --- directives ----------------------------------------------------------------------
    def create_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive:
        with self._write(agent_id) as conn:
            return directives.create(
                conn,
                agent_id,
                kind,
                content,
                topic=topic,
                policy=self._policy,
                now=now,
                new_id=self._directive_id,
            )

    def suggest_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive | None:
        with self._write(agent_id) as conn:
            return directives.suggest(
                conn,
                agent_id,
                kind,
                content,
                topic=topic,
                policy=self._policy,
                now=now,
                new_id=self._directive_id,
            )

    def set_directive_status(
        self, agent_id: str, directive_id: str, status: DirectiveStatus, *, now: datetime
    ) -> Directive:
        with self._write(agent_id) as conn:
            return directives.set_status(conn, agent_id, directive_id, status, now=now)

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        with self._read() as conn:
            return directives.list_directives(conn, agent_id, status=status)

    # --- clear, retirement, lineage, repair ----------------------------------------------
    def begin_clear(self, agent_id: str, *, now: datetime) -> ClearProgress:
        with self._write(agent_id) as conn:
            return jobs.begin(conn, agent_id, now=now)

    def run_clear_batch(
        self, agent_id: str, *, batch_size: int = jobs.MAX_CLEAR_BATCH
    ) -> ClearProgress:
        with self._write(agent_id) as conn:
            progress = jobs.run_batch(conn, agent_id, batch_size=batch_size, now=self._clock.now())
        if progress.batch_removed:
            self._scrub()
        return progress

    def finish_clear(self, agent_id: str) -> None:
        with self._write(agent_id) as conn:
            jobs.finish(conn, agent_id, now=self._clock.now())

    def pending_clears(self) -> Sequence[ClearProgress]:
        with self._read() as conn:
            return jobs.pending(conn)

    def retire_agent(self, agent_id: str) -> None:
        with self._write(agent_id) as conn:
            jobs.retire(conn, agent_id)
        self._scrub()

    def list_derivations(self, agent_id: str, claim_id: str) -> Sequence[Derivation]:
        with self._read() as conn:
            rows = conn.execute(
                """SELECT parent_memory_id, child_memory_id, derivation_kind, created_at
                   FROM agent_memory_derivation
                   WHERE agent_id = %s AND (parent_memory_id = %s OR child_memory_id = %s)
                   ORDER BY created_at, parent_memory_id, child_memory_id""",
                (agent_id, claim_id, claim_id),
            ).fetchall()
        return [
            Derivation(parent_id=parent, child_id=child, kind=DerivationKind(kind), created_at=at)
            for parent, child, kind, at in rows
        ]

    def prune_audit(self, *, older_than: datetime) -> int:
        with self._write() as conn:
            return prune(conn, before=older_than)

    def repair(self, *, now: datetime) -> RepairReport:
        with self._write() as conn:
            report = repair_module.repair(conn, now=now)
        if report != RepairReport():
            _log.info(
                "startup repair: temporal_archived=%d internal_normalised=%d scope_fixed=%d"
                " scope_deleted=%d",
                report.temporal_archived,
                report.internal_normalised,
                report.scope_fixed,
                report.scope_deleted,
            )
        return report

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
        with self._read() as conn:
            if rewrite:
                conn.execute("VACUUM FULL agent_memory")
                return
            if self.extensions.has("pg_trgm"):
                conn.execute("REINDEX INDEX CONCURRENTLY agent_memory_trigram")
            conn.execute("VACUUM agent_memory")

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
