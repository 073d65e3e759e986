"""Helpers for `ClaimStoreContract`: a deterministic secret policy and draft builders.

The policy rejects one recognisable marker, so the contract checks that a store *applies*
the policy it was given (R-PRIV-1) without depending on any detector's tuning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from memory_core.domain.claims import ClaimDraft, ClaimSource, EmbeddingIdentity
from memory_core.domain.errors import SecretRejected
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.ports.secrets import SecretFinding

__all__ = [
    "CONTRACT_EPOCH",
    "IDENTITY",
    "SECRET_SAMPLE",
    "MarkerSecretPolicy",
    "claim_draft",
    "full_source",
    "state_temporal",
]

CONTRACT_EPOCH = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
IDENTITY = EmbeddingIdentity(provider="contract", model="m1", dim=8)
SECRET_SAMPLE = "CONTRACT-SECRET-7Q2X9"
_MARKER = re.compile(r"CONTRACT-SECRET-[A-Z0-9]+")


class MarkerSecretPolicy:
    """`SecretPolicy` that finds `CONTRACT-SECRET-…` and rejects it on write."""

    def find(self, text: str) -> Sequence[SecretFinding]:
        return [
            SecretFinding(kind="contract_marker", start=m.start(), end=m.end())
            for m in _MARKER.finditer(text)
        ]

    def redact(self, text: str) -> str:
        return _MARKER.sub("[REDACTED:contract_marker]", text)

    def check_write(self, text: str, *, field: str = "content") -> str:
        if self.find(text):
            raise SecretRejected(field, ("contract_marker",))
        return text


def claim_draft(
    content: str,
    *,
    agent_id: str = "agent-a",
    kind: str = "semantic",
    scope: Scope | None = None,
    **fields: object,
) -> ClaimDraft:
    return ClaimDraft(
        agent_id=agent_id,
        kind=kind,  # type: ignore[arg-type]
        content=content,
        scope=scope or Scope.agent(),
        **fields,  # type: ignore[arg-type]
    )


def state_temporal(valid_from: datetime, confidence: float = 0.9) -> TemporalMetadata:
    return TemporalMetadata(
        kind="state",  # type: ignore[arg-type]
        interval=Interval(valid_from=valid_from),
        precision="day",  # type: ignore[arg-type]
        timezone="Europe/Berlin",
        confidence=confidence,
    )


def full_source() -> ClaimSource:
    return ClaimSource(
        session_id="sess-1",
        entry_ids=("e1", "e2"),
        first_order_seq=3,
        last_order_seq=7,
        extractor="rules-v1",
    )
