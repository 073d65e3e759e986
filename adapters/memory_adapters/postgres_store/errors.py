"""psycopg exceptions → the domain's error types; nothing from psycopg leaves the adapter.

Our own trigger and check failures carry private SQLSTATEs (class `AM`) or named
constraints, so they map to typed errors without parsing message text. Messages name the
failure class only: PostgreSQL's own message may quote a row's values, never ours.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import psycopg
from psycopg import errors as pg_errors

from memory_core.domain.errors import (
    AgentMemoryError,
    ClearInProgress,
    DeadlineExceeded,
    ScopeError,
    StoreError,
    StoreQuarantined,
    TemporalError,
)

__all__ = [
    "CLEAR_GUARD_SQLSTATE",
    "SCOPE_CONSTRAINT",
    "TEMPORAL_CONSTRAINT",
    "translate",
    "translate_errors",
]

_log = logging.getLogger(__name__)

# Raised by the clear-guard trigger (R-FORGET-3).
CLEAR_GUARD_SQLSTATE = "AM001"
TEMPORAL_CONSTRAINT = "agent_memory_temporal_valid"
SCOPE_CONSTRAINT = "agent_memory_scope_valid"

# Data corruption (XX001, XX002) and internal errors: the store cannot be trusted.
_FATAL_SQLSTATES = frozenset({"XX000", "XX001", "XX002"})


def translate(exc: BaseException, what: str = "postgres call") -> BaseException:
    """The domain error for `exc` (itself when it already is one or is not psycopg's)."""
    if isinstance(exc, AgentMemoryError) or not isinstance(exc, psycopg.Error):
        return exc
    state = getattr(exc, "sqlstate", None)
    if state == CLEAR_GUARD_SQLSTATE:
        return ClearInProgress("a clear job is pending for this agent")
    if isinstance(exc, pg_errors.CheckViolation):
        constraint = getattr(exc.diag, "constraint_name", None)
        if constraint == TEMPORAL_CONSTRAINT:
            return TemporalError("temporal", "violates stored invariants")
        if constraint == SCOPE_CONSTRAINT:
            return ScopeError("scope", "violates stored invariants")
        return StoreError(f"{what}: check constraint {constraint or '?'} violated")
    if isinstance(exc, pg_errors.IntegrityError):
        return StoreError(f"{what}: constraint violated ({type(exc).__name__})")
    if isinstance(exc, pg_errors.QueryCanceled):
        return DeadlineExceeded(f"{what} was cancelled by the server's statement timeout")
    if isinstance(exc, pg_errors.LockNotAvailable):
        return StoreError(f"{what}: lock wait exceeded the lock timeout")
    if state in _FATAL_SQLSTATES:
        _log.error("postgres reported corruption or an internal error: %s", state)
        return StoreQuarantined(f"{what}: server reported {type(exc).__name__}")
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"{what}: connection failed ({type(exc).__name__})")
    return StoreError(f"{what}: postgres failure ({type(exc).__name__})")


@contextlib.contextmanager
def translate_errors(what: str = "postgres call") -> Iterator[None]:
    """Re-raise psycopg exceptions as domain errors, chained for debugging."""
    try:
        yield
    except psycopg.Error as exc:
        raise translate(exc, what) from exc
