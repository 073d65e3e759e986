"""Capabilities and strict expected failures for the contract suites: an opt-in pytest plugin.

Load it from your root `conftest.py` (R-HOST-3):

    pytest_plugins = ["memory_contracts.pytest_plugin"]

A contract subclass then says what its implementation can do, and which suite tests it is
known to fail, in one place (SQLAlchemy's requirements, Django's expected failures):

    class TestMyStore(VectorStoreContract):
        capabilities = frozenset()                    # keeps nothing across a reopen
        expected_failures = {"test_query_batch_matches_single_queries": "issue #12"}

- A test that needs a capability (`@pytest.mark.requires_capability("persistence")`, the
  `requires_capability` decorator the suites use, or an optional capability fixture such
  as `stalling_embedding_provider_factory`) whose class declares `capabilities` without it
  is *deselected*, and the terminal summary lists it with the reason.
- A test named in `expected_failures` runs as `xfail(strict=True)` with the reason, so a
  fix that makes it pass fails the run until the entry is removed; an entry naming no
  test of the class is a usage error.
- A test whose capabilities are all declared but that skips anyway (an optional fixture
  left out, a harness returning None) fails: a declared capability is a promise.
- A class that declares no `capabilities` (None) keeps the suites' own run-time checks,
  which skip what is missing.

The decorator and the helpers below work without the plugin, so the suites can use them at
import time whether or not a project loads it. (PYTEST_DONT_REWRITE: the suites import
this module, so it is often imported before pytest registers it; there is nothing here
for assertion rewriting to improve.)
"""

from __future__ import annotations

import pkgutil
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pytest

__all__ = [
    "CAPABILITIES",
    "FIXTURE_CAPABILITIES",
    "MARKER",
    "declared_capabilities",
    "require_declared",
    "requires_capability",
]

F = TypeVar("F", bound=Callable[..., Any])

MARKER = "requires_capability"

# The capabilities the shipped suites ask for, and what each means (used in reasons).
CAPABILITIES: Mapping[str, str] = {
    "persistence": "data survives a close and a reopen",
    "tape_anchor_writer": "the tape implements TapeAnchorWriter",
    "tape_inspection_reader": "the tape implements TapeInspectionReader",
    "ingestion_projection": "the tape implements IngestionProjection",
    "lagging_projection": "the harness can append without updating the projection, "
    "through TapeHarness.append_unprojected",
    "stalling": "a factory of providers whose calls hang, stalling_*_provider_factory",
    "failing": "a factory of providers whose calls fail, failing_*_provider_factory",
}

# Optional fixtures of the provider suites: requesting one needs the capability.
FIXTURE_CAPABILITIES: Mapping[str, str] = {
    "stalling_embedding_provider_factory": "stalling",
    "failing_embedding_provider_factory": "failing",
    "stalling_text_provider_factory": "stalling",
    "failing_text_provider_factory": "failing",
}

_REQUIRES_ATTRIBUTE = "__memory_requires_capability__"
_DESELECTED = pytest.StashKey[list[tuple[str, str]]]()
_PROMISED = pytest.StashKey[frozenset[str]]()


# --- usable without the plugin ------------------------------------------------------------
def requires_capability(*names: str) -> Callable[[F], F]:
    """Mark a suite test as needing `names`. Unlike `pytest.mark.requires_capability`, this
    works before the plugin registers the marker (`--strict-markers` would refuse that)."""
    if not names or not all(isinstance(name, str) and name for name in names):
        raise TypeError("requires_capability needs one or more capability names")

    def mark(function: F) -> F:
        existing = getattr(function, _REQUIRES_ATTRIBUTE, ())
        setattr(function, _REQUIRES_ATTRIBUTE, (*existing, *names))
        return function

    return mark


def declared_capabilities(owner: object) -> frozenset[str] | None:
    """The `capabilities` a test class (or its instance, or a module) declares; None when
    it declares none, which leaves missing capabilities to the suite's run-time checks."""
    holder = owner if isinstance(owner, type) or _is_module(owner) else type(owner)
    declared = getattr(holder, "capabilities", None)
    if declared is None:
        return None
    if isinstance(declared, str) or not isinstance(declared, Iterable):
        raise TypeError(
            f"{getattr(holder, '__qualname__', holder)!r}.capabilities must be a set of names, "
            f"not {type(declared).__name__}"
        )
    return frozenset(declared)


