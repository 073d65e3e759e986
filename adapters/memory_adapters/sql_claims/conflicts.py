"""Conflicts: a CHALLENGE decision kept as a challenger row against its target, and the
three resolutions (reference §7.8). `ConflictMethods` is the `Conflicts` role the
`SqlClaimStore` inherits; each method is one transaction. What a resolution moves is
`memory_core.storage.conflicts`'s decision; `conflict_links` executes it.

A challenger is an ordinary claim row with `lifecycle_state = 'conflicted'` and
`conflict_with` naming its target; the target stays live with `conflict_state =
'challenged'`. Neither is a copy of anything: resolving only moves lifecycle, links and
lineage, so forgetting either later works as for any claim.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from memory_adapters.sql_claims import audit
from memory_adapters.sql_claims.claims import add_derivation, ensure_not_fenced, insert_prepared
from memory_adapters.sql_claims.conflict_links import apply, open_challengers
from memory_adapters.sql_claims.queries import CLAIM_SELECT, NOT_FENCED, claim_row, fetch_claim_row
from memory_adapters.sql_claims.session import Session
from memory_core.domain.claims import Claim, ClaimDraft, Lifecycle, WriteOrigin
from memory_core.domain.errors import NotFound, RevisionConflict, ValidationError
from memory_core.domain.validation import check_int
from memory_core.ports.claims import Conflict, DerivationKind, InsertOutcome, Resolution
from memory_core.ports.claims import InsertStatus as Status
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.conflicts import resolution_change
from memory_core.storage.drafts import prepare

__all__ = ["ConflictMethods"]


def _challenge(
    session: Session,
    target_id: str,
    draft: ClaimDraft,
    *,
    expected_revision: int,
    origin: WriteOrigin,
    now: datetime,
    policy: SecretPolicy,
    new_id: Callable[[], str],
) -> InsertOutcome:
    agent_id = draft.agent_id
    ensure_not_fenced(session, agent_id)
    row = fetch_claim_row(session, agent_id, target_id, for_update=True)
    target = None if row is None else row.to_claim()
    if target is None or target.revision != expected_revision or not target.is_recallable:
        raise RevisionConflict(f"claim {target_id} changed since the challenge was decided")
    if draft.scope != target.scope:
        raise ValidationError("scope", "a challenger must share its target's scope")
    if draft.kind is not target.kind:
        raise ValidationError("kind", "a challenger must share its target's kind")
    outcome = insert_prepared(
        session, prepare(draft, policy), origin=origin, now=now, new_id=new_id
    )
    if outcome.status is not Status.INSERTED or outcome.claim is None:
        return outcome  # a duplicate or a tombstoned text: nothing is challenged
    challenger = outcome.claim
    session.execute(
        """UPDATE agent_memory SET lifecycle_state = 'conflicted', conflict_with = ?
           WHERE agent_id = ? AND id = ?""",
        (target.id, agent_id, challenger.id),
    )
    session.execute(
        "UPDATE agent_memory SET conflict_state = 'challenged' WHERE agent_id = ? AND id = ?",
        (agent_id, target.id),
    )
    fresh = fetch_claim_row(session, agent_id, challenger.id)
    assert fresh is not None
    return InsertOutcome(status=Status.INSERTED, claim=fresh.to_claim())


def _resolve(
    session: Session,
    agent_id: str,
    challenger_id: str,
    resolution: Resolution,
    *,
    actor: str,
    now: datetime,
) -> Claim:
    ensure_not_fenced(session, agent_id)
    row = fetch_claim_row(session, agent_id, challenger_id, for_update=True)
    if row is None or row.lifecycle_state != Lifecycle.CONFLICTED.value or not row.conflict_with:
        raise NotFound(f"no open challenge {challenger_id} for this agent")
    target_id = row.conflict_with
    standing, change = resolution_change(
        resolution, challenger_id, target_id, open_challengers(session, agent_id, target_id)
    )
    apply(session, agent_id, change, now=now)
    for parent, child in change.edges:
        add_derivation(
            session, agent_id, parent=parent, child=child, kind=DerivationKind.SUPERSEDE, now=now
        )
    audit.record(
        session,
        agent_id=agent_id,
        event="memory/challenge_resolved",
        actor=actor,
        now=now,
        memory_id=challenger_id,
        refs={"target": target_id, "resolution": resolution.value},
    )
    fresh = fetch_claim_row(session, agent_id, standing)
    assert fresh is not None
    return fresh.to_claim()


class ConflictMethods:
    """The `Conflicts` role over the concrete store's transactions."""

    _write: Callable[..., AbstractContextManager[Session]]
    _read: Callable[[], AbstractContextManager[Session]]
    _now: Callable[..., datetime]
    _policy: SecretPolicy
    _claim_id: Callable[[], str]

    def challenge(
        self,
        agent_id: str,
        target_id: str,
        draft: ClaimDraft,
        *,
        expected_revision: int,
        origin: WriteOrigin,
        now: datetime,
    ) -> InsertOutcome:
        if draft.agent_id != agent_id:
            raise ValidationError("agent_id", "the draft belongs to another agent")
        now = self._now(now)
        with self._write(agent_id) as session:
            return _challenge(
                session,
                target_id,
                draft,
                expected_revision=expected_revision,
                origin=WriteOrigin(origin),
                now=now,
                policy=self._policy,
                new_id=self._claim_id,
            )

    def list_conflicts(self, agent_id: str, *, limit: int) -> Sequence[Conflict]:
        check_int(limit, "limit", minimum=1)
        with self._read() as session:
            rows = session.execute(
                f"""SELECT {CLAIM_SELECT} FROM agent_memory m
                    WHERE m.agent_id = ? AND m.lifecycle_state = 'conflicted'
                      AND m.conflict_with IS NOT NULL AND {NOT_FENCED}
                    ORDER BY m.created_at, m.id LIMIT ?""",
                (agent_id, limit),
            ).fetchall()
            conflicts: list[Conflict] = []
            for values in rows:
                challenger = claim_row(session, values)
                target = fetch_claim_row(session, agent_id, challenger.conflict_with or "")
                if target is not None:
                    conflicts.append(
                        Conflict(challenger=challenger.to_claim(), target=target.to_claim())
                    )
            return conflicts

    def resolve_conflict(
        self,
        agent_id: str,
        challenger_id: str,
        resolution: Resolution,
        *,
        actor: str,
        now: datetime,
    ) -> Claim:
        resolution = Resolution(resolution)
        now = self._now(now)
        with self._write(agent_id) as session:
            return _resolve(session, agent_id, challenger_id, resolution, actor=actor, now=now)
