"""Forensic forgetting: after a delete or a clear and a checkpoint, the forgotten text is in
no file the store wrote — neither whole nor as any of the trigrams the FTS index keys it by —
and the FTS vocabulary lists none of them (R-BEYOND-1, R-PRIV-3).

Why trigrams: the FTS index keys the text by them. The mirror is one FTS5 table per owner;
a delete is an FTS5 secure delete, which takes the row's trigrams out of their leaf pages as
it commits, and a clear or a retirement drops the owner's table, its freed pages zeroed;
until the checkpoint the WAL still holds the old page images, trigrams and text included
(issue 15: no index merge any more). The marker's trigrams are all distinctive: none occurs in the
background text, and none is made of hex digits only, so no id or hash can produce one by
chance.

The negative control opens the store with the hardening switched off and shows the same
scans *do* find the text — so they are able to fail.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import apsw
import pytest
from clear_support import run_clear

from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import ClearPhase

A, B = "agent-a", "agent-b"
MARKER = "zqxvbwkjhgfd"


def _trigrams(text: str) -> set[str]:
    return {text[i : i + 3] for i in range(len(text) - 2)}


TRIGRAMS = _trigrams(MARKER)


def _files_containing(directory: Path, needle: bytes) -> list[str]:
    return sorted(
        path.name for path in directory.rglob("*") if path.is_file() and needle in path.read_bytes()
    )


def _trigrams_on_disk(directory: Path) -> set[str]:
    """The marker's trigrams found in the bytes of any file under `directory`."""
    blobs = [path.read_bytes() for path in directory.rglob("*") if path.is_file()]
    return {gram for gram in TRIGRAMS if any(gram.encode() in blob for blob in blobs)}


def _vocab_hits(db: Path) -> set[str]:
    """The marker's trigrams in the vocabulary of any owner's FTS table."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        terms = {
            term
            for table in fts.owner_tables(conn)
            for (term,) in conn.execute(f"SELECT term FROM {table}_vocab")
        }
    finally:
        conn.close()
    return terms & TRIGRAMS


def _open(db: Path, clock: ManualClock, *, hardened: bool) -> ApswClaimStore:
    return ApswClaimStore(
        db,
        secret_policy=PatternSecretPolicy(),
        clock=clock,
        synchronous="NORMAL",
        clear_batch_seconds=60,  # batches of exactly 256 rows, however loaded the machine
        unsafe_disable_forensic_hardening=not hardened,
    )


def _remember(
    data_dir: Path, clock: ManualClock, *, hardened: bool, background: int = 300
) -> tuple[ApswClaimStore, str]:
    """A store holding `background` rows of each of two agents and A's claim with the
    marker, whose text and trigrams are verifiably on disk; the claim's id."""
    store = _open(data_dir / "memory.sqlite3", clock, hardened=hardened)
    rows = [
        ClaimDraft(agent_id=agent, kind="semantic", content=f"note {i} about the garden and tea")
        for agent in (A, B)
        for i in range(background)
    ]
    store.insert_many(rows, origin=WriteOrigin.EXTRACTION, now=clock.now())
    outcome = store.insert(
        ClaimDraft(agent_id=A, kind="semantic", content=f"Her locker code is {MARKER} today"),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )
    assert outcome.claim is not None
    hits = store.search_fts(A, [MARKER], scope_filter=ScopeFilter.agent_only(), limit=3)
    assert [hit.claim_id for hit in hits] == [outcome.claim.id]
    store.checkpoint()
    # The scans are meaningful only if the text and its trigrams were really on disk.
    assert _files_containing(data_dir, MARKER.encode()) == ["memory.sqlite3"]
    assert _trigrams_on_disk(data_dir) == TRIGRAMS
    assert _vocab_hits(data_dir / "memory.sqlite3") == TRIGRAMS
    return store, outcome.claim.id


def _gone_from_disk(data_dir: Path) -> None:
    assert _files_containing(data_dir, MARKER.encode()) == []
    assert _trigrams_on_disk(data_dir) == set()
    assert _vocab_hits(data_dir / "memory.sqlite3") == set()


