"""The error hierarchy: every failure a caller can meet, typed and naming what is wrong.

Adapters translate library exceptions (apsw, duckdb, httpx) into these; nothing from a
library leaks past an adapter. Messages never carry claim content, queries or secrets:
they name fields, ids and reasons only.
"""

from __future__ import annotations

__all__ = [
    "AgentMemoryError",
    "CapacityRejected",
    "ClearInProgress",
    "ConfigError",
    "DeadlineExceeded",
    "DirectiveCapacityExceeded",
    "FencedError",
    "IdentityMismatch",
    "NotFound",
    "OperationCancelled",
    "ProviderError",
    "ProviderResponseError",
    "ProviderUnavailable",
    "RevisionConflict",
    "ScopeError",
    "SecretRejected",
    "StoreError",
    "StoreQuarantined",
    "TemporalError",
    "ValidationError",
]


class AgentMemoryError(Exception):
    """Base of every error this library raises on purpose."""


class ValidationError(AgentMemoryError, ValueError):
    """Input was rejected; `field` names the offending field (a dotted path)."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class ScopeError(ValidationError):
    """A scope pair (kind, id) is invalid, or an operation would cross scopes."""


class TemporalError(ValidationError):
    """Temporal metadata is malformed (interval, precision, zone, confidence)."""


class SecretRejected(ValidationError):
    """Content looks like a credential and the write policy refuses it (R-PRIV-1).

    `kinds` names the detector(s) that matched; the secret itself is never included.
    """

    def __init__(self, field: str, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds
        super().__init__(field, f"secret-like content rejected ({', '.join(kinds)})")


class DirectiveCapacityExceeded(ValidationError):
    """Activating one more directive would exceed the owner's active-directive limit
    (R-DIR-1); names the `status` field and carries the `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__("status", f"at most {limit} active directives per agent")


class NotFound(AgentMemoryError, LookupError):
    """No such row for this owner. Raised the same way for another agent's id (R-PRIV-2)."""


class RevisionConflict(AgentMemoryError):
    """An optimistic compare-and-set lost: the row's revision moved on."""


class FencedError(AgentMemoryError):
    """The operation belongs to a stale epoch or configuration and must not commit."""


class ClearInProgress(FencedError):
    """The agent has a pending clear job; its claims are neither readable nor writable."""


# Deadlines and cancellation (memory_core.domain.cancellation) bound every wait — on a store, a
# vector index, a tape or a provider — so their errors stand beside the others rather than under
# ProviderError: an `except ProviderError` means "the provider failed", never "time ran out".
class DeadlineExceeded(AgentMemoryError, TimeoutError):
    """The call's `Deadline` passed before it settled."""


class OperationCancelled(AgentMemoryError):
    """The caller cancelled the call through its `CancellationToken`. Not a provider-health
    failure (R-PROV-2)."""


class ProviderError(AgentMemoryError):
    """An embedding or text provider failed. Messages are redacted of secrets (R-PROV-5)."""


class CapacityRejected(ProviderError):
    """Local capacity limits refused the call. Not a provider-health failure (R-PROV-2)."""


class ProviderUnavailable(ProviderError):
    """Transport failure, refused connection, or a retryable server status."""


class ProviderResponseError(ProviderError):
    """The provider answered, but the answer is unusable (status, shape, dimension)."""


class StoreError(AgentMemoryError):
    """A storage adapter failed; the stored state is unchanged unless stated otherwise."""


class StoreQuarantined(StoreError):
    """The store was found corrupt or hung and is quarantined until recovery."""


class IdentityMismatch(StoreError):
    """Provider identity (provider, model, dimension) differs from the store's (R-PROV-4)."""


class ConfigError(AgentMemoryError, ValueError):
    """The configuration file or settings object is invalid; the message names the key."""
