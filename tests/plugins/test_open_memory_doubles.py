"""`open_memory(clock=..., overrides=...)` and the one data-dir resolver (R-ARCH-5, R-HOST-1).

Doubles go straight into the composition root, as in cosmicpython's `bootstrap`: no plugin
class exists only to carry a test's clock or store. And the CLI and `open_memory` resolve
the data directory in one place, so `AGENT_MEMORY_HOME='~/x'` means one directory to both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory_adapters.duckdb_vectors.store import DuckDBVectorStore
from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.tapes import InMemoryTape
from memory_contracts.fake_cursor import InMemoryCursorStore
from memory_contracts.fake_providers import FakeEmbeddingProvider, ScriptedTextProvider
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ConfigError
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult
from memory_core.services.memory import MemoryService
from memory_plugins.api import SyncMemory, open_memory_async
from memory_plugins.bootstrap import OVERRIDABLE_FAMILIES, open_memory
from memory_plugins.cli import main as cli_main
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.output import Output
from memory_plugins.config import MemoryConfig, PluginChoice

A = "agent-a"
SAID = datetime(2030, 5, 17, 9, 30, tzinfo=UTC)


def _config() -> MemoryConfig:
    """The embedded defaults with the fast offline embedder (no model to load)."""
    plugins = {**MemoryConfig().plugins, "embedding_provider": PluginChoice(name="hashing")}
    return MemoryConfig(plugins=plugins)


# --- clock= -------------------------------------------------------------------------------
def test_a_clock_object_is_both_clocks_of_the_service(tmp_path: Path) -> None:
    """R-ARCH-1: the given clock dates what is remembered; no clock plugin is registered."""
    clock = ManualClock(SAID)

    async def go() -> None:
        memory = open_memory(tmp_path, config=_config(), clock=clock)
        try:
            stored = await memory.remember(A, "The user keeps bees.")
            assert stored.claim_id is not None
            assert memory.store.get(A, stored.claim_id).created_at == SAID
        finally:
            await memory.aclose()

    asyncio.run(go())


def test_a_clock_pair_splits_business_and_monotonic_time(tmp_path: Path) -> None:
    domain, infra = ManualClock(SAID), ManualClock(monotonic=5.0)
    memory = open_memory(tmp_path, config=_config(), clock=(domain, infra))
    try:
        assert memory._clock is domain and memory._infra is infra
    finally:
        asyncio.run(memory.aclose())


@pytest.mark.parametrize(
    "clock",
    [object(), (ManualClock(),), (object(), ManualClock()), "system"],
    ids=["no-clock", "one-tuple", "pair-without-domain", "plugin-name"],
)
def test_something_that_is_no_clock_is_a_config_error(tmp_path: Path, clock: object) -> None:
    with pytest.raises(ConfigError, match=r"^clock: "):
        open_memory(tmp_path, config=_config(), clock=clock)  # type: ignore[arg-type]


# --- overrides= ---------------------------------------------------------------------------
def _store(path: Path) -> ApswClaimStore:
    return ApswClaimStore(
        path / "own.sqlite3", clock=ManualClock(), secret_policy=PatternSecretPolicy()
    )


class ScriptedExtractor:
    """An extractor that proposes nothing: only its identity matters here."""

    name = "scripted"

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        return ExtractionResult()


def _innermost(provider: object) -> object:
    """The provider inside the composition root's wrappers (deadline guard, tracing)."""
    while hasattr(provider, "_inner"):
        provider = provider._inner
    return provider


# family -> (build the ready object, where the service holds it)
Holder = Callable[[MemoryService], object]
READY: dict[str, tuple[Callable[[Path], Any], Holder]] = {
    "claim_store": (_store, lambda memory: memory.store),
    "vector_store": (
        lambda path: DuckDBVectorStore(path / "own-vectors", ManualClock()),
        lambda memory: memory.index.vectors,
    ),
    "embedding_provider": (
        lambda _: FakeEmbeddingProvider(),
        lambda memory: _innermost(memory.gateway._embedder),  # behind the guard (and tracing)
    ),
    "text_provider": (
        lambda _: ScriptedTextProvider(default="ok"),
        lambda memory: _innermost(memory.gateway._text),
    ),
    "extractor": (
        lambda _: ScriptedExtractor(),
        lambda memory: memory._ingestion.extractor,
    ),
    "cursor_store": (lambda _: InMemoryCursorStore(), lambda memory: memory._ingestion.cursors),
    "tape": (lambda _: InMemoryTape(), lambda memory: memory._ingestion.tape),
}


class SpyPolicy:
    """The pattern policy, noting every text a write is checked with."""

    def __init__(self) -> None:
        self._inner = PatternSecretPolicy()
        self.checked: list[str] = []

    def find(self, text: str) -> Any:
        return self._inner.find(text)

    def redact(self, text: str) -> str:
        return self._inner.redact(text)

    def check_write(self, text: str, *, field: str = "content") -> str:
        self.checked.append(text)
        return self._inner.check_write(text, field=field)


