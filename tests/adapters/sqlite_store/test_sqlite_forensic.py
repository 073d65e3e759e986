"""Forensic forgetting: after a delete or a clear and a close, the forgotten text is in no
file the store wrote, and no trigram of it is left in the FTS index (R-BEYOND-1, R-PRIV-3).

The negative control opens the store with the hardening switched off and shows the same
scan *does* find the text — so the scan is able to fail.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import apsw
import pytest

from memory_adapters.sqlite_store import ApswClaimStore, run_clear
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft, WriteOrigin
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy

A, B = "agent-a", "agent-b"
# Letters that never form a trigram in the background text below.
_ALPHABET = "qxzjvkw"


def _marker() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(16))


def _trigrams(text: str) -> set[str]:
    return {text[i : i + 3] for i in range(len(text) - 2)}


def _files_containing(directory: Path, needle: bytes) -> list[str]:
    return sorted(
        path.name for path in directory.rglob("*") if path.is_file() and needle in path.read_bytes()
    )


def _vocab_hits(db: Path, trigrams: set[str]) -> set[str]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        terms = {term for (term,) in conn.execute("SELECT term FROM agent_memory_fts_vocab")}
    finally:
        conn.close()
    return terms & trigrams


def _remember_and_forget(data_dir: Path, marker: str, *, how: str, hardened: bool) -> Path:
    clock = ManualClock()
    db = data_dir / "memory.sqlite3"
    store = ApswClaimStore(
        db,
        secret_policy=PatternSecretPolicy(),
        clock=clock,
        synchronous="NORMAL",
        unsafe_disable_forensic_hardening=not hardened,
    )
    background = [
        ClaimDraft(agent_id=agent, kind="semantic", content=f"note {i} about the garden and tea")
        for agent in (A, B)
        for i in range(300)
    ]
    store.insert_many(background, origin=WriteOrigin.EXTRACTION, now=clock.now())
    outcome = store.insert(
        ClaimDraft(agent_id=A, kind="semantic", content=f"Her locker code is {marker} today"),
        origin=WriteOrigin.USER_ADD,
        now=clock.now(),
    )
    assert outcome.claim is not None
    hits = store.search_fts(A, [marker], scope_filter=ScopeFilter.agent_only(), limit=3)
    assert [hit.claim_id for hit in hits] == [outcome.claim.id]
    store.checkpoint()
    # The scan is meaningful only if the text and its trigrams were really on disk.
    assert _files_containing(data_dir, marker.encode()) == ["memory.sqlite3"]
    assert _vocab_hits(db, _trigrams(marker)) == _trigrams(marker)
    if how == "delete":
        store.delete(A, outcome.claim.id, now=clock.now())
    else:
        asyncio.run(run_clear(store, A, now=clock.now()))
    assert store.search_fts(A, [marker], scope_filter=ScopeFilter.agent_only(), limit=3) == []
    store.close()
    return db


@pytest.mark.parametrize("how", ["delete", "clear"])
def test_forgotten_text_leaves_no_bytes_and_no_index_terms(tmp_path: Path, how: str) -> None:
    """R-BEYOND-1, R-PRIV-3, R-FORGET-1/3: every file's bytes (main, WAL, SHM) and the FTS
    vocabulary are free of the forgotten text after a delete or a clear and a close."""
    marker = _marker()
    db = _remember_and_forget(tmp_path, marker, how=how, hardened=True)
    assert _files_containing(tmp_path, marker.encode()) == []
    assert _vocab_hits(db, _trigrams(marker)) == set()


@pytest.mark.parametrize("how", ["delete", "clear"])
def test_scan_detects_leftovers_when_hardening_is_off(tmp_path: Path, how: str) -> None:
    """R-BEYOND-1 (negative control): without secure_delete and FTS5 secure-delete the very
    same scan finds the forgotten text, so the test above is able to fail."""
    marker = _marker()
    _remember_and_forget(tmp_path, marker, how=how, hardened=False)
    assert _files_containing(tmp_path, marker.encode()) == ["memory.sqlite3"]
