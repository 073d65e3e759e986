"""The blocking-call port: async code runs a synchronous store call under a deadline.

The claim store's port is synchronous because SQLite is local and answers within its short
busy timeout. A networked store (PostgreSQL) can wait far longer — on a lock, a slow plan, a
lost server — and a synchronous call made on the event loop stops every other turn with it.
The read path therefore makes each store call through this port: the composition root hands
it an implementation that fits the store (`memory_adapters.offload`: inline for a local
store, a bounded thread executor for a networked one). The core cannot import a concurrency
library (R-ARCH-1), so this is only the seam.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, runtime_checkable

from memory_core.domain.cancellation import CancellationToken, Deadline

__all__ = ["BlockingCalls"]

T = TypeVar("T")


@runtime_checkable
class BlockingCalls(Protocol):
    """Runs blocking calls for code on the event loop."""

    async def run(
        self, call: Callable[[], T], *, deadline: Deadline, cancel: CancellationToken
    ) -> T:
        """`call()`'s result, or its own error re-raised unchanged.

        Raises DeadlineExceeded once `deadline` passes and OperationCancelled once `cancel`
        fires, at once, whether or not `call` has returned: a call still running then is
        abandoned (its eventual result discarded) and the store is asked to interrupt it. A
        call is not started when the deadline has already passed or the token is cancelled.
        """
        ...

    def close(self) -> None:
        """Stop taking calls and release any thread (the service calls it before it closes
        the store). Idempotent."""
        ...
