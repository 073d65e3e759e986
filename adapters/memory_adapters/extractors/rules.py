"""`RulesExtractor`: the offline, deterministic default extractor over English user messages.

Only the user's own messages are read (assistant text is never evidence of a user fact).
Questions, hypotheticals and sarcasm are screened out first (`rules_mood`); the rest is cut
into clauses without their lead-in words (`rules_clauses`: "Actually,", "btw", "Quick
background:", a household "we" read as the user). Each clause goes through the rule table
(`rules_table`: directives, cancellations, the specific state, trip and plan rules, then
the general profile grammar of `rules_grammar`/`rules_profile`) and yields at most one rule's
findings: third-person candidate claims with temporal metadata resolved against the
request's reference time and zone, or directive suggestions that can only become drafts
(R-DIR-1). Everything passes the secret policy before it leaves (R-PRIV-1).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import attrs

from memory_adapters.extractors.entries import user_messages
from memory_adapters.extractors.rules_clauses import Clause, MessageReading, clauses_of
from memory_adapters.extractors.rules_common import Finding
from memory_adapters.extractors.rules_kept import kept_utterances
from memory_adapters.extractors.rules_openings import OpeningIndex
from memory_adapters.extractors.rules_table import RULES
from memory_adapters.extractors.screening import screen
from memory_adapters.gil import GilYield
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import MAX_EXTRACTED_CONTENT_CODE_POINTS
from memory_core.domain.directives import directive_identity_hash
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.extraction import (
    CandidateClaim,
    DirectiveSuggestion,
    ExtractionRequest,
    ExtractionResult,
    RejectionReason,
)
from memory_core.ports.secrets import SecretPolicy

__all__ = ["RulesExtractor"]

_log = logging.getLogger(__name__)


_BY_OPENING = OpeningIndex(RULES)


def findings_of(clause: Clause) -> list[Finding]:
    """The findings of the first rule that answers for `clause` (none when no rule does)."""
    for pattern, handler in _BY_OPENING.for_text(clause.text):
        match = pattern.fullmatch(clause.text)
        if match is None:
            continue
        found = handler(match, clause)
        if found is not None:
            return found
    return []


class RulesExtractor:
    """Pattern rules over user messages; no model, no network, same input -> same output."""

    def __init__(
        self,
        *,
        secret_policy: SecretPolicy | None = None,
        max_content_code_points: int = MAX_EXTRACTED_CONTENT_CODE_POINTS,
        keep_unmatched: bool = True,
    ) -> None:
        self._policy = secret_policy or PatternSecretPolicy()
        self._max_content = max_content_code_points
        # A disclosure no rule understood is kept as said (`rules_kept`); off only to
        # measure what that adds.
        self._keep_unmatched = keep_unmatched

    @property
    def name(self) -> str:
        return "rules"

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        return self.extract_blocking(request, deadline=deadline, cancel=cancel)

    def extract_blocking(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        """All computation and no shared state: safe on a worker thread (`BlockingExtractor`)."""
        candidates: list[CandidateClaim] = []
        suggestions: list[DirectiveSuggestion] = []
        rejected: list[RejectionReason] = []
        for finding in self._findings(request, deadline=deadline, cancel=cancel):
            if isinstance(finding, DirectiveSuggestion):
                suggestions.append(finding)
            elif len(finding.content) > self._max_content:
                rejected.append(RejectionReason.CANDIDATE_TOO_LARGE)
            else:
                candidates.append(finding)
        candidates = _unslot_stale_negations(_unique(candidates))
        screened = screen(self._policy, candidates, _unique_suggestions(suggestions))
        result = ExtractionResult(
            candidates=screened.candidates,
            suggestions=screened.suggestions,
            rejected=(*rejected, *screened.rejected),
        )
        _log.debug(
            "rules extraction: %d entries, %d candidates, %d suggestions, %d rejected",
            len(request.entries),
            len(result.candidates),
            len(result.suggestions),
            len(result.rejected),
        )
        return result

    def _findings(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> Iterator[Finding]:
        pause = GilYield()
        for entry in user_messages(request.entries):
            # Pure CPU work, but a long chunk should still stop when asked to, and on a
            # worker thread it lets the loop's store calls take the GIL (`gil`).
            cancel.raise_if_cancelled()
            deadline.raise_if_expired("rules extraction")
            pause()
            understood = False
            # What reading the message finds, shared by the rules' pass and the kept pass.
            reading = MessageReading(request.reference_time, request.timezone)
            for clause in clauses_of(entry.content, entry_id=entry.id, reading=reading):
                for finding in findings_of(clause):
                    understood = True
                    yield finding
            if not understood and self._keep_unmatched:
                yield from kept_utterances(entry, reading=reading)


def _unique(candidates: list[CandidateClaim]) -> list[CandidateClaim]:
    """One candidate per (kind, content, slot, temporal); repeats add their source ids."""
    merged: dict[tuple[object, ...], CandidateClaim] = {}
    for candidate in candidates:
        key = (candidate.kind, candidate.content, candidate.slot, candidate.temporal)
        first = merged.get(key)
        if first is None:
            merged[key] = candidate
            continue
        ids = tuple(dict.fromkeys((*first.source_entry_ids, *candidate.source_entry_ids)))
        merged[key] = CandidateClaim(
            content=first.content,
            kind=first.kind,
            category=first.category,
            importance=max(first.importance, candidate.importance),
            confidence=first.confidence,
            temporal=first.temporal,
            slot=first.slot,
            source_entry_ids=ids,
        )
    return list(merged.values())


def _unslot_stale_negations(candidates: list[CandidateClaim]) -> list[CandidateClaim]:
    """ "I work at Initech" ... "I started at Globex" ... "I no longer work at Initech": the
    negation ends an older value, not the one its slot now holds, so it keeps no slot and
    cannot retire Globex. Judged within one extraction, where both are in view."""
    held: dict[str, str] = {}
    kept: list[CandidateClaim] = []
    for candidate in candidates:
        slot = candidate.slot
        if slot is not None and " no longer " in candidate.content:
            current = held.get(slot)
            if current is not None and current != candidate.content.replace(" no longer ", " "):
                kept.append(attrs.evolve(candidate, slot=None))
                continue
        elif slot is not None:
            held[slot] = candidate.content
        kept.append(candidate)
    return kept


def _unique_suggestions(suggestions: list[DirectiveSuggestion]) -> list[DirectiveSuggestion]:
    seen: dict[str, DirectiveSuggestion] = {}
    for suggestion in suggestions:
        identity = directive_identity_hash(suggestion.kind, suggestion.content, suggestion.topic)
        seen.setdefault(identity, suggestion)
    return list(seen.values())