def require_declared(owner: object, capability: str) -> bool:
    """The run-time side of a capability check inside a suite test.

    Skips (naming the capability) when `owner` declares capabilities without it — the
    plugin deselects such tests first, so this only shows where the plugin is not loaded.
    Returns True when declared (the test must then pass or fail, never skip) and False when
    nothing is declared (the caller checks the implementation itself).
    """
    declared = declared_capabilities(owner)
    if declared is None:
        return False
    if capability not in declared:
        pytest.skip(_reason(capability, _holder_name(type(owner))))
    return True


def _reason(capability: str, holder: str) -> str:
    meaning = CAPABILITIES.get(capability)
    described = f"{capability!r} ({meaning})" if meaning else repr(capability)
    return f"needs capability {described}; {holder}.capabilities does not declare it"


def _holder_name(holder: Any) -> str:
    return getattr(holder, "__qualname__", None) or getattr(holder, "__name__", repr(holder))


def _is_module(owner: object) -> bool:
    return type(owner).__name__ == "module"


# --- the plugin ---------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*names): the test needs these capabilities; it is deselected when its "
        "class declares `capabilities` without one of them (memory_contracts)",
    )
    config.stash[_DESELECTED] = []
    # Readable assertion failures from the suites; modules already imported (by a test
    # module loaded before this plugin) cannot be rewritten any more, so leave them be.
    import memory_contracts

    pending = [
        f"memory_contracts.{module.name}"
        for module in pkgutil.iter_modules(memory_contracts.__path__)
        if f"memory_contracts.{module.name}" not in sys.modules
    ]
    if pending:
        pytest.register_assert_rewrite(*pending)


def _requirements(item: pytest.Item) -> tuple[str, ...]:
    names: list[str] = []
    for marker in item.iter_markers(MARKER):
        names.extend(marker.args)
    function = getattr(item, "function", None)
    names.extend(getattr(function, _REQUIRES_ATTRIBUTE, ()))
    fixtures = getattr(item, "fixturenames", ())
    names.extend(FIXTURE_CAPABILITIES[name] for name in fixtures if name in FIXTURE_CAPABILITIES)
    return tuple(dict.fromkeys(names))


def _expected_failures(holder: Any) -> Mapping[str, str]:
    expected = getattr(holder, "expected_failures", None) or {}
    if not isinstance(expected, Mapping):
        raise pytest.UsageError(
            f"{holder.__qualname__}.expected_failures must map test names to reasons"
        )
    for name, reason in expected.items():
        base = name.split("[", 1)[0]
        if not (base.startswith("test") and callable(getattr(holder, base, None))):
            raise pytest.UsageError(
                f"{holder.__qualname__}.expected_failures names {name!r}, which is not a test "
                "of this class (a typo would hide a real failure)"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise pytest.UsageError(
                f"{holder.__qualname__}.expected_failures[{name!r}] needs a reason"
            )
    return expected


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # trylast: after -k/-m deselection, so reasons are listed only for tests that would run.
    kept: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    reasons = config.stash.setdefault(_DESELECTED, [])
    for item in items:
        holder = getattr(item, "cls", None) or getattr(item, "module", None)
        needed = _requirements(item)
        # Only tests that need something consult `capabilities`: elsewhere the name is free.
        declared = declared_capabilities(holder) if needed and holder is not None else None
        if needed and declared is not None:
            missing = [name for name in needed if name not in declared]
            if missing:
                deselected.append(item)
                reasons.append((item.nodeid, _reason(missing[0], _holder_name(holder))))
                continue
            item.stash[_PROMISED] = frozenset(needed)
        if holder is not None and isinstance(holder, type):
            expected = _expected_failures(holder)
            reason = expected.get(item.name) or expected.get(getattr(item, "originalname", ""))
            if reason:
                item.add_marker(
                    pytest.mark.xfail(reason=f"expected failure: {reason}", strict=True)
                )
        kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    promised = item.stash.get(_PROMISED, None)
    if promised and report.skipped and not hasattr(report, "wasxfail"):
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} skipped although its class declares "
            f"{', '.join(sorted(promised))}: {why}. Provide what the capability needs, or "
            "remove it from `capabilities`."
        )
    return report


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    reasons = config.stash.get(_DESELECTED, [])
    if not reasons:
        return
    terminalreporter.section("deselected for capabilities not declared", sep="-")
    for nodeid, reason in reasons:
        terminalreporter.line(f"{nodeid}: {reason}")