@pytest.mark.parametrize("how", ["delete", "clear"])
def test_forgotten_text_leaves_no_bytes_and_no_index_terms(tmp_path: Path, how: str) -> None:
    """R-BEYOND-1, R-PRIV-3, R-FORGET-1/3: after a delete and a checkpoint — or a clear,
    whose last batch checkpoints by itself — no file (main, WAL, SHM) holds the text or any
    trigram of it, and the FTS vocabulary lists none; the close keeps it so, and the other
    agent's index survives. Before the checkpoint the old page images in the WAL still hold
    the trigrams (the vocabulary already lists none): that is what the checkpoint is for."""
    clock = ManualClock()
    store, claim_id = _remember(tmp_path, clock, hardened=True)
    if how == "delete":
        store.delete(A, claim_id, now=clock.now())
        assert _trigrams_on_disk(tmp_path) == TRIGRAMS
        assert _vocab_hits(tmp_path / "memory.sqlite3") == set()
        store.checkpoint()
    else:
        asyncio.run(run_clear(store, A, now=clock.now()))
    assert store.search_fts(A, [MARKER], scope_filter=ScopeFilter.agent_only(), limit=3) == []
    _gone_from_disk(tmp_path)
    store.close()
    _gone_from_disk(tmp_path)
    reopened = _open(tmp_path / "memory.sqlite3", clock, hardened=True)
    hits = reopened.search_fts(B, ["garden"], scope_filter=ScopeFilter.agent_only(), limit=500)
    assert len(hits) == 300
    reopened.close()


def test_closing_after_a_delete_is_a_checkpoint(tmp_path: Path) -> None:
    """R-PRIV-3: a host that deletes and closes without an explicit checkpoint leaves no
    trace either."""
    clock = ManualClock()
    store, claim_id = _remember(tmp_path, clock, hardened=True)
    store.delete(A, claim_id, now=clock.now())
    store.close()
    _gone_from_disk(tmp_path)


@pytest.mark.parametrize("how", ["delete", "clear"])
def test_scan_detects_leftovers_when_hardening_is_off(tmp_path: Path, how: str) -> None:
    """R-BEYOND-1 (negative control): without secure_delete and FTS5 secure-delete the very
    same scans find leftovers, so the tests above are able to fail: the deleted text and
    every one of its trigrams; after a clear, the trigrams (the dropped table's pages are
    freed, not zeroed, while later writes may reuse the pages that held the text)."""
    clock = ManualClock()
    store, claim_id = _remember(tmp_path, clock, hardened=False)
    if how == "delete":
        store.delete(A, claim_id, now=clock.now())
    else:
        asyncio.run(run_clear(store, A, now=clock.now()))
    store.checkpoint()
    store.close()
    leftovers = _trigrams_on_disk(tmp_path)
    if how == "delete":
        assert _files_containing(tmp_path, MARKER.encode()) == ["memory.sqlite3"]
        assert leftovers == TRIGRAMS
    else:
        assert len(leftovers) >= len(TRIGRAMS) // 2, leftovers


def test_a_retired_agent_leaves_no_bytes_and_no_trigram(tmp_path: Path) -> None:
    """R-PRIV-3, R-FORGET-4: retirement deletes the namespace and checkpoints by itself."""
    clock = ManualClock()
    store, _ = _remember(tmp_path, clock, hardened=True)
    store.retire_agent(A)
    _gone_from_disk(tmp_path)
    store.close()


def test_a_clear_whose_last_batch_is_empty_still_ends_with_a_checkpoint(tmp_path: Path) -> None:
    """R-PRIV-3, R-FORGET-3: 256 rows and batches of 256 — the batch that ends the claims
    phase removes nothing, and the clear is still made physical."""
    clock = ManualClock()
    store, _ = _remember(tmp_path, clock, hardened=True, background=255)
    store.begin_clear(A, now=clock.now())
    first = store.run_clear_batch(A)
    assert (first.phase, first.batch_removed) == (ClearPhase.CLAIMS, 256)
    last = store.run_clear_batch(A)
    assert (last.phase, last.batch_removed) == (ClearPhase.VECTORS, 0)
    _gone_from_disk(tmp_path)
    store.close()
