"""Consolidation rules the stores and the maintenance service share (reference §8.3–8.4,
§7.7, §8.8): which pair a merge may join and what it changes on the survivor, when two
texts are near-exact duplicates without a model, the decay rule that archives stale
claims, where a deferred seed goes, and which audit events retention may drop.

Written once here so the SQL kit, the in-memory fake and the service cannot disagree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta

import attrs

from memory_core.domain.claims import (
    MAX_EXTRACTED_CONTENT_CODE_POINTS,
    Category,
    Claim,
    ClaimDraft,
    ClaimKind,
)
from memory_core.domain.errors import RevisionConflict, ValidationError
from memory_core.ports.claims.maintenance import MergeRequest
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.drafts import PreparedDraft, draft_of, prepare

__all__ = [
    "ARCHIVE_MIN_AGE",
    "DECAY_ARCHIVE_BELOW",
    "DECAY_HALF_LIFE",
    "DEFER_STEP",
    "MAINTENANCE_EVENTS",
    "MERGE_CONFIDENCE_BUMP",
    "OPERATIONAL_EVENTS",
    "SurvivorFields",
    "check_merge",
    "check_reflections",
    "decay",
    "deferred_at",
    "is_near_exact",
    "is_stale",
    "merge_order",
    "merged_wording",
    "prepared_wording",
    "stale_ids",
    "survivor_fields",
]

MERGE_CONFIDENCE_BUMP = 0.1
# Decay halves every 30 days, slowed by importance; below 0.05 a claim older than 90 days is
# stale (§8.3: `now − anchor > 129.66 d × (1 + importance)`).
DECAY_HALF_LIFE = timedelta(days=30)
DECAY_ARCHIVE_BELOW = 0.05
ARCHIVE_MIN_AGE = timedelta(days=90)

# Operational events of the maintenance service, and with the store's housekeeping the
# events retention may drop (§8.8); user-visible events and lineage are never among them.
MAINTENANCE_EVENTS = (
    "memory/maintenance",
    "memory/maintenance_llm",
    "memory/merge",
    "memory/archive_stale",
)
OPERATIONAL_EVENTS = ("memory/repair", "memory/clear_batch", *MAINTENANCE_EVENTS)
# §7.7: a deferred seed goes 1 ms behind the agent's newest one.
DEFER_STEP = timedelta(milliseconds=1)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


@attrs.frozen(kw_only=True)
class SurvivorFields:
    importance: float
    confidence: float
    category: Category | None


def merge_order(first: Claim, second: Claim) -> tuple[Claim, Claim]:
    """(survivor, retired): the newer row survives — it carries the latest wording and its
    provenance is the one a replay of the recent conversation would repeat; ties by id."""
    ordered = sorted((first, second), key=lambda c: (c.created_at, c.id), reverse=True)
    return ordered[0], ordered[1]


def check_merge(
    request: MergeRequest,
    survivor: Claim | None,
    retired: Claim | None,
    *,
    challenged: Collection[str],
) -> tuple[Claim, Claim]:
    """The pair a merge may join, as the store read it (None: no such row of the owner):
    two distinct rows, each recallable at the revision the decision read and not the
    target of an open challenge (a conflict is settled by its resolution, never merged
    away, §7.8), of one scope and one kind. RevisionConflict or ValidationError, before
    anything changes."""
    if request.survivor_id == request.retired_id:
        raise ValidationError("retired_id", "a claim cannot be merged into itself")
    for claim_id, revision, claim in (
        (request.survivor_id, request.survivor_revision, survivor),
        (request.retired_id, request.retired_revision, retired),
    ):
        if claim is None or claim.revision != revision or not claim.is_recallable:
            raise RevisionConflict(f"claim {claim_id} changed since the merge was decided")
        if claim.id in challenged:
            raise RevisionConflict(f"claim {claim_id} is challenged: resolve the conflict first")
    assert survivor is not None and retired is not None
    if survivor.scope != retired.scope:
        raise ValidationError("scope", "merged claims must share one scope")
    if survivor.kind is not retired.kind:
        raise ValidationError("kind", "merged claims must share one kind")
    return survivor, retired


def check_reflections(agent_id: str, drafts: Sequence[ClaimDraft]) -> None:
    """Insights are `reflection` claims of the agent whose claims they reflect (§8.5);
    ValidationError before anything is stored."""
    for draft in drafts:
        if draft.agent_id != agent_id:
            raise ValidationError("agent_id", "a reflection belongs to the agent it reflects")
        if draft.kind is not ClaimKind.REFLECTION:
            raise ValidationError("kind", "insights are reflection claims")


def survivor_fields(survivor: Claim, retired: Claim) -> SurvivorFields:
    """Importance is the higher of both, the category the survivor's or else the other's,
    and the confidence rises by 0.1 (capped at 1): two sightings of one fact."""
    return SurvivorFields(
        importance=max(survivor.importance, retired.importance),
        confidence=min(1.0, survivor.effective_confidence + MERGE_CONFIDENCE_BUMP),
        category=survivor.category if survivor.category is not None else retired.category,
    )


def prepared_wording(
    survivor: Claim, content: str | None, policy: SecretPolicy
) -> PreparedDraft | None:
    """The model's merged text prepared as the survivor's (secret policy, key, tombstone
    identities); None when it gave none or the policy refused it (never stored)."""
    if content is None:
        return None
    try:
        return prepare(draft_of(survivor, content=content), policy)
    except ValidationError:  # SecretRejected among them
        return None


def merged_wording(
    prepared: PreparedDraft | None,
    survivor: Claim,
    *,
    tombstoned: bool,
    key_owner: str | None,
) -> PreparedDraft | None:
    """The `prepared_wording` of the model's merged text, if the survivor may take it: at
    most 2,000 code points like any automatic text, not a text the user forgot (a merge
    never writes a tombstoned text back), a new wording (not the survivor's own) and no
    other row's text (the provenance key is unique per owner). None: the survivor keeps
    its own wording."""
    if prepared is None or tombstoned:
        return None
    if len(prepared.content) > MAX_EXTRACTED_CONTENT_CODE_POINTS:
        return None
    if prepared.key == survivor.provenance_key or key_owner not in (None, survivor.id):
        return None
    return prepared


def is_near_exact(first: str, second: str) -> bool:
    """The deterministic merge rule when no model decides: equal canonical texts, or texts
    of at least four words that differ in exactly one word, where the differing words are
    lowercase and digit-free — a change of wording ("called" / "named"), never of a value
    ("Miso" / "Luna", "3" / "4"), which would be a conflict rather than a duplicate."""
    a, b = _WORD.findall(first), _WORD.findall(second)
    if [w.casefold() for w in a] == [w.casefold() for w in b]:
        return True
    if min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > 1:
        return False
    changed = _single_edit(a, b)
    return changed is not None and all(_is_wording(word) for word in changed)


def decay(claim: Claim, now: datetime) -> float:
    """0.5 ^ (age since last access (or creation) / (30 d × (1 + importance)))."""
    anchor = claim.last_accessed_at or claim.created_at
    age = max(timedelta(0), now - anchor)
    return math.pow(0.5, age / (DECAY_HALF_LIFE * (1.0 + claim.importance)))


def is_stale(claim: Claim, now: datetime) -> bool:
    """Archive-worthy: recallable, created over 90 days ago and decayed below 0.05."""
    return (
        claim.is_recallable
        and now - claim.created_at > ARCHIVE_MIN_AGE
        and decay(claim, now) < DECAY_ARCHIVE_BELOW
    )


def stale_ids(
    claims: Iterable[Claim], now: datetime, *, challenged: Collection[str], limit: int
) -> list[str]:
    """Up to `limit` ids the archive step takes, the oldest anchor first: stale by the
    decay rule and not the target of an open challenge (§8.3)."""
    stale = [c for c in claims if c.id not in challenged and is_stale(c, now)]
    stale.sort(key=lambda c: (c.last_accessed_at or c.created_at, c.id))
    return [c.id for c in stale[:limit]]


def deferred_at(now: datetime, queued: Sequence[datetime]) -> datetime:
    """Where a transiently failing seed goes (§7.7): behind every seed of its agent,
    `max(now, newest + 1 ms)`, so a failing prefix never starves the work behind it."""
    return max(now, max(queued) + DEFER_STEP) if queued else now


def _is_wording(word: str) -> bool:
    return word.islower() and not any(ch.isdigit() for ch in word)


def _single_edit(a: list[str], b: list[str]) -> tuple[str, ...] | None:
    """The words of a one-word substitution, insertion or deletion turning `a` into `b`;
    None when more than one word differs."""
    if len(a) == len(b):
        diff = [
            i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x.casefold() != y.casefold()
        ]
        return (a[diff[0]], b[diff[0]]) if len(diff) == 1 else None
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    folded = [w.casefold() for w in shorter]
    for i, word in enumerate(longer):
        if [w.casefold() for w in longer[:i] + longer[i + 1 :]] == folded:
            return (word,)
    return None
