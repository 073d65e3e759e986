"""The claim store reads its file through a memory map of `mmap_mib` MiB (R-READ-1, issue 15):
configured as asked, refused when malformed before anything is opened, and coherent with
every write — its own, another connection's, and the checkpoint that shrinks the WAL."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import draft

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import WriteOrigin
from memory_core.domain.errors import NotFound, ValidationError
from memory_plugins.builtin.claim_stores import SqliteStoreOptions
from memory_plugins.config import structure_options


def _insert(store: ApswClaimStore, content: str, clock: ManualClock) -> str:
    outcome = store.insert(draft(content), origin=WriteOrigin.USER_ADD, now=clock.now())
    assert outcome.claim is not None
    return outcome.claim.id


def _mapped_bytes(store: ApswClaimStore) -> int:
    return int(store._conn.execute("PRAGMA mmap_size").fetchall()[0][0])


@pytest.mark.parametrize(("mmap_mib", "expected"), [(None, 1024 << 20), (0, 0), (16, 16 << 20)])
def test_the_file_is_mapped_as_configured(
    open_store: Callable[..., ApswClaimStore], mmap_mib: int | None, expected: int
) -> None:
    store = open_store() if mmap_mib is None else open_store(mmap_mib=mmap_mib)
    assert _mapped_bytes(store) == expected


@pytest.mark.parametrize("bad", [-1, True, 1.5, "64", None])
def test_a_malformed_map_size_is_refused_and_the_file_is_untouched(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock, bad: object
) -> None:
    store = open_store()
    kept = _insert(store, "the cellar key is under the mat", clock)
    store.close()
    with pytest.raises(ValidationError) as raised:
        open_store(mmap_mib=bad)
    assert raised.value.field == "mmap_mib"
    again = open_store()
    assert again.get("agent-a", kept).content == "the cellar key is under the mat"


def test_the_plugin_option_reaches_the_store() -> None:
    assert structure_options({}, SqliteStoreOptions, family="claim_store").mmap_mib == 1024
    options = structure_options({"mmap_mib": 0}, SqliteStoreOptions, family="claim_store")
    assert options.mmap_mib == 0


def test_mapped_reads_follow_another_connections_writes_deletes_and_checkpoints(
    open_store: Callable[..., ApswClaimStore], clock: ManualClock
) -> None:
    writer, reader = open_store(), open_store()
    # Rows of ~1.6 kB: 200 of them span many pages, so the deletes free and the checkpoint
    # rewrites pages the reader has mapped.
    ids = [_insert(writer, f"note {i}: " + "padding " * 200, clock) for i in range(200)]
    assert [reader.get("agent-a", cid).content[:8] for cid in ids[:2]] == ["note 0: ", "note 1: "]
    for cid in ids[:150]:
        writer.delete("agent-a", cid, now=clock.now())
    writer.checkpoint()
    with pytest.raises(NotFound):
        reader.get("agent-a", ids[0])
    assert reader.get("agent-a", ids[-1]).content.startswith("note 199: ")
    survivor = _insert(writer, "written after the checkpoint", clock)
    assert reader.get("agent-a", survivor).content == "written after the checkpoint"
