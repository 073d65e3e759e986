"""What one decision batch did (`WriteReport`), and the counters `apply` fills on the way."""

from __future__ import annotations

from collections import Counter

import attrs

from memory_core.ports.claims import InsertOutcome, InsertStatus
from memory_core.services.write.decision.plan import DecisionPlan

__all__ = ["Tally", "WriteReport"]


@attrs.frozen(kw_only=True)
class WriteReport:
    """What one batch did, as ids and counts only (safe for logs, audit and anchors)."""

    stored_ids: tuple[str, ...] = ()
    superseded: tuple[tuple[str, str], ...] = ()  # (retired id, successor id)
    duplicate_ids: tuple[str, ...] = ()  # existing rows an exact replay matched
    revived_ids: tuple[str, ...] = ()  # retired rows a candidate returned to, live again
    updated: int = 0
    noop: int = 0
    challenged: int = 0
    suppressed: int = 0
    merged_in_batch: int = 0
    decision_fallbacks: int = 0
    rejected: tuple[tuple[str, int], ...] = ()  # (reason, count), sorted by reason
    directive_drafts: tuple[str, ...] = ()

    @property
    def rejected_total(self) -> int:
        return sum(count for _, count in self.rejected)

    def rejected_count(self, reason: str) -> int:
        return dict(self.rejected).get(str(reason), 0)

    def payload(self) -> dict[str, object]:
        return {
            "memoryIds": list(self.stored_ids),
            "count": len(self.stored_ids),
            "superseded": [list(pair) for pair in self.superseded],
            "duplicates": len(self.duplicate_ids),
            "revived": list(self.revived_ids),
            "updated": self.updated,
            "noop": self.noop,
            "challenged": self.challenged,
            "suppressed": self.suppressed,
            "mergedInBatch": self.merged_in_batch,
            "decisionFallbacks": self.decision_fallbacks,
            "rejected": dict(self.rejected),
            "directiveDrafts": list(self.directive_drafts),
        }


class Tally:
    """Mutable counters of one `apply`; frozen into a WriteReport at the end."""

    def __init__(self, plan: DecisionPlan) -> None:
        self._plan = plan
        self.stored: list[str] = []
        self.superseded: list[tuple[str, str]] = []
        self.duplicates: list[str] = []
        self.revived: list[str] = []
        self.rejected: Counter[str] = Counter(plan.rejected)
        self.drafts: list[str] = []
        self.updated = self.noop = self.challenged = self.suppressed = 0

    def record(self, outcome: InsertOutcome) -> None:
        if outcome.status is InsertStatus.SUPPRESSED:
            self.suppressed += 1
        elif outcome.claim is None:
            return
        elif outcome.status is InsertStatus.INSERTED:
            self.stored.append(outcome.claim.id)
        elif outcome.status is InsertStatus.REVIVED:
            if outcome.claim.id not in self.revived:
                self.revived.append(outcome.claim.id)
        elif outcome.claim.id not in self.stored and outcome.claim.id not in self.duplicates:
            self.duplicates.append(outcome.claim.id)

    def report(self) -> WriteReport:
        return WriteReport(
            stored_ids=tuple(self.stored),
            superseded=tuple(self.superseded),
            duplicate_ids=tuple(self.duplicates),
            revived_ids=tuple(self.revived),
            updated=self.updated,
            noop=self.noop,
            challenged=self.challenged,
            suppressed=self.suppressed,
            merged_in_batch=self._plan.merged_in_batch,
            decision_fallbacks=self._plan.decision_fallbacks,
            rejected=tuple(sorted(self.rejected.items())),
            directive_drafts=tuple(self.drafts),
        )
