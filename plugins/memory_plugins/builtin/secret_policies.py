"""First-party secret-policy registration: "patterns" — the core's pattern detector (R-PRIV-1).

Registered through the `agent_memory` entry-point group like any third-party plugin
(R-ARCH-3); chosen by name from `[plugins.secret_policy]` (R-ARCH-5).
"""

from __future__ import annotations

from typing import Literal

import attrs

from memory_core.domain.secrets import PatternSecretPolicy
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = ["PatternPolicyOptions", "agent_memory_register_secret_policies"]


@attrs.frozen(kw_only=True)
class PatternPolicyOptions:
    """`[plugins.secret_policy.options]` of the "patterns" policy."""

    # What a write containing a secret gets: refused (SecretRejected) or stored redacted.
    # None keeps the policy's own default, so that default lives in one place.
    mode: Literal["reject", "redact"] | None = None


def _make_pattern_policy(context: FactoryContext) -> PatternSecretPolicy:
    options = structure_options(context.options, PatternPolicyOptions, family="secret_policy")
    if options.mode is None:
        return PatternSecretPolicy()
    return PatternSecretPolicy(mode=options.mode)


@hookimpl
def agent_memory_register_secret_policies(register: Register) -> None:
    register(
        "patterns",
        _make_pattern_policy,
        description="Regex detectors for API keys, tokens, passwords, card numbers, private keys.",
        capabilities=("reject", "redact"),
    )
