"""Shared values for the storage-rule tests: a claim factory and a redacting secret policy."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from memory_core.domain.claims import Claim
from memory_core.domain.errors import SecretRejected
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.ports.secrets import SecretFinding

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
_SECRET = re.compile(r"sk-[a-z0-9]{8}")


class RedactingPolicy:
    """Redacts `sk-xxxxxxxx` on write, or rejects it when `reject`."""

    def __init__(self, *, reject: bool = False) -> None:
        self._reject = reject

    def find(self, text: str) -> Sequence[SecretFinding]:
        return [
            SecretFinding(kind="key", start=m.start(), end=m.end()) for m in _SECRET.finditer(text)
        ]

    def redact(self, text: str) -> str:
        return _SECRET.sub("[REDACTED:key]", text)

    def check_write(self, text: str, *, field: str = "content") -> str:
        if self._reject and self.find(text):
            raise SecretRejected(field, ("key",))
        return self.redact(text)


def state(valid_from: datetime | None, valid_until: datetime | None = None) -> TemporalMetadata:
    return TemporalMetadata(
        kind="state",  # type: ignore[arg-type]
        interval=Interval(valid_from=valid_from, valid_until=valid_until),
        precision="day",  # type: ignore[arg-type]
        timezone="UTC",
        confidence=0.9,
    )


def make_claim(claim_id: str = "mem-1", **fields: object) -> Claim:
    values: dict[str, object] = {
        "id": claim_id,
        "agent_id": "agent-a",
        "kind": "semantic",
        "content": "lives in Paris",
        "canonical_content": "lives in paris",
        "scope": Scope.agent(),
        "created_at": T0,
        "updated_at": T0,
    }
    values.update(fields)
    return Claim(**values)  # type: ignore[arg-type]


__all__ = ["T0", "RedactingPolicy", "make_claim", "state"]
