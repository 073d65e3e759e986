"""An evaluation's memory: the real stores in a temporary directory, business time pinned.

Every evaluation runs the product, not a model of it: `open_memory` builds the same
MemoryService a host gets (SQLite claim store with FTS5, DuckDB vectors, the chosen embedder
behind the provider guard), with two differences, both stated in docs/evaluation.md:

- business time comes from a fixed clock (`FixedClock`) handed to `open_memory`, so fixtures
  that speak in epoch milliseconds mean the same thing on every run; infrastructure time
  stays monotonic, because deadlines must still expire;
- the query-embedding, turn and corpus-embedding deadlines are relaxed (`QUALITY_DEADLINES`):
  an evaluation measures what is recalled, not how fast, and a model's cold start or a busy
  machine must not turn into an `embeddingTimeout` degradation or a half-embedded corpus
  that silently changes the numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from memory_core.domain.temporal import canonical_timezone, require_utc
from memory_core.services.memory import MemoryService
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import DISABLED, open_memory
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry

__all__ = [
    "DEFAULT_EMBEDDER",
    "EVAL_EPOCH",
    "LEXICAL",
    "QUALITY_DEADLINES",
    "SEED_AGE",
    "EvalMemory",
    "FixedClock",
    "epoch_ms",
    "eval_config",
    "eval_memory",
    "eval_registry",
]

DEFAULT_EMBEDDER = "local-minilm"
LEXICAL = DISABLED  # the embedding family switched off: FTS-only recall
# Business time of corpora that carry no clock of their own; rows are stored SEED_AGE before
# it, so every row is equally recent and recency cannot decide a ranking.
EVAL_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
SEED_AGE = timedelta(seconds=1)
QUALITY_DEADLINES: Mapping[str, float] = {
    "query_deadline_floor_ms": 30_000,
    "query_deadline_ceiling_ms": 30_000,
    "prepare_turn_deadline_ms": 60_000,
    # A corpus embedded in part would measure a smaller corpus: on a loaded machine the
    # default 30 s batch / 60 s pass left a LoCoMo conversation's turns half-embedded.
    "embedding_batch_seconds": 600.0,
    "embedding_pass_seconds": 1_800.0,
}


def epoch_ms(value: int) -> datetime:
    """A fixture's epoch milliseconds as an aware UTC instant."""
    return datetime.fromtimestamp(value / 1000, UTC)


class FixedClock:
    """`DomainClock` at a set instant; `InfraClock` on the real monotonic clock."""

    def __init__(self, now: datetime, timezone: str = "UTC") -> None:
        self._now = require_utc(now, "now")
        self._timezone = canonical_timezone(timezone, field="clock.timeZone")

    def now(self) -> datetime:
        return self._now

    def timezone(self) -> str:
        return self._timezone

    def monotonic(self) -> float:
        return time.monotonic()

    def set(self, now: datetime, timezone: str | None = None) -> None:
        self._now = require_utc(now, "now")
        if timezone is not None:
            self._timezone = canonical_timezone(timezone, field="clock.timeZone")


def eval_registry(*, strict: bool = False) -> PluginRegistry:
    """The installed plugins, loaded once for every memory of one evaluation run."""
    return load_plugins(strict=strict).registry


def eval_config(
    embedder: str,
    *,
    base: MemoryConfig | None = None,
    settings: Mapping[str, Any] | None = None,
) -> MemoryConfig:
    """`base` (the user's config, or the defaults) with the embedder `embedder` (`LEXICAL`
    for FTS only) and the quality deadlines; the clock is handed to `open_memory` directly.

    An embedder chosen in `base` under the same name keeps its options, so a user evaluates
    their own configured provider by naming it.
    """
    base = base or MemoryConfig()
    plugins = dict(base.plugins)
    current = base.choice("embedding_provider")
    if current is None or current.name != embedder:
        plugins["embedding_provider"] = PluginChoice(name=embedder)
    # No background ingestion: an evaluation writes its rows itself.
    plugins["extractor"] = PluginChoice(name=DISABLED)
    plugins.pop("tape", None)
    overrides = {**QUALITY_DEADLINES, **(settings or {})}
    return attrs.evolve(
        base,
        plugins=plugins,
        settings=attrs.evolve(base.settings, **overrides),
        data_dir=None,
    )


@attrs.frozen(kw_only=True)
class EvalMemory:
    """An open evaluation memory: the service, its clock, and where its files are."""

    service: MemoryService
    clock: FixedClock
    settings: MemorySettings
    data_dir: Path


_SETTLE_SECONDS = 60.0


async def _settle_background_work(before: set[asyncio.Task[object]]) -> None:
    # `remember` schedules embedding on the running loop; closing the stores under it would
    # fail those tasks. Only tasks started while the evaluation ran are waited for, bounded.
    current = asyncio.current_task()
    started = [task for task in asyncio.all_tasks() if task not in before and task is not current]
    if started:
        await asyncio.wait(started, timeout=_SETTLE_SECONDS)


@contextlib.asynccontextmanager
async def eval_memory(
    embedder: str,
    *,
    clock: FixedClock,
    base: MemoryConfig | None = None,
    settings: Mapping[str, Any] | None = None,
    registry: PluginRegistry | None = None,
) -> AsyncIterator[EvalMemory]:
    """Open a fresh memory in a temporary directory; close and delete it on exit."""
    config = eval_config(embedder, base=base, settings=settings)
    registry = registry or eval_registry()
    before = set(asyncio.all_tasks())
    with tempfile.TemporaryDirectory(prefix="agent-memory-eval-") as directory:
        service = open_memory(directory, config=config, clock=clock, registry=registry)
        try:
            yield EvalMemory(
                service=service, clock=clock, settings=config.settings, data_dir=Path(directory)
            )
        finally:
            await _settle_background_work(before)
            await service.aclose()
