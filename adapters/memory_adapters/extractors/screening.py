"""The secret policy applied to what an extractor proposes, before anything leaves it (R-PRIV-1).

Candidates go through `check_write`, so the configured policy decides between refusing and
redacting. Suggestions are dropped on any finding: a directive with a redaction marker in it
says nothing a user could approve.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from memory_core.domain.errors import SecretRejected
from memory_core.ports.extraction import CandidateClaim, DirectiveSuggestion, RejectionReason
from memory_core.ports.secrets import SecretPolicy

__all__ = ["Screened", "screen"]


@attrs.frozen(kw_only=True)
class Screened:
    candidates: tuple[CandidateClaim, ...]
    suggestions: tuple[DirectiveSuggestion, ...]
    rejected: tuple[RejectionReason, ...]


def screen(
    policy: SecretPolicy,
    candidates: Iterable[CandidateClaim],
    suggestions: Iterable[DirectiveSuggestion] = (),
) -> Screened:
    kept: list[CandidateClaim] = []
    rejected: list[RejectionReason] = []
    for candidate in candidates:
        try:
            content = policy.check_write(candidate.content, field="content")
        except SecretRejected:
            rejected.append(RejectionReason.SECRET)
            continue
        kept.append(
            candidate if content == candidate.content else attrs.evolve(candidate, content=content)
        )
    kept_suggestions: list[DirectiveSuggestion] = []
    for suggestion in suggestions:
        if policy.find(suggestion.content) or (suggestion.topic and policy.find(suggestion.topic)):
            rejected.append(RejectionReason.SUGGESTION_SECRET)
            continue
        kept_suggestions.append(suggestion)
    return Screened(
        candidates=tuple(kept), suggestions=tuple(kept_suggestions), rejected=tuple(rejected)
    )
