"""The typed plugin registry: what callers use instead of raw `pm.hook` (R-ARCH-3, R-ARCH-5).

The loader fills a `PluginRegistry` once, from the registration hooks; afterwards nothing
calls a hook. Callers look registrations up by (family, name) and build port objects with
the typed `create_*` helpers, which check that the factory's product satisfies the
family's port, so a wrong plugin fails at composition time with its name and
distribution instead of deep inside a service.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, TypeVar, cast

import attrs

from memory_core.ports.claims import ClaimStore
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.cursor import CursorStore
from memory_core.ports.extraction import Extractor
from memory_core.ports.providers import EmbeddingProvider, TextProvider
from memory_core.ports.secrets import SecretPolicy
from memory_core.ports.tape import TapeRawEntryReader
from memory_core.ports.vectors import VectorStore
from memory_plugins.context import FactoryContext
from memory_plugins.errors import DuplicatePluginError, PluginError, PluginLoadError, PluginNotFound
from memory_plugins.hookspecs import PORT_FAMILIES

__all__ = [
    "FAMILY_PORTS",
    "LOCAL_DISTRIBUTION",
    "PLUGIN_NAME_PATTERN",
    "PluginFailure",
    "PluginRegistry",
    "Registration",
    "duplicate_error",
]

T = TypeVar("T")

# Config files and the CLI spell plugin names; keep them shell- and TOML-friendly.
PLUGIN_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

# The distribution recorded for plugin objects handed to the loader directly (tests, hosts).
LOCAL_DISTRIBUTION = "<local>"

# family -> ports; a factory's product must satisfy at least one of them. Clocks may be
# business time, monotonic time or both; a tape must at least be readable.
FAMILY_PORTS: Mapping[str, tuple[type, ...]] = {
    "claim_store": (ClaimStore,),
    "cursor_store": (CursorStore,),
    "vector_store": (VectorStore,),
    "embedding_provider": (EmbeddingProvider,),
    "text_provider": (TextProvider,),
    "extractor": (Extractor,),
    "tape": (TapeRawEntryReader,),
    "clock": (DomainClock, InfraClock),
    "secret_policy": (SecretPolicy,),
}
assert set(FAMILY_PORTS) == set(PORT_FAMILIES), "every hook family needs its port(s)"


@attrs.frozen(kw_only=True)
class Registration:
    """One implementation a plugin offered: `factory(context)` builds the port object."""

    family: str
    name: str
    factory: Callable[[FactoryContext], object] = attrs.field(eq=False)
    description: str = ""
    capabilities: frozenset[str] = frozenset()
    distribution: str = LOCAL_DISTRIBUTION
    version: str | None = None
    module: str = ""

    @property
    def origin(self) -> str:
        """`distribution version` as people read it in errors and listings."""
        return self.distribution if self.version is None else f"{self.distribution} {self.version}"


@attrs.frozen(kw_only=True)
class PluginFailure:
    """A plugin that was skipped: which entry point (or plugin name), where from, and why."""

    entry_point: str
    distribution: str
    version: str | None
    error: str

    @property
    def origin(self) -> str:
        return self.distribution if self.version is None else f"{self.distribution} {self.version}"

    def describe(self) -> str:
        return f"{self.entry_point} ({self.origin}): {self.error}"


class PluginRegistry:
    """Registrations by (family, name), plus the failures met while loading them."""

    def __init__(
        self, registrations: Iterable[Registration] = (), *, failures: Iterable[PluginFailure] = ()
    ) -> None:
        self._by_key: dict[tuple[str, str], Registration] = {}
        for registration in registrations:
            if registration.family not in PORT_FAMILIES:
                raise PluginError(f"unknown port family {registration.family!r}")
            key = (registration.family, registration.name)
            first = self._by_key.get(key)
            if first is not None:
                raise duplicate_error(first, registration)
            self._by_key[key] = registration
        self._failures = tuple(failures)

    @property
    def failures(self) -> tuple[PluginFailure, ...]:
        return self._failures

    def families(self) -> tuple[str, ...]:
        """Every port family a plugin can register into, sorted (whether or not one did)."""
        return tuple(sorted(PORT_FAMILIES))

    def registrations(self, family: str | None = None) -> tuple[Registration, ...]:
        """All registrations, or one family's, sorted by (family, name)."""
        if family is not None:
            _require_family(family)
        return tuple(self._by_key[key] for key in sorted(self._by_key) if family in (None, key[0]))

    def names(self, family: str) -> tuple[str, ...]:
        return tuple(registration.name for registration in self.registrations(family))

    def get(self, family: str, name: str) -> Registration:
        """The registration, or PluginNotFound listing what is available and what broke."""
        _require_family(family)
        found = self._by_key.get((family, name))
        if found is not None:
            return found
        available = ", ".join(self.names(family)) or "none"
        message = f"no {family} plugin named {name!r} (available: {available})"
        if self._failures:
            # The broken plugin may be the one that would have provided the name (R-ARCH-3).
            broken = "; ".join(failure.describe() for failure in self._failures)
            message += f"; {len(self._failures)} plugin(s) failed to load: {broken}"
        raise PluginNotFound(message)

    def create(self, family: str, name: str, context: FactoryContext) -> object:
        """Build the named plugin's object and check it satisfies one of the family's ports."""
        _require_family(family)
        return self._create(family, name, context, FAMILY_PORTS[family])

    # --- typed helpers: what the composition root calls --------------------------------
    def create_claim_store(self, name: str, context: FactoryContext) -> ClaimStore:
        return self._create_as("claim_store", name, context, ClaimStore)

    def create_cursor_store(self, name: str, context: FactoryContext) -> CursorStore:
        return self._create_as("cursor_store", name, context, CursorStore)

    def create_vector_store(self, name: str, context: FactoryContext) -> VectorStore:
        return self._create_as("vector_store", name, context, VectorStore)

    def create_embedding_provider(self, name: str, context: FactoryContext) -> EmbeddingProvider:
        return self._create_as("embedding_provider", name, context, EmbeddingProvider)

    def create_text_provider(self, name: str, context: FactoryContext) -> TextProvider:
        return self._create_as("text_provider", name, context, TextProvider)

    def create_extractor(self, name: str, context: FactoryContext) -> Extractor:
        return self._create_as("extractor", name, context, Extractor)

    def create_tape(self, name: str, context: FactoryContext) -> TapeRawEntryReader:
        return self._create_as("tape", name, context, TapeRawEntryReader)

    def create_domain_clock(self, name: str, context: FactoryContext) -> DomainClock:
        return self._create_as("clock", name, context, DomainClock)

    def create_infra_clock(self, name: str, context: FactoryContext) -> InfraClock:
        return self._create_as("clock", name, context, InfraClock)

    def create_secret_policy(self, name: str, context: FactoryContext) -> SecretPolicy:
        return self._create_as("secret_policy", name, context, SecretPolicy)

    def _create_as(self, family: str, name: str, context: FactoryContext, port: type[T]) -> T:
        return cast(T, self._create(family, name, context, (port,)))

    def _create(
        self, family: str, name: str, context: FactoryContext, ports: tuple[type, ...]
    ) -> object:
        registration = self.get(family, name)
        try:
            product = registration.factory(context)
        except PluginError:
            raise
        except Exception as exc:
            # Options errors (ConfigError) and adapter failures alike: name who failed.
            raise PluginLoadError(
                f"{family} plugin {name!r} from {registration.origin} failed to build: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not any(isinstance(product, port) for port in ports):
            wanted = " or ".join(port.__name__ for port in ports)
            missing = sorted(set().union(*(_missing_members(product, port) for port in ports)))
            raise PluginLoadError(
                f"{family} plugin {name!r} from {registration.origin} produced "
                f"{type(product).__qualname__}, which does not satisfy {wanted}"
                + (f" (missing: {', '.join(missing)})" if missing else "")
            )
        return product


def duplicate_error(first: Registration, second: Registration) -> DuplicatePluginError:
    """The error for two registrations of one (family, name), naming both distributions."""
    return DuplicatePluginError(
        f"{first.family} plugin {first.name!r} is registered twice: by {first.origin} "
        f"({first.module}) and by {second.origin} ({second.module})"
    )


def _require_family(family: str) -> None:
    if family not in PORT_FAMILIES:
        known = ", ".join(sorted(PORT_FAMILIES))
        raise PluginNotFound(f"no port family {family!r} (families: {known})")


def _missing_members(product: object, port: type) -> set[str]:
    # runtime_checkable only checks presence, so presence is all we can report as missing.
    members: set[str] = set()
    for klass in port.__mro__:
        if klass in (Protocol, object) or klass.__module__ == "typing":
            continue
        members.update(name for name in vars(klass) if not name.startswith("_"))
        members.update(
            name for name in getattr(klass, "__annotations__", {}) if not name.startswith("_")
        )
    return {name for name in members if not hasattr(product, name)}
