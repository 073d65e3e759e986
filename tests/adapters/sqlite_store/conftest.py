"""Fixtures for the apsw claim-store tests: a manual clock, a store factory, draft helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from memory_adapters.sqlite_store import ApswClaimStore, fts
from memory_adapters.sqlite_store.connection import OWNER_TOKEN_FUNCTION, fts_owner_token
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import ClaimDraft
from memory_core.domain.secrets import PatternSecretPolicy


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite3"


@pytest.fixture
def open_store(db_path: Path, clock: ManualClock) -> Iterator[Callable[..., ApswClaimStore]]:
    opened: list[ApswClaimStore] = []

    def make(**kwargs: object) -> ApswClaimStore:
        kwargs.setdefault("secret_policy", PatternSecretPolicy(mode="reject"))
        kwargs.setdefault("synchronous", "NORMAL")  # tests never simulate power loss
        store = ApswClaimStore(db_path, clock=clock, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: Callable[..., ApswClaimStore]) -> ApswClaimStore:
    return open_store()


@pytest.fixture
def raw(db_path: Path, store: ApswClaimStore) -> Iterator[apsw.Connection]:
    """A second, plain connection to the same file, with only the functions the FTS
    triggers call (every writer of the file must register them; the owner token is the
    shared v1–v7 mirror's, for tests that rebuild an old file)."""
    conn = apsw.Connection(str(db_path))
    conn.set_busy_timeout(5_000)
    conn.create_scalar_function(OWNER_TOKEN_FUNCTION, fts_owner_token, 1, deterministic=True)
    fts.register_functions(conn)
    yield conn
    conn.close()


def draft(content: str, agent_id: str = "agent-a", **kwargs: object) -> ClaimDraft:
    kwargs.setdefault("kind", "semantic")
    return ClaimDraft(agent_id=agent_id, content=content, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def make_draft() -> Callable[..., ClaimDraft]:
    return draft
