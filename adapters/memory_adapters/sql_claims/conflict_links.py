"""The statements of a challenge's links: a challenger row has `lifecycle_state =
'conflicted'` and `conflict_with` naming its target; the target has `conflict_state =
'challenged'`. `apply` executes the row moves of a `storage.conflicts.LinkChange` inside
the caller's transaction (its lineage edges are the caller's, `claims.add_derivation`);
`settle_removed` is what every removal path calls before a row stops being live, so no
challenger is left conflicted against a row that is gone (§7.8).

Its own module because the removal paths (`claims`, `lifecycle`) call it and `conflicts`
builds on `claims`: it imports neither."""

from __future__ import annotations

from datetime import datetime

from memory_adapters.sql_claims import audit
from memory_adapters.sql_claims.session import Session
from memory_core.storage.conflicts import PARKED, LinkChange, Removal, removal_change

__all__ = ["apply", "open_challengers", "settle_removed"]


def open_challengers(session: Session, agent_id: str, target_id: str) -> list[str]:
    rows = session.execute(
        """SELECT id FROM agent_memory WHERE agent_id = ? AND conflict_with = ?
             AND lifecycle_state = 'conflicted' ORDER BY created_at, id""",
        (agent_id, target_id),
    ).fetchall()
    return [str(challenger) for (challenger,) in rows]


def apply(session: Session, agent_id: str, change: LinkChange, *, now: datetime) -> None:
    moved = "revision = revision + 1, updated_at = ?"
    unlinked = set(change.unlink)
    for claim_id in change.activate:
        session.execute(
            f"""UPDATE agent_memory SET lifecycle_state = 'active', conflict_with = NULL,
                  {moved} WHERE agent_id = ? AND id = ?""",
            (now, agent_id, claim_id),
        )
    for claim_id, successor in change.archive:
        session.execute(
            f"""UPDATE agent_memory SET lifecycle_state = 'archived', conflict_with = NULL,
                  superseded_by = ?, {moved} WHERE agent_id = ? AND id = ?""",
            (successor, now, agent_id, claim_id),
        )
    for claim_id, successor in change.supersede:
        session.execute(
            f"""UPDATE agent_memory SET superseded_by = ?, conflict_state = NULL, {moved}
                WHERE agent_id = ? AND id = ?""",
            (successor, now, agent_id, claim_id),
        )
    touched = set(change.activate) | {claim_id for claim_id, _ in change.archive}
    for claim_id in unlinked - touched:  # a challenger about to be deleted
        session.execute(
            "UPDATE agent_memory SET conflict_with = NULL WHERE agent_id = ? AND id = ?",
            (agent_id, claim_id),
        )
    if change.clear_flag is not None:
        session.execute(
            "UPDATE agent_memory SET conflict_state = NULL WHERE agent_id = ? AND id = ?",
            (agent_id, change.clear_flag),
        )


def settle_removed(
    session: Session, agent_id: str, claim_id: str, how: Removal, *, actor: str, now: datetime
) -> None:
    """Settle the challenge `claim_id` takes part in, before it is deleted or retired
    (`memory_core.storage.conflicts`): a target's challengers are parked, a challenger's
    link goes. One audit event per parked challenger, ids only."""
    row = session.one(
        """SELECT conflict_state, conflict_with, lifecycle_state FROM agent_memory
           WHERE agent_id = ? AND id = ?""",
        (agent_id, claim_id),
    )
    if row is None or (row[0] is None and row[1] is None):
        return  # the common case: no challenge, one indexed read
    state, target, lifecycle = row
    challenger_of = str(target) if target is not None and lifecycle == "conflicted" else None
    change = removal_change(
        claim_id,
        how,
        challengers=open_challengers(session, agent_id, claim_id) if state else (),
        target=challenger_of,
        siblings=() if challenger_of is None else open_challengers(session, agent_id, target),
    )
    apply(session, agent_id, change, now=now)
    for parked, _ in change.archive:
        audit.record(
            session,
            agent_id=agent_id,
            event="memory/challenge_resolved",
            actor=actor,
            now=now,
            memory_id=parked,
            refs={"target": claim_id, "resolution": PARKED},
        )
