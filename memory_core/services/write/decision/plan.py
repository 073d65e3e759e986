"""A decision plan: what `DecisionService.plan` decided for each candidate of one batch, for
`apply` to carry out under the agent's write lock."""

from __future__ import annotations

import attrs

from memory_core.domain.claims import Claim, ClaimDraft
from memory_core.ports.extraction import DirectiveSuggestion
from memory_core.services.write.decision.candidates import WriteContext
from memory_core.services.write.decision.prompt import DecisionAction

__all__ = ["DecisionPlan", "PlannedWrite"]


@attrs.frozen(kw_only=True)
class PlannedWrite:
    """One candidate's fate. `target` is the same-scope claim a targeted decision names."""

    action: DecisionAction
    draft: ClaimDraft
    target: Claim | None = None

    @property
    def said_order(self) -> int:
        """Where the candidate's messages stand in their session; -1 when unknown."""
        seq = self.draft.source.last_order_seq
        return -1 if seq is None else seq


@attrs.frozen(kw_only=True)
class DecisionPlan:
    context: WriteContext
    writes: tuple[PlannedWrite, ...]
    suggestions: tuple[DirectiveSuggestion, ...] = ()
    rejected: tuple[str, ...] = ()  # reason codes (extractor's and ours)
    merged_in_batch: int = 0
    decision_fallbacks: int = 0
