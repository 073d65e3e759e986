"""Plugin discovery and loading: entry points -> pluggy -> a typed `PluginRegistry` (R-ARCH-3).

`load_plugins` builds a fresh `PluginManager` per call (no process-global state), imports
every module of the `agent_memory` entry-point group one by one — pluggy's own
`load_setuptools_entrypoints` stops at the first broken plugin and does not say which
distribution it came from — runs `check_pending()` so a misspelt hook is an error, then
calls each registration hook implementation individually with a `register` callback bound
to its family and distribution, so every registration records where it came from.

Non-strict mode (the CLI default) reports a broken plugin (entry point, distribution,
version, error) in `LoadResult.failures`, logs a warning and skips it; strict mode (tests,
`--strict-plugins`) raises PluginLoadError / DuplicatePluginError at the first problem.
This module is the only user of entry-point discovery in the project; it uses the standard
library's `importlib.metadata` (the backport alone cost ~0.3 s to import, issue 15).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import pluggy

from memory_plugins import hookspecs
from memory_plugins.context import FactoryContext
from memory_plugins.errors import PluginError, PluginLoadError
from memory_plugins.hookspecs import PORT_FAMILIES, PROJECT_NAME, Register
from memory_plugins.registry import (
    LOCAL_DISTRIBUTION,
    PLUGIN_NAME_PATTERN,
    PluginFailure,
    PluginRegistry,
    Registration,
    duplicate_error,
)

__all__ = ["ENTRY_POINT_GROUP", "LoadResult", "load_plugins"]

ENTRY_POINT_GROUP = PROJECT_NAME

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class LoadResult:
    """The registry callers use, and every plugin that was skipped (empty in strict mode)."""

    registry: PluginRegistry
    failures: tuple[PluginFailure, ...] = ()


@attrs.frozen(kw_only=True)
class _Source:
    """Where one registered plugin object came from."""

    entry_point: str
    distribution: str
    version: str | None

    @property
    def origin(self) -> str:
        return self.distribution if self.version is None else f"{self.distribution} {self.version}"


class _Loading:
    """State of one `load_plugins` call: the manager, provenance and failures so far."""

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.sources: dict[str, _Source] = {}
        self.failures: list[PluginFailure] = []

    def fail(
        self,
        source: _Source,
        error: str,
        *,
        message: str,
        cause: BaseException | None,
        error_type: type[PluginError] = PluginLoadError,
    ) -> None:
        if self.strict:
            raise error_type(message) from cause
        failure = PluginFailure(
            entry_point=source.entry_point,
            distribution=source.distribution,
            version=source.version,
            error=error,
        )
        _log.warning("plugin skipped: %s", failure.describe())
        self.failures.append(failure)

    # --- discovery ----------------------------------------------------------------------
    def register_entry_points(self, distributions: Iterable[str] | None) -> None:
        discovered = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        if distributions is not None:
            wanted = {_normalise(name) for name in distributions}
            discovered = [ep for ep in discovered if _normalise(_dist_name(ep)) in wanted]
        # Sorted so "keep the first" on duplicates never depends on sys.path order.
        for ep in sorted(discovered, key=lambda ep: (_dist_name(ep).lower(), ep.name)):
            dist = getattr(ep, "dist", None)
            source = _Source(
                entry_point=ep.name,
                distribution=_dist_name(ep),
                version=dist.version if dist is not None else None,
            )
            try:
                module = ep.load()
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                self.fail(
                    source,
                    error,
                    cause=exc,
                    message=(
                        f"plugin entry point {ep.name!r} ({ep.value}) from {source.origin} "
                        f"failed to import: {error}"
                    ),
                )
                continue
            # Two distributions may both call their entry point "plugin"; qualify the name.
            self._register(module, f"{source.distribution}:{ep.name}", source)

    def register_objects(self, plugins: Iterable[object]) -> None:
        for plugin in plugins:
            base = getattr(plugin, "__name__", None) or type(plugin).__name__
            name, counter = base, 1
            while self.pm.has_plugin(name) or name in self.sources:
                counter += 1
                name = f"{base}#{counter}"
            source = _Source(entry_point=name, distribution=LOCAL_DISTRIBUTION, version=None)
            self._register(plugin, name, source)

    def _register(self, plugin: object, name: str, source: _Source) -> None:
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:
            # e.g. a hookimpl taking an argument its spec lacks, or a module listed twice.
            error = f"{type(exc).__name__}: {exc}"
            self.fail(
                source,
                error,
                cause=exc,
                message=(f"plugin {name!r} from {source.origin} could not be registered: {error}"),
            )
            return
        self.sources[name] = source

    # --- misspelt hooks -----------------------------------------------------------------
    def check_pending(self) -> None:
        # Each round removes one offending plugin (non-strict), so this terminates.
        for _ in range(len(self.sources) + 1):
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                plugin = exc.plugin
                name = self.pm.get_name(plugin) or repr(plugin)
                source = self.sources.get(
                    name, _Source(entry_point=name, distribution=LOCAL_DISTRIBUTION, version=None)
                )
                error = _unknown_hooks_error(self.pm, plugin) or str(exc)
                self.fail(
                    source,
                    error,
                    cause=exc,
                    message=(f"plugin {source.entry_point!r} from {source.origin}: {error}"),
                )
                self.pm.unregister(plugin)
                self.sources.pop(name, None)

    # --- registration -------------------------------------------------------------------
    def collect(self) -> list[Registration]:
        accepted: dict[tuple[str, str], Registration] = {}
        for family, hook_name in PORT_FAMILIES.items():
            caller = getattr(self.pm.hook, hook_name)
            impls = sorted(
                caller.get_hookimpls(),
                key=lambda impl: (
                    self.sources[impl.plugin_name].distribution.lower(),
                    impl.plugin_name,
                ),
            )
            for impl in impls:
                source = self.sources[impl.plugin_name]
                offered = self._call(family, hook_name, impl, source)
                for registration in offered:
                    key = (family, registration.name)
                    first = accepted.get(key)
                    if first is None:
                        accepted[key] = registration
                        continue
                    duplicate = duplicate_error(first, registration)
                    self.fail(
                        source,
                        str(duplicate),
                        cause=None,
                        message=str(duplicate),
                        error_type=type(duplicate),
                    )
        return list(accepted.values())

    def _call(self, family: str, hook_name: str, impl: Any, source: _Source) -> list[Registration]:
        offered: list[Registration] = []
        register = _register_callback(family, source, impl.function.__module__, offered)
        try:
            if impl.hookwrapper or impl.wrapper:
                raise TypeError("a registration hook cannot be a wrapper")
            # Called directly (not via pm.hook) to know who registered what, so honour
            # pluggy's argument opt-in ourselves.
            impl.function(**({"register": register} if "register" in impl.argnames else {}))
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.fail(
                source,
                error,
                cause=exc,
                message=(
                    f"plugin {source.entry_point!r} from {source.origin} failed in "
                    f"{hook_name}: {error}"
                ),
            )
            return []
        return offered


def load_plugins(
    *,
    strict: bool = False,
    plugins: Iterable[object] = (),
    entry_points: bool = True,
    distributions: Iterable[str] | None = None,
) -> LoadResult:
    """Discover, import and register plugins; return the registry and the failures.

    :param strict: raise at the first broken, misspelt or duplicate plugin instead of
        reporting and skipping it.
    :param plugins: plugin objects (modules, instances) to register directly, recorded
        with distribution `<local>`; tests and hosts use this.
    :param entry_points: also load the installed `agent_memory` entry points. Tests that
        must not depend on what happens to be installed pass False.
    :param distributions: load entry points only from these distributions (names compared
        as packaging normalises them); None loads every installed one. First-party plugins
        come from the `agent-memory` distribution and are filtered like any other.
    :raises PluginLoadError: in strict mode, naming the plugin, distribution and error.
    :raises DuplicatePluginError: in strict mode, naming both distributions.
    """
    loading = _Loading(strict=strict)
    if entry_points:
        loading.register_entry_points(distributions)
    loading.register_objects(plugins)
    loading.check_pending()
    registrations = loading.collect()
    failures = tuple(loading.failures)
    return LoadResult(registry=PluginRegistry(registrations, failures=failures), failures=failures)


def _register_callback(
    family: str, source: _Source, module: str, offered: list[Registration]
) -> Register:
    # The arguments are checked at run time too: a plugin need not be type-checked.
    def register(
        name: str,
        factory: Callable[[FactoryContext], object],
        *,
        description: str = "",
        capabilities: Iterable[str] = (),
    ) -> None:
        if not isinstance(name, str) or not PLUGIN_NAME_PATTERN.fullmatch(name):
            raise PluginLoadError(
                f"invalid {family} plugin name {name!r} from {source.origin}: use 1-64 "
                "characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit"
            )
        if not callable(factory):
            raise PluginLoadError(
                f"{family} plugin {name!r} from {source.origin}: factory is not callable "
                f"({type(factory).__name__})"
            )
        if not isinstance(description, str):
            raise PluginLoadError(f"{family} plugin {name!r}: description must be a string")
        caps = (capabilities,) if isinstance(capabilities, str) else tuple(capabilities)
        if not all(isinstance(cap, str) for cap in caps):
            raise PluginLoadError(f"{family} plugin {name!r}: capabilities must be strings")
        offered.append(
            Registration(
                family=family,
                name=name,
                factory=factory,
                description=description,
                capabilities=frozenset(caps),
                distribution=source.distribution,
                version=source.version,
                module=module,
            )
        )

    return register


def _normalise(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _dist_name(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else "<unknown distribution>"


def _unknown_hooks_error(pm: pluggy.PluginManager, plugin: object) -> str:
    unknown = sorted(
        caller.name for caller in pm.get_hookcallers(plugin) or () if not caller.has_spec()
    )
    if not unknown:
        return ""
    known = [name for name in dir(hookspecs) if name.startswith(f"{PROJECT_NAME}_")]
    parts = []
    for hook in unknown:
        close = difflib.get_close_matches(hook, known, n=1)
        parts.append(f"{hook!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"implements unknown hook {', '.join(parts)}"
