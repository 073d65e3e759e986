"""`PluginConformance`: what an `agent_memory` plugin distribution must do to load (R-ARCH-3).

Subclass it in your plugin's tests; it finds your plugin through the installed entry
points, exactly as `agent-memory` and `open_memory` will:

    from memory_contracts.plugin import PluginConformance

    class TestMyPlugin(PluginConformance):
        entry_point = "my-plugin"                       # or: distribution = "my-plugin"
        options = {"my-embedder": {"dimensions": 64}}   # per registration name

The suite loads the plugin's distribution in a fresh plugin manager in strict mode (so an
import error, a misspelt hook — `check_pending()` — a hook taking arguments its spec lacks,
or a duplicate name fails), checks each registration (name pattern, callable factory, a
known family, a description), builds each one's product with a test `FactoryContext`
(a temporary data directory, `ManualClock` clocks, `PatternSecretPolicy`, your options)
and checks it satisfies its family's port, runs a smoke check per family under a deadline
(an embedding provider: ids, `dimensions()`, one `embed` round trip, an expired deadline
refused), and checks the plugin loads next to every other installed plugin without
shadowing or being shadowed. The port contract suites (`EmbeddingProviderContract`, …) are
the thorough part; this suite proves the plugin is wired so they are worth running.

Options are keyed by registration name, or "family:name" when one name is registered in
two families. An extractor that needs a text provider gets the one the
`conformance_text_provider` fixture returns (None by default); override it.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import attrs
import importlib_metadata
import pytest

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import ClaimDraft, ClaimKind, EmbeddingIdentity, WriteOrigin
from memory_core.domain.errors import DeadlineExceeded
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult
from memory_core.ports.providers import ChatMessage, EmbeddingPurpose, TextProvider, TextRequest
from memory_core.settings import MemorySettings
from memory_plugins.context import FactoryContext
from memory_plugins.errors import PluginError
from memory_plugins.hookspecs import PORT_FAMILIES
from memory_plugins.loader import ENTRY_POINT_GROUP, load_plugins
from memory_plugins.registry import PLUGIN_NAME_PATTERN, PluginRegistry, Registration

__all__ = [
    "SMOKE_CHECKS",
    "PluginConformance",
    "PluginUnderTest",
    "conformance_context",
    "find_plugin",
    "load_strictly",
]

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


# --- smoke checks per family -----------------------------------------------------------------
Smoke = Callable[[Any, Deadline, ManualClock], Awaitable[None]]


def _calls(deadline: Deadline) -> dict[str, Any]:
    return {"deadline": deadline, "cancel": CancellationToken()}


def _ids(product: Any) -> None:
    for attribute in ("provider_id", "model_id"):
        value = getattr(product, attribute)
        assert isinstance(value, str) and value, f"{attribute} must be a non-empty string"


async def _expired_deadline_is_refused(call: Callable[[Deadline], Awaitable[Any]]) -> None:
    expired = Deadline.after(REAL_TIME, 0.0)
    try:
        await call(expired)
    except DeadlineExceeded:
        return
    raise AssertionError("a call with an expired deadline must raise DeadlineExceeded")


async def _embedding_provider(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    _ids(product)
    dim = await product.dimensions(**_calls(deadline))
    assert isinstance(dim, int) and not isinstance(dim, bool) and dim > 0, (
        f"dimensions() must be a positive int, got {dim!r}"
    )
    texts = ["conformance probe: the user lives in Lisbon", "a second, different probe"]
    vectors = await product.embed(texts, purpose=EmbeddingPurpose.QUERY, **_calls(deadline))
    assert len(vectors) == len(texts), f"embed() returned {len(vectors)} vectors for 2 texts"
    for vector in vectors:
        assert len(vector) == dim, (
            f"embed() returned a vector of {len(vector)} floats; dimensions() says {dim}"
        )
        assert all(isinstance(v, float) and math.isfinite(v) for v in vector), (
            "embed() must return finite floats"
        )
    assert list(await product.embed([], purpose=EmbeddingPurpose.BATCH, **_calls(deadline))) == []
    await _expired_deadline_is_refused(
        lambda expired: product.embed(["x"], purpose=EmbeddingPurpose.QUERY, **_calls(expired))
    )


async def _text_provider(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    # No completion: that needs the provider's backend; the contract suite covers it.
    _ids(product)
    request = TextRequest(messages=[ChatMessage(role="user", content="conformance probe")])
    await _expired_deadline_is_refused(lambda expired: product.complete(request, **_calls(expired)))


async def _vector_store(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    identity = EmbeddingIdentity(provider="conformance", model="probe", dim=4)
    vectors = {"c1": [1.0, 0.0, 0.0, 0.0], "c2": [0.0, 1.0, 0.0, 0.0]}
    await product.upsert(AGENT, identity, vectors, **_calls(deadline))
    report = await product.warm(
        AGENT, identity, ["c1", "c2"], config_generation=1, **_calls(deadline)
    )
    hits = await product.query(
        AGENT, report.certificate, [1.0, 0.1, 0.0, 0.0], 1, **_calls(deadline)
    )
    assert [hit.claim_id for hit in hits] == ["c1"], "query() must find the nearest vector"


async def _claim_store(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    draft = ClaimDraft(agent_id=AGENT, kind=ClaimKind.SEMANTIC, content="The probe likes tea.")
    outcome = product.insert(draft, origin=WriteOrigin.USER_ADD, now=clock.now())
    assert outcome.claim is not None, f"insert() stored nothing ({outcome.status})"
    stored = product.get(AGENT, outcome.claim.id)
    assert stored.content == draft.content, "get() must return the inserted claim"


async def _cursor_store(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    key = ("conformance-agent", "conformance-session")
    assert product.get(*key) == 0, "an unknown (agent, session) starts at 0"
    assert product.advance(*key, 3) == 3
    assert product.get(*key) == 3


async def _extractor(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    name = product.name
    assert isinstance(name, str) and name, "name must be a non-empty string"
    request = ExtractionRequest(
        agent_id=AGENT,
        session_id="conformance-session",
        entries=(),
        reference_time=clock.now(),
        timezone=clock.timezone(),
    )
    result = await product.extract(request, **_calls(deadline))
    assert isinstance(result, ExtractionResult), "extract() must return an ExtractionResult"


async def _tape(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    entries = await product.get_by_session("conformance-no-such-session", **_calls(deadline))
    assert list(entries) == [], "an unknown session must have no entries"


async def _clock(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    if isinstance(product, DomainClock):
        now = product.now()
        assert now.tzinfo is not None and now.utcoffset() == timedelta(0), (
            f"now() must be an aware UTC datetime, got {now!r}"
        )
        assert isinstance(product.timezone(), str) and product.timezone()
    if isinstance(product, InfraClock):
        first, second = product.monotonic(), product.monotonic()
        assert isinstance(first, float) and second >= first, "monotonic() must never go back"


async def _secret_policy(product: Any, deadline: Deadline, clock: ManualClock) -> None:
    clean = "The user prefers green tea in the morning."
    assert list(product.find(clean)) == [], "a clean text has no findings"
    assert product.redact(clean) == clean and product.check_write(clean) == clean
    probe = "key AKIAIOSFODNN7EXAMPLE and password=hunter2hunter2 end"
    findings = list(product.find(probe))
    assert findings == sorted(findings, key=lambda finding: finding.start)
    for before, after in itertools.pairwise(findings):
        assert before.end <= after.start, "findings must not overlap"
    redacted = product.redact(probe)
    for finding in findings:
        assert 0 <= finding.start < finding.end <= len(probe)
        assert probe[finding.start : finding.end] not in redacted, "redact() left a finding"


SMOKE_CHECKS: Mapping[str, Smoke] = {
    "embedding_provider": _embedding_provider,
    "text_provider": _text_provider,
    "vector_store": _vector_store,
    "claim_store": _claim_store,
    "cursor_store": _cursor_store,
    "extractor": _extractor,
    "tape": _tape,
    "clock": _clock,
    "secret_policy": _secret_policy,
}
assert set(SMOKE_CHECKS) == set(PORT_FAMILIES), "every plugin family needs a smoke check"


async def _close(product: Any) -> None:
    closer = getattr(product, "aclose", None)
    if callable(closer):
        await closer()
        await closer()  # idempotent, as every port with aclose promises
        return
    closer = getattr(product, "close", None)
    if callable(closer):
        closer()


async def _smoke(product: Any, family: str, clock: ManualClock, seconds: float) -> None:
    try:
        deadline = Deadline.after(REAL_TIME, seconds)
        # The deadline asks the product to stop; wait_for stops a product that ignores it.
        await asyncio.wait_for(SMOKE_CHECKS[family](product, deadline, clock), seconds)
    finally:
        await _close(product)


# --- the suite -----------------------------------------------------------------------------
class PluginConformance:
    """Subclass as `Test…` and set `entry_point` (or `distribution`) and `options`."""

    entry_point: ClassVar[str | None] = None
    distribution: ClassVar[str | None] = None
    #: Factory options per registration name (or "family:name").
    options: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: Seconds one registration's smoke check may take.
    smoke_timeout_seconds: ClassVar[float] = 10.0

    @pytest.fixture
    def plugin(self) -> PluginUnderTest:
        return self._find()[0]

    @pytest.fixture
    def registry(self, plugin: PluginUnderTest) -> PluginRegistry:
        try:
            return load_strictly(plugin.distribution)
        except PluginError as exc:
            pytest.fail(f"{plugin.origin} does not load in strict mode: {exc}", pytrace=False)

    @pytest.fixture
    def registrations(self, registry: PluginRegistry) -> tuple[Registration, ...]:
        """The registrations of the entry point(s) under test."""
        _, entry_points = self._find()
        if self.entry_point is None:
            return registry.registrations()
        # A distribution may ship several entry points: load just these modules (in a
        # manager of their own) to learn which registrations are theirs.
        own = load_plugins(
            strict=True, entry_points=False, plugins=[ep.load() for ep in entry_points]
        ).registry
        return tuple(registry.get(r.family, r.name) for r in own.registrations())

    @pytest.fixture
    def conformance_clock(self) -> ManualClock:
        return ManualClock()

    @pytest.fixture
    def conformance_text_provider(self) -> TextProvider | None:
        """Handed to extractor factories as `FactoryContext.text_provider`."""
        return None

    def _find(self) -> tuple[PluginUnderTest, list[Any]]:
        return find_plugin(entry_point=self.entry_point, distribution=self.distribution)

    def _options(self, registration: Registration) -> Mapping[str, Any]:
        qualified = f"{registration.family}:{registration.name}"
        return self.options.get(qualified, self.options.get(registration.name, {}))

    def _build(
        self,
        registry: PluginRegistry,
        registration: Registration,
        tmp_path: Path,
        clock: ManualClock,
        text_provider: TextProvider | None,
    ) -> object:
        context = conformance_context(
            tmp_path / "data" / registration.family / registration.name,
            family=registration.family,
            options=self._options(registration),
            clock=clock,
            text_provider=text_provider,
        )
        try:
            return registry.create(registration.family, registration.name, context)
        except PluginError as exc:
            pytest.fail(str(exc), pytrace=False)

    # --- tests ---------------------------------------------------------------------------
    def test_the_plugin_is_installed_in_the_agent_memory_group(self) -> None:
        """R-ARCH-3: found through the `agent_memory` entry-point group, with its version."""
        plugin, _ = self._find()  # not the fixture: a missing plugin fails here, not errors
        assert plugin.entry_points
        assert plugin.version, f"{plugin.distribution} has no version in its metadata"

    def test_it_loads_in_strict_mode_without_unknown_hooks(self, plugin: PluginUnderTest) -> None:
        """R-ARCH-3: imports cleanly, every hook is a known spec (`check_pending()`), every
        hook takes only the spec's arguments, and no name is registered twice."""
        try:
            result = load_plugins(strict=True, distributions=[plugin.distribution])
        except PluginError as exc:
            pytest.fail(f"{plugin.origin} does not load in strict mode: {exc}", pytrace=False)
        assert result.failures == ()

    def test_it_registers_at_least_one_implementation(
        self, plugin: PluginUnderTest, registrations: tuple[Registration, ...]
    ) -> None:
        """R-ARCH-3: a plugin that registers nothing is almost certainly misspelt."""
        assert registrations, (
            f"{plugin.origin} ({', '.join(plugin.entry_points)}) registered nothing; does "
            "it decorate `agent_memory_register_*` functions with memory_plugins.hookimpl?"
        )

    def test_every_registration_is_well_formed(
        self, plugin: PluginUnderTest, registrations: tuple[Registration, ...]
    ) -> None:
        """R-ARCH-3: config-friendly names, known families, callable factories, a
        description for `agent-memory plugins`, attributed to the distribution."""
        problems = []
        for registration in registrations:
            label = f"{registration.family} {registration.name!r}"
            if registration.family not in PORT_FAMILIES:
                problems.append(f"{label}: unknown family")
            if not PLUGIN_NAME_PATTERN.fullmatch(registration.name):
                problems.append(f"{label}: name does not match {PLUGIN_NAME_PATTERN.pattern}")
            if not callable(registration.factory):
                problems.append(f"{label}: factory is not callable")
            if not registration.description.strip():
                problems.append(f"{label}: no description (shown by `agent-memory plugins`)")
            if not _same_name(registration.distribution, plugin.distribution):
                problems.append(f"{label}: attributed to {registration.origin}")
        assert not problems, "; ".join(problems)

    def test_options_name_registrations_of_the_plugin(
        self, registrations: tuple[Registration, ...]
    ) -> None:
        """A misspelt key in `options` would silently build with defaults."""
        known = {r.name for r in registrations} | {f"{r.family}:{r.name}" for r in registrations}
        unknown = sorted(set(self.options) - known)
        assert not unknown, f"options for unknown registrations: {unknown} (known: {sorted(known)})"

    def test_every_registration_builds_an_object_satisfying_its_port(
        self,
        registry: PluginRegistry,
        registrations: tuple[Registration, ...],
        tmp_path: Path,
        conformance_clock: ManualClock,
        conformance_text_provider: TextProvider | None,
    ) -> None:
        """R-ARCH-5: the factory builds from a FactoryContext and the product satisfies the
        family's port (checked by the registry, as the composition root checks it)."""
        for registration in registrations:
            product = self._build(
                registry, registration, tmp_path, conformance_clock, conformance_text_provider
            )
            asyncio.run(_close(product))

    def test_every_registration_passes_its_family_smoke_check(
        self,
        registry: PluginRegistry,
        registrations: tuple[Registration, ...],
        tmp_path: Path,
        conformance_clock: ManualClock,
        conformance_text_provider: TextProvider | None,
    ) -> None:
        """R-ARCH-2, R-ARCH-6: one round trip through the port under a deadline."""
        for registration in registrations:
            product = self._build(
                registry, registration, tmp_path, conformance_clock, conformance_text_provider
            )
            seconds = self.smoke_timeout_seconds
            try:
                asyncio.run(_smoke(product, registration.family, conformance_clock, seconds))
            except AssertionError as exc:
                pytest.fail(
                    f"{registration.family} {registration.name!r} from {registration.origin}: "
                    f"{exc}",
                    pytrace=False,
                )
            except TimeoutError:
                pytest.fail(
                    f"{registration.family} {registration.name!r}: the smoke check did not "
                    f"finish within {seconds} s",
                    pytrace=False,
                )

    def test_it_coexists_with_every_installed_plugin(
        self, plugin: PluginUnderTest, registrations: tuple[Registration, ...]
    ) -> None:
        """R-ARCH-3: loaded next to everything installed (first-party plugins included),
        none of its names is shadowed by another distribution and it breaks nothing."""
        result = load_plugins()
        ours = [
            failure
            for failure in result.failures
            if _same_name(failure.distribution, plugin.distribution)
            or plugin.distribution in failure.error  # a duplicate names both distributions
        ]
        assert not ours, "; ".join(failure.describe() for failure in ours)
        for registration in registrations:
            chosen = result.registry.get(registration.family, registration.name)
            assert _same_name(chosen.distribution, plugin.distribution), (
                f"{registration.family} {registration.name!r} is shadowed by {chosen.origin}; "
                "choose a name no installed plugin uses"
            )


def _dist_name(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else "<unknown distribution>"


def _same_name(first: str, second: str) -> bool:
    def normal(name: str) -> str:
        return name.replace("_", "-").replace(".", "-").lower()

    return normal(first) == normal(second)