def test_every_overridable_family_has_a_test() -> None:
    # telemetry: tests/plugins/test_telemetry.py hands in an OpenTelemetry of its own.
    assert {*READY, "secret_policy", "telemetry"} == set(OVERRIDABLE_FAMILIES)


def test_an_overridden_secret_policy_guards_the_store_it_builds(tmp_path: Path) -> None:
    """R-PRIV-1: the claim-store plugin is built with the given policy, not the default."""
    policy = SpyPolicy()

    async def go() -> None:
        memory = open_memory(
            tmp_path, config=_config(), clock=ManualClock(), overrides={"secret_policy": policy}
        )
        try:
            await memory.remember(A, "The user keeps bees.")
        finally:
            await memory.aclose()

    asyncio.run(go())
    assert "The user keeps bees." in policy.checked


@pytest.mark.parametrize("family", sorted(READY))
def test_an_override_is_used_instead_of_the_plugin(tmp_path: Path, family: str) -> None:
    """R-ARCH-5: the ready object is what the service holds; the plugin is not built."""
    build, held_by = READY[family]
    ready = build(tmp_path)
    # Ingestion (extractor, cursors, tape) is wired only with a tape.
    tape = None if family == "tape" else InMemoryTape()
    memory = open_memory(
        tmp_path / "data",
        config=_config(),
        tape=tape,
        clock=ManualClock(),
        overrides={family: ready},
    )
    try:
        assert held_by(memory) is ready
    finally:
        asyncio.run(memory.aclose())


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"claim_stor": object()},
            r"^overrides\.claim_stor: unknown port family \(did you mean 'claim_store'\?\)",
        ),
        ({"clock": ManualClock()}, r"^overrides\.clock: .*pass the clock as clock="),
        ({"tape": InMemoryTape()}, r"^overrides\.tape: given twice"),
    ],
    ids=["unknown", "clock", "tape-twice"],
)
def test_a_wrong_override_key_is_a_config_error_naming_it(
    tmp_path: Path, overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        open_memory(tmp_path, config=_config(), tape=InMemoryTape(), overrides=overrides)
    assert not (tmp_path / "memory.sqlite3").exists(), "refused before anything was opened"


def test_the_async_and_sync_doors_take_the_same_doubles(tmp_path: Path) -> None:
    """R-HOST-1: `open_memory_async` and `SyncMemory` pass `clock` and `overrides` through."""
    clock = ManualClock(SAID)
    embedder = FakeEmbeddingProvider()

    async def go() -> None:
        memory = await open_memory_async(
            tmp_path / "async",
            config=_config(),
            clock=clock,
            overrides={"embedding_provider": embedder},
        )
        try:
            stored = await memory.remember(A, "The user keeps bees.")
            assert memory.store.get(A, stored.claim_id or "").created_at == SAID
            await memory.embed_pending(A)
            assert any("bees" in " ".join(call.texts) for call in embedder.calls)
        finally:
            await memory.aclose()

    asyncio.run(go())
    with SyncMemory(tmp_path / "sync", config=_config(), clock=clock) as memory:
        stored = memory.remember(A, "The user keeps goats.")
        assert stored.claim_id is not None
        claim = memory.run(lambda m: _get(m, stored.claim_id or ""))
        assert claim.created_at == SAID


async def _get(memory: MemoryService, claim_id: str) -> Any:
    return memory.store.get(A, claim_id)


# --- one data-dir resolver -------------------------------------------------------------------
def _cli_data_dir(environ: dict[str, str]) -> Path:
    parsed = cli_main.build_parser().parse_args(["plugins"])
    return CommandContext(
        args=parsed, out=Output(), config=MemoryConfig(), environ=environ
    ).data_dir


@pytest.mark.parametrize(
    ("value", "expected"),
    [("~/x", lambda home, cwd: home / "x"), ("rel/x", lambda home, cwd: cwd / "rel" / "x")],
    ids=["home", "relative"],
)
def test_agent_memory_home_opens_one_directory_from_the_cli_and_open_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: Any
) -> None:
    """R-HOST-2: before, `~/x` was `$HOME/x` to the CLI and a literal `~/x` directory to
    `open_memory`. Now both expand `~` and anchor a relative path at the current directory."""
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_MEMORY_HOME", value)
    monkeypatch.chdir(cwd)
    directory = expected(home, cwd)

    assert _cli_data_dir({"AGENT_MEMORY_HOME": value}) == directory
    memory = open_memory(config=_config(), clock=ManualClock())
    asyncio.run(memory.aclose())
    assert (directory / "memory.sqlite3").is_file()
    assert not (cwd / "~").exists()
