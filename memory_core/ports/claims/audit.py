"""The audit trail, read back: what happened to a claim, as ids, counts and enums.

Events are written by the store inside the transaction of the mutation they describe (an
add, an edit, an archive, a delete); `refs` holds ids, counts and flags only, never content
(R-ARCH-6). This role reads them for a claim's history. It is optional: a store without an
audit trail (the in-memory fake) does not implement it, and history then shows lineage alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

__all__ = ["AuditEvent", "AuditReader"]


@attrs.frozen(kw_only=True)
class AuditEvent:
    event: str  # e.g. memory/add, memory/manual_edit, memory/archive, memory/delete
    actor: str  # user, runtime, scheduler, system
    memory_id: str | None
    refs: Mapping[str, int | str | bool | None]
    status: str  # completed, skipped, failed
    created_at: datetime


@runtime_checkable
class AuditReader(Protocol):
    def list_audit(
        self, agent_id: str, *, memory_ids: Sequence[str], limit: int
    ) -> Sequence[AuditEvent]:
        """The owner's events about any of `memory_ids`, oldest first, at most `limit`
        (the newest ones when there are more). Another owner's ids give nothing."""
        ...
