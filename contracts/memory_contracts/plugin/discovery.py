"""Finding the plugin under test through its entry points, loading it strictly, and the
factory context its products are built with."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import importlib_metadata
import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.providers import TextProvider
from memory_core.settings import MemorySettings
from memory_plugins.context import FactoryContext
from memory_plugins.loader import ENTRY_POINT_GROUP, load_plugins
from memory_plugins.registry import PluginRegistry

AGENT = "conformance-agent"
# Families whose factories the composition root calls before the shared ports exist.
_BUILT_FIRST = frozenset({"clock", "secret_policy"})


class _Monotonic:
    """Real monotonic time for the smoke checks' deadlines: a manual clock would never
    let a hanging call's deadline pass."""

    def monotonic(self) -> float:
        return time.monotonic()


REAL_TIME = _Monotonic()


@attrs.frozen(kw_only=True)
class PluginUnderTest:
    """The installed distribution a conformance run checks, and which entry points of it."""

    distribution: str
    version: str | None
    entry_points: tuple[str, ...]

    @property
    def origin(self) -> str:
        return self.distribution if self.version is None else f"{self.distribution} {self.version}"


def find_plugin(
    *, entry_point: str | None = None, distribution: str | None = None
) -> tuple[PluginUnderTest, list[Any]]:
    """The plugin and its installed `agent_memory` entry points named `entry_point` (of
    `distribution`, if given), or all of `distribution`'s; fails the test, listing what is
    installed, when there are none."""
    if entry_point is None and distribution is None:
        pytest.fail("set `entry_point` or `distribution` on your PluginConformance subclass")
    # Entry-point discovery outside the loader: the suite must say *which* entry point of
    # which distribution it found, before the loader takes over.
    found = list(importlib_metadata.entry_points(group=ENTRY_POINT_GROUP))
    matches = [
        ep
        for ep in found
        if (entry_point is None or ep.name == entry_point)
        and (distribution is None or _same_name(_dist_name(ep), distribution))
    ]
    if not matches:
        installed = ", ".join(sorted(f"{ep.name} ({_dist_name(ep)})" for ep in found)) or "none"
        wanted = " of ".join(
            part
            for part in (
                f"entry point {entry_point!r}" if entry_point else "",
                f"distribution {distribution!r}" if distribution else "",
            )
            if part
        )
        pytest.fail(
            f"no {wanted} in the {ENTRY_POINT_GROUP!r} entry-point group; is the plugin "
            f"installed (pip install -e .)? Installed: {installed}",
            pytrace=False,
        )
    distributions = sorted({_dist_name(ep) for ep in matches})
    if len(distributions) > 1:
        pytest.fail(
            f"entry point {entry_point!r} is installed by {', '.join(distributions)}; set "
            "`distribution` too",
            pytrace=False,
        )
    dist = getattr(matches[0], "dist", None)
    return (
        PluginUnderTest(
            distribution=distributions[0],
            version=dist.version if dist is not None else None,
            entry_points=tuple(sorted(ep.name for ep in matches)),
        ),
        matches,
    )


def load_strictly(distribution: str) -> PluginRegistry:
    """The registry of one distribution's plugins, loaded as the host loads them but strict:
    any import error, unknown hook or duplicate raises with the plugin's name."""
    return load_plugins(strict=True, distributions=[distribution]).registry


def conformance_context(
    data_dir: Path,
    *,
    family: str,
    options: Mapping[str, Any] | None = None,
    clock: ManualClock | None = None,
    text_provider: TextProvider | None = None,
    settings: MemorySettings | None = None,
) -> FactoryContext:
    """A `FactoryContext` like the composition root's: clock and secret-policy factories
    get no shared ports (those are built first), every other family gets a `ManualClock`
    for both clocks and the `PatternSecretPolicy`."""
    data_dir.mkdir(parents=True, exist_ok=True)
    base = FactoryContext(
        data_dir=data_dir, settings=settings or MemorySettings(), options=dict(options or {})
    )
    if family in _BUILT_FIRST:
        return base
    clock = clock or ManualClock()
    return attrs.evolve(
        base,
        domain_clock=clock,
        infra_clock=clock,
        secret_policy=PatternSecretPolicy(),
        text_provider=text_provider,
    )


def _dist_name(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else "<unknown distribution>"


def _same_name(first: str, second: str) -> bool:
    def normal(name: str) -> str:
        return name.replace("_", "-").replace(".", "-").lower()

    return normal(first) == normal(second)
