"""`SqlClaimStore`: the `ClaimStore` port over any `Dialect`, one transaction per call.

Each port method opens one transaction and delegates to the module that owns the concept.
A concrete store (apsw SQLite, psycopg PostgreSQL) supplies the dialect, the three ways it
opens a transaction — `_write` for writers (holding whatever serialises the owners' writers),
`_read` for reads, `_statement` for single-statement bookkeeping — and what it does after a
forget to make it physical. Library exceptions never leave those context managers.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from memory_adapters.sql_claims import (
    audit,
    audit_reads,
    bookkeeping,
    claims,
    directives,
    jobs,
    lexical,
    lifecycle,
    reads,
)
from memory_adapters.sql_claims import repair as repair_module
from memory_adapters.sql_claims.conflicts import ConflictMethods
from memory_adapters.sql_claims.maintenance import MaintenanceMethods
from memory_adapters.sql_claims.persona import PersonaMethods
from memory_adapters.sql_claims.projection import WorkingProjectionMethods
from memory_adapters.sql_claims.session import Dialect, Session
from memory_adapters.sql_claims.vector_cleanup import VectorCleanupMethods
from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.validation import check_int
from memory_core.ports.claims import (
    ClearProgress,
    DeleteOutcome,
    Derivation,
    EmbeddingMark,
    FtsHit,
    InsertOutcome,
    MatchMode,
    PendingEmbedding,
    RepairReport,
)
from memory_core.ports.claims.audit import AuditEvent
from memory_core.ports.clock import DomainClock
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.admission import require_generic_kind
from memory_core.storage.directives import NormalisedDirective, normalise_directive
from memory_core.storage.drafts import prepare, stored_time

__all__ = ["SqlClaimStore", "random_id"]

_log = logging.getLogger(__name__)


def random_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(8)}"


class SqlClaimStore(
    MaintenanceMethods,
    ConflictMethods,
    PersonaMethods,
    WorkingProjectionMethods,
    VectorCleanupMethods,
):
    """The shared body of the SQL claim stores; not used on its own."""

    def __init__(
        self,
        *,
        dialect: Dialect,
        secret_policy: SecretPolicy,
        clock: DomainClock,
        id_factory: Callable[[str], str],
    ) -> None:
        self._dialect = dialect
        self._policy = secret_policy
        self._clock = clock
        self._new_id = id_factory

    # --- what a concrete store supplies ---------------------------------------------------
    def _write(self, *agent_ids: str) -> AbstractContextManager[Session]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Session]:
        raise NotImplementedError

    def _statement(self) -> AbstractContextManager[Session]:
        """One bookkeeping statement: atomic by itself, so no owner lock is needed."""
        return self._write()

    def _after_delete(self) -> None:
        """Called after a committed selective delete."""

    def _after_clear_batch(self, progress: ClearProgress) -> None:
        """Called after each committed clear batch."""

    def _after_retire(self) -> None:
        """Called after a committed retirement."""

    # --- plumbing ------------------------------------------------------------------------
    def _now(self, now: datetime | None = None) -> datetime:
        # At stored precision, so what a write returns is what a later read sees.
        value = self._clock.now() if now is None else now
        return stored_time(value, "now", resolution=self._dialect.resolution)

    def _claim_id(self) -> str:
        return self._new_id("mem")

    def _directive_id(self) -> str:
        return self._new_id("dir")

    # --- claims --------------------------------------------------------------------------
    def insert(self, draft: ClaimDraft, *, origin: WriteOrigin, now: datetime) -> InsertOutcome:
        return self.insert_many([draft], origin=origin, now=now)[0]

    def insert_many(
        self, drafts: Sequence[ClaimDraft], *, origin: WriteOrigin, now: datetime
    ) -> Sequence[InsertOutcome]:
        origin = WriteOrigin(origin)
        for draft in drafts:
            require_generic_kind(draft.kind, origin)
        # The secret policy and hashing run before any lock is taken.
        prepared = [prepare(draft, self._policy) for draft in drafts]
        now = self._now(now)
        with self._write(*(item.draft.agent_id for item in prepared)) as session:
            return claims.insert_batch(
                session, prepared, origin=origin, now=now, new_id=self._claim_id
            )

    def get(self, agent_id: str, claim_id: str) -> Claim:
        with self._read() as session:
            return reads.get(session, agent_id, claim_id)

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        with self._read() as session:
            return reads.list_claims(
                session,
                agent_id,
                scope_filter=scope_filter,
                include_inactive=include_inactive,
                limit=limit,
                after_id=after_id,
            )

    def update_content(
        self, agent_id: str, claim_id: str, *, expected_revision: int, content: str, now: datetime
    ) -> Claim:
        now = self._now(now)
        with self._write(agent_id) as session:
            return claims.update_content(
                session,
                agent_id,
                claim_id,
                expected_revision=expected_revision,
                content=content,
                policy=self._policy,
                now=now,
                new_id=self._claim_id,
            ).to_claim()

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
        prepared = prepare(draft, self._policy)
        now = self._now(now)
        with self._write(agent_id) as session:
            return claims.supersede(
                session,
                agent_id,
                old_id,
                prepared,
                expected_revision=expected_revision,
                origin=WriteOrigin(origin),
                now=now,
                new_id=self._claim_id,
            )

    def find_live_by_slot(self, agent_id: str, scope: Scope, slot: str) -> Claim | None:
        with self._read() as session:
            return reads.find_live_by_slot(session, agent_id, scope, slot)

    def archive(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        now = self._now(now)
        with self._write(agent_id) as session:
            return lifecycle.archive(session, agent_id, claim_id, now=now).to_claim()

    def restore(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        now = self._now(now)
        with self._write(agent_id) as session:
            return lifecycle.restore(session, agent_id, claim_id, now=now).to_claim()

    def delete(self, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
        now = self._now(now)
        with self._write(agent_id) as session:
            outcome = lifecycle.delete(session, agent_id, claim_id, now=now)
        self._after_delete()
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
        with self._read() as session:
            return lexical.search(
                session,
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
        with self._read() as session:
            return reads.list_applicable_by_ids(
                session,
                agent_id,
                claim_ids,
                scope_filter=scope_filter,
                embedding=embedding,
                revisions=revisions,
            )

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        now = self._now(now)
        with self._statement() as session:
            return bookkeeping.record_access(session, agent_id, claim_ids, now=now)

    # --- embeddings ----------------------------------------------------------------------
    def list_pending_embeddings(self, agent_id: str, *, limit: int) -> Sequence[PendingEmbedding]:
        with self._read() as session:
            return reads.list_pending_embeddings(session, agent_id, limit=limit)

    def list_ready_ids(self, agent_id: str, identity: EmbeddingIdentity) -> Sequence[str]:
        with self._read() as session:
            return reads.list_ready_ids(session, agent_id, identity)

    def reset_embeddings(
        self, agent_id: str, claim_ids: Sequence[str] | None, *, now: datetime
    ) -> int:
        with self._statement() as session:
            return bookkeeping.reset_embeddings(session, agent_id, claim_ids)

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
        with self._statement() as session:
            return bookkeeping.mark_embedding(
                session,
                agent_id,
                claim_id,
                expected_revision=expected_revision,
                identity=identity,
                ready=ready,
            )

    def mark_embeddings(self, marks: Sequence[EmbeddingMark], *, now: datetime) -> Sequence[bool]:
        if not marks:
            return []
        with self._statement() as session:
            return bookkeeping.mark_embeddings(session, marks)

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
        made = normalise_directive(kind, content, topic, self._policy)
        directive = self._write_directive(directives.create, agent_id, made, now)
        assert directive is not None  # an explicit create always yields its directive
        return directive

    def suggest_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive | None:
        made = normalise_directive(kind, content, topic, self._policy)
        return self._write_directive(directives.suggest, agent_id, made, now)

    def _write_directive(
        self,
        write: Callable[..., Directive | None],
        agent_id: str,
        made: NormalisedDirective,
        now: datetime,
    ) -> Directive | None:
        # Normalised (secret policy included) before the lock, like a claim draft.
        now = self._now(now)
        with self._write(agent_id) as session:
            return write(session, agent_id, made, now=now, new_id=self._directive_id)

    def set_directive_status(
        self, agent_id: str, directive_id: str, status: DirectiveStatus, *, now: datetime
    ) -> Directive:
        now = self._now(now)
        with self._write(agent_id) as session:
            return directives.set_status(session, agent_id, directive_id, status, now=now)

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        with self._read() as session:
            return directives.list_directives(session, agent_id, status=status)

    # --- clear, retirement, lineage, repair ----------------------------------------------
    def begin_clear(self, agent_id: str, *, now: datetime) -> ClearProgress:
        now = self._now(now)
        with self._write(agent_id) as session:
            return jobs.begin(session, agent_id, now=now)

    def run_clear_batch(
        self, agent_id: str, *, batch_size: int = jobs.MAX_CLEAR_BATCH
    ) -> ClearProgress:
        with self._write(agent_id) as session:
            progress = jobs.run_batch(session, agent_id, batch_size=batch_size, now=self._now())
        self._after_clear_batch(progress)
        return progress

    def finish_clear(self, agent_id: str) -> None:
        with self._write(agent_id) as session:
            jobs.finish(session, agent_id, now=self._now())

    def pending_clears(self) -> Sequence[ClearProgress]:
        with self._read() as session:
            return jobs.pending(session)

    def retire_agent(self, agent_id: str) -> None:
        with self._write(agent_id) as session:
            jobs.retire(session, agent_id)
        self._after_retire()

    def list_derivations(self, agent_id: str, claim_id: str) -> Sequence[Derivation]:
        with self._read() as session:
            return reads.list_derivations(session, agent_id, claim_id)

    def list_audit(
        self, agent_id: str, *, limit: int, memory_ids: Sequence[str] | None = None
    ) -> Sequence[AuditEvent]:
        check_int(limit, "limit", minimum=1)
        with self._read() as session:
            return audit_reads.list_audit(session, agent_id, memory_ids, limit)

    def prune_audit(self, *, older_than: datetime) -> int:
        with self._write() as session:
            return audit.prune(session, before=older_than)

    def request_repair(self) -> None:
        """Mark the store for a full startup repair (after rows were written behind its
        back); content-free, durable once this returns."""
        with self._write() as session:
            repair_module.mark(session, "requested")

    def repair(self, *, now: datetime) -> RepairReport:
        now = self._now(now)
        with self._write() as session:
            report = repair_module.repair(session, now=now)
        if report != RepairReport():
            _log.info(
                "startup repair: temporal_archived=%d internal_normalised=%d scope_fixed=%d"
                " scope_deleted=%d fts_rebuilt=%s",
                report.temporal_archived,
                report.internal_normalised,
                report.scope_fixed,
                report.scope_deleted,
                report.fts_rebuilt,
            )
        return report
