"""What every claim-store role contract shares: the clock, opening the store under test
(checking it implements the roles the contract calls), and the helpers the cases use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_contracts.claim_store.support import (
    CONTRACT_EPOCH,
    IDENTITY,
    MarkerSecretPolicy,
    claim_draft,
    state_temporal,
)
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Claim, EmbeddingIdentity, WriteOrigin
from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import DerivationKind, InsertStatus

__all__ = [
    "AGENT_ONLY",
    "BERLIN",
    "EXTRACTION",
    "HOME",
    "MODEL_TOOL",
    "OTHER",
    "PARIS",
    "USER_ADD",
    "A",
    "B",
    "Factory",
    "RoleCases",
    "open_store",
    "role_fixture",
]

A, B = "agent-a", "agent-b"
AGENT_ONLY = ScopeFilter.agent_only()
EXTRACTION, MODEL_TOOL, USER_ADD = (
    WriteOrigin.EXTRACTION,
    WriteOrigin.MODEL_TOOL,
    WriteOrigin.USER_ADD,
)
OTHER = EmbeddingIdentity(provider="contract", model="m2", dim=8)
HOME = "user.home_city"
PARIS, BERLIN = "Lives in Paris", "Lives in Berlin"

# What a role contract's `make_*` returns: (tmp_path, *, clock, secret_policy) -> store.
Factory = Callable[..., Any]


def open_store(make: Factory, role: type, tmp_path: Path, clock: ManualClock) -> Iterator[Any]:
    """The body of every role fixture: build, check the roles, yield, close (if closable).

    A store missing a method of a role the contract calls fails here, naming the methods,
    instead of as an AttributeError deep inside one case."""
    store = make(tmp_path, clock=clock, secret_policy=MarkerSecretPolicy())
    if not isinstance(store, role):
        missing = sorted(
            name
            for name in dir(role)
            if not name.startswith("_") and not callable(getattr(store, name, None))
        )
        raise TypeError(f"{type(store).__name__} does not implement {role.__name__}: {missing}")
    yield store
    close: Callable[[], None] | None = getattr(store, "close", None)
    if close is not None:
        close()


def role_fixture(name: str, factory: str, role: type) -> Any:
    """A role contract's store fixture `name`: what the subclass's `factory(tmp_path, *,
    clock, secret_policy)` returns, checked to implement `role`, closed afterwards."""

    @pytest.fixture(name=name)
    def store(self: object, tmp_path: Path, clock: ManualClock) -> Iterator[Any]:
        make = getattr(self, factory, None)
        if make is None:
            raise NotImplementedError(
                f"{type(self).__name__} must implement {factory}(tmp_path, *, clock, secret_policy)"
            )
        yield from open_store(make, role, tmp_path, clock)

    return store


class RoleCases:
    """Helpers over a store that has at least `ClaimWriter` (and `ClaimReader` for `_moved`)."""

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock(CONTRACT_EPOCH)

    @staticmethod
    def _add(store: Any, clock: ManualClock, content: str, **kwargs: object) -> Claim:
        origin = kwargs.pop("origin", WriteOrigin.EXTRACTION)
        outcome = store.insert(claim_draft(content, **kwargs), origin=origin, now=clock.now())  # type: ignore[arg-type]
        assert outcome.status is InsertStatus.INSERTED, outcome.status
        assert outcome.claim is not None
        return outcome.claim

    @staticmethod
    def _ids(hits: object) -> list[str]:
        return [hit.claim_id for hit in hits]  # type: ignore[attr-defined]

    @staticmethod
    def _ready(
        store: Any, clock: ManualClock, claim: Claim, identity: EmbeddingIdentity = IDENTITY
    ) -> None:
        assert store.mark_embedding(
            A,
            claim.id,
            expected_revision=claim.revision,
            identity=identity,
            ready=True,
            now=clock.now(),
        )

    @staticmethod
    def _edges(store: Any, claim_id: str) -> list[tuple[str, str, DerivationKind]]:
        return [(e.parent_id, e.child_id, e.kind) for e in store.list_derivations(A, claim_id)]

    def _moved(self, store: Any, clock: ManualClock) -> tuple[Claim, Claim]:
        """Paris (a state since 60 days ago), then Berlin superseding it 30 days ago."""
        paris = self._add(
            store,
            clock,
            PARIS,
            slot=HOME,
            temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=60)),
        )
        clock.advance(60)
        outcome = store.supersede(
            A,
            paris.id,
            claim_draft(
                BERLIN, slot=HOME, temporal=state_temporal(CONTRACT_EPOCH - timedelta(days=30))
            ),
            expected_revision=paris.revision,
            now=clock.now(),
        )
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        return store.get(A, paris.id), outcome.claim
