"""The ClaimStore contract suite, run against the apsw SQLite store."""

from __future__ import annotations

from pathlib import Path

from memory_adapters.sqlite_store import ApswClaimStore
from memory_contracts.claim_store import ClaimStoreContract
from memory_contracts.fakes import ManualClock
from memory_core.ports.secrets import SecretPolicy


class TestApswClaimStoreContract(ClaimStoreContract):
    def make_claim_store(
        self, tmp_path: Path, *, clock: ManualClock, secret_policy: SecretPolicy
    ) -> ApswClaimStore:
        return ApswClaimStore(
            tmp_path / "memory.sqlite3",
            clock=clock,
            secret_policy=secret_policy,
            synchronous="NORMAL",
        )
