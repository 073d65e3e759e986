"""The secret-policy port: one policy shared by tools, routes and background tasks (R-PRIV-1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

# A domain value, named here too because it is what the port returns.
from memory_core.domain.secrets import SecretFinding

__all__ = ["SecretFinding", "SecretPolicy"]


@runtime_checkable
class SecretPolicy(Protocol):
    """Detects and redacts credentials. Pure and deterministic; never logs what it finds."""

    def find(self, text: str) -> Sequence[SecretFinding]:
        """Non-overlapping findings ordered by `start`."""
        ...

    def redact(self, text: str) -> str:
        """`text` with every finding replaced by `[REDACTED:<kind>]`."""
        ...

    def check_write(self, text: str, *, field: str = "content") -> str:
        """The text to store: unchanged when clean; otherwise rejected (SecretRejected naming
        `field`) or redacted, as the policy is configured."""
        ...
