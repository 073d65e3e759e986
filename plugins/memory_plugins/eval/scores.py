"""Shared pieces of evaluation reports: gates, means, and the scoring policy as a document."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.services.read.scoring import ScoringPolicy
from memory_core.settings import MemorySettings

__all__ = ["Gate", "mean", "policy_document", "scoring_policy"]


@attrs.frozen(kw_only=True)
class Gate:
    """One pass/fail threshold on a measured value."""

    name: str
    value: float
    threshold: float
    comparison: str  # ">=" or "<="
    passed: bool

    @classmethod
    def at_least(cls, name: str, value: float, threshold: float) -> Gate:
        # A hair of tolerance: means of 1/n fractions are not exact in binary.
        return cls(
            name=name,
            value=value,
            threshold=threshold,
            comparison=">=",
            passed=value >= threshold - 1e-9,
        )

    @classmethod
    def at_most(cls, name: str, value: float, threshold: float) -> Gate:
        return cls(
            name=name,
            value=value,
            threshold=threshold,
            comparison="<=",
            passed=value <= threshold + 1e-9,
        )


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def policy_document(policy: ScoringPolicy) -> dict[str, Any]:
    """The fusion constants that produced a report, so every number can be reproduced."""
    document = attrs.asdict(policy, recurse=False)
    document["temporal"] = attrs.asdict(policy.temporal)
    return document


def scoring_policy(settings: MemorySettings, overrides: Mapping[str, Any] | None) -> ScoringPolicy:
    """The settings' policy with `overrides` (from `--scoring KEY=VALUE`); an unknown or
    invalid constant is a ConfigError naming it."""
    overrides = dict(overrides or {})
    known = {field.name for field in attrs.fields(ScoringPolicy)} - {"temporal"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(
            f"scoring: unknown constant(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return ScoringPolicy.from_settings(settings, **overrides)
