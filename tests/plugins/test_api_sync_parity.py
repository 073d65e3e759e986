"""`SyncMemory` is the whole facade for a synchronous host (R-HOST-1), and opening it
finishes a clear a crash interrupted, as `open_memory_async` does (R-FORGET-3)."""

from __future__ import annotations

import inspect
from pathlib import Path

from memory_core.services.memory import MemoryService, RememberStatus
from memory_plugins.api import SyncMemory
from memory_plugins.config import MemoryConfig, PluginChoice

A = "agent-a"

# Public names of MemoryService a sync host does not call by that name, and why.
NOT_MIRRORED = {
    "aclose": "SyncMemory.close",
    "on_closed": "the composition root's hook (data-dir lock)",
    "on_committed": "ingestion's commit hook, called by the service itself",
    "session": "SyncMemory's turn methods take (agent_id, session_id)",
    "settle_committed": "ingestion's settle hook, awaited by a session's drain",
}


def _public_methods(cls: type) -> dict[str, object]:
    return {
        name: member
        for name, member in inspect.getmembers(cls, callable)
        if not name.startswith("_")
    }


def test_sync_memory_mirrors_every_public_method_of_the_service() -> None:
    """R-HOST-1: every public async method of MemoryService (and every sync one) exists on
    SyncMemory with the same parameters, or is listed above with its reason."""
    service = _public_methods(MemoryService)
    mirrored = _public_methods(SyncMemory)
    asynchronous = {name for name, m in service.items() if inspect.iscoroutinefunction(m)}
    assert {"get", "list", "update", "history", "clear", "retire"} <= asynchronous
    missing = sorted(set(service) - set(mirrored) - set(NOT_MIRRORED))
    assert missing == [], f"SyncMemory lacks {missing}"
    for name in set(service) - set(NOT_MIRRORED):
        ours = list(inspect.signature(mirrored[name]).parameters)  # type: ignore[arg-type]
        theirs = list(inspect.signature(service[name]).parameters)  # type: ignore[arg-type]
        assert ours == theirs, f"SyncMemory.{name} takes {ours}, the service {theirs}"
    assert set(NOT_MIRRORED) <= set(service), "a listed exception no longer exists"


def test_the_parity_check_can_fail() -> None:
    """The comparison above sees a method the wrapper lacks."""

    class Grown(MemoryService):
        async def brand_new(self, agent_id: str) -> None: ...

    assert "brand_new" in set(_public_methods(Grown)) - set(_public_methods(SyncMemory))


def _config() -> MemoryConfig:
    plugins = {**MemoryConfig().plugins, "embedding_provider": PluginChoice(name="hashing")}
    return MemoryConfig(plugins=plugins)


async def _crash_mid_clear(memory: MemoryService) -> list[str]:
    """A clear that committed one batch and then died: the job row stays pending."""
    memory.store.begin_clear(A, now=memory.now())
    memory.store.run_clear_batch(A, batch_size=2)
    return [job.agent_id for job in memory.store.pending_clears()]


async def _pending(memory: MemoryService) -> list[str]:
    return [job.agent_id for job in memory.store.pending_clears()]


def test_opening_sync_memory_resumes_an_interrupted_clear(tmp_path: Path) -> None:
    """R-FORGET-3: a clear killed after its first batch fences the agent across restarts
    until SyncMemory opens the data dir again and finishes it."""
    data = tmp_path / "data"
    with SyncMemory(data, config=_config()) as memory:
        for i in range(5):
            memory.remember(A, f"Orchard fact {i} about pears")
        assert memory.run(_crash_mid_clear) == [A]
        # Closed without finishing: what a crash leaves behind.
    with SyncMemory(data, config=_config()) as memory:
        assert memory.run(_pending) == []
        assert memory.list(A).claims == ()
        replay = memory.remember(A, "Orchard fact 4 about pears")
        assert replay.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION
        assert memory.remember(A, "A fresh fact after the clear.").status is RememberStatus.STORED


def test_the_sync_facade_gets_lists_updates_and_shows_history(tmp_path: Path) -> None:
    """R-LINEAGE-1, R-FORGET-3/4 through the sync wrapper: the async facade's values."""
    with SyncMemory(tmp_path / "data", config=_config()) as m:
        stored = m.remember(A, "The user lives in Porto.")
        assert stored.claim_id is not None
        edited = m.update(A, stored.claim_id, "The user lives in Braga.")
        assert m.get(A, edited.id).content == "The user lives in Braga."
        assert [c.id for c in m.list(A).claims] == [edited.id]
        assert [d.child_id for d in m.history(A, stored.claim_id).derivations] == [edited.id]
        assert m.clear(A).phase.value == "done"
        assert m.list(A).claims == ()
        m.create_directive(A, "instruction", "Answer in English.")
        assert len(m.list_directives(A)) == 1
        m.retire(A)
        assert m.list_directives(A) == []
