"""What every step of a pass shares: the store roles it calls and its execution fence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs

from memory_core.domain.cancellation import CancellationToken
from memory_core.domain.errors import OperationCancelled
from memory_core.ports.claims import ClaimReader, Consolidation

__all__ = ["MaintenanceStore", "PassFence"]


class MaintenanceStore(ClaimReader, Consolidation, Protocol):
    """What a pass reads and writes (a `ClaimStore` is one)."""


@attrs.define
class PassFence:
    """The execution fence of one pass: the service's epoch when it began and its token.
    `stop()` advances the epoch and cancels the token; `check` is the checkpoint."""

    epoch: int
    current: Callable[[], int]
    token: CancellationToken = attrs.field(factory=CancellationToken)

    @property
    def valid(self) -> bool:
        return self.epoch == self.current() and not self.token.cancelled

    def check(self) -> None:
        if not self.valid:
            raise OperationCancelled("maintenance stopped")
