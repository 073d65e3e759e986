"""The audit trail, read back: what happened to a claim, as ids, counts and enums.

Events are written by the store inside the transaction of the mutation they describe (an
add, an edit, an archive, a delete); `refs` holds ids, counts and flags only, never content
(R-ARCH-6). This role reads them back: a claim's history, and an agent's whole trail for the
operator (`agent-memory audit`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

__all__ = ["AuditEvent", "AuditReader"]


@attrs.frozen(kw_only=True)
class AuditEvent:
    """One audit row as read back: ids, counts and closed enums only, never content."""

    event: str  # e.g. memory/add, memory/manual_edit, memory/archive, memory/delete
    actor: str  # user, runtime, scheduler, system
    memory_id: str | None
    refs: Mapping[str, int | str | bool | None]
    status: str  # completed, skipped, failed
    created_at: datetime


@runtime_checkable
class AuditReader(Protocol):
    def list_audit(
        self, agent_id: str, *, limit: int, memory_ids: Sequence[str] | None = None
    ) -> Sequence[AuditEvent]:
        """The owner's newest events first, at most `limit`; with `memory_ids` only those
        about any of them. Another owner's ids give nothing."""
        ...
