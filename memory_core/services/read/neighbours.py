"""Decision neighbours from the retrieval service: what a candidate may update or supersede.

`RetrievalNeighbours` is the `NeighbourFinder` the llm decision mode needs (reference §4.1,
§7.4): for each candidate text, one `RetrievalPurpose.DECISION` retrieval — evidence mode, so
an expired state or a past event is still a neighbour (R-TIME-3), no directive suppression,
no access accounting — filtered to the owner's live claims of exactly the write's scope
(R-SCOPE-3): the request names that one scope, and every returned claim is checked again.

It lives on the read side and satisfies the write path's Protocol structurally, so the
dependency between the two packages points one way, read → write (pyproject.toml,
contract `services-layers`).

Conflict participants: a challenger (`Lifecycle.CONFLICTED`) is never live, so it is never a
neighbour. A challenged *target* stays live and `Claim` carries no conflict link, so it cannot
be told apart here; the store does not record challenges yet.

Batching: reference §4.3/§7.4 embed every candidate query in one batch. `RetrievalService`
embeds its own query inside `retrieve` and takes no precomputed vector, so this runs one
retrieval (and one query embedding) per candidate, in order. A chunk's open candidates (those
without a slot) are few; batching needs a `retrieve` that accepts a query vector.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim
from memory_core.domain.errors import (
    ClearInProgress,
    OperationCancelled,
    StoreError,
    ValidationError,
)
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.services.read.retrieval.service import (
    RetrievalOutcome,
    RetrievalPurpose,
    RetrievalRequest,
    RetrievalService,
)

__all__ = ["RetrievalNeighbours"]

_log = logging.getLogger(__name__)

MAX_PER_CANDIDATE = 100  # the retrieval service's top-K ceiling


class RetrievalNeighbours:
    """`NeighbourFinder` over `RetrievalService`: per text, up to `per_candidate` live claims
    of the owner in exactly `scope`, best first."""

    def __init__(self, retrieval: RetrievalService, *, per_candidate: int = 3) -> None:
        if (
            isinstance(per_candidate, bool)
            or not isinstance(per_candidate, int)
            or not 1 <= per_candidate <= MAX_PER_CANDIDATE
        ):
            raise ValidationError("per_candidate", f"must be an integer in 1..{MAX_PER_CANDIDATE}")
        self._retrieval = retrieval
        self._per_candidate = per_candidate

    async def find(
        self,
        agent_id: str,
        scope: Scope,
        texts: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[Claim]]:
        """One neighbour list per text, in order. A pending clear or a store failure raises
        (the decision step then ADDs, never losing a fact); cancellation and an expired
        deadline raise as themselves."""
        found: list[tuple[Claim, ...]] = []
        for text in texts:
            cancel.raise_if_cancelled()
            deadline.raise_if_expired("decision neighbours")
            found.append(await self._one(agent_id, scope, text, deadline=deadline, cancel=cancel))
        return found

    async def _one(
        self,
        agent_id: str,
        scope: Scope,
        text: str,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> tuple[Claim, ...]:
        request = RetrievalRequest(
            agent_id=agent_id,
            query=text,
            purpose=RetrievalPurpose.DECISION,
            scope_filter=ScopeFilter(scopes=(scope,)),
            top_k=self._per_candidate,
        )
        result = await self._retrieval.retrieve(request, deadline=deadline, cancel=cancel)
        outcome = result.diagnostics.outcome
        if outcome is RetrievalOutcome.CANCELLED:
            cancel.raise_if_cancelled()
            raise OperationCancelled("decision neighbours: retrieval cancelled")
        if outcome is RetrievalOutcome.FENCED:
            raise ClearInProgress("decision neighbours: a clear is pending for the agent")
        if outcome is RetrievalOutcome.FAILED:
            raise StoreError("decision neighbours: retrieval failed")
        if result.degradations:
            _log.debug(
                "decision neighbours for agent %s degraded: %s",
                agent_id,
                ",".join(d.value for d in result.degradations),
            )
        # The request already names one scope; the check keeps a faulty store from widening
        # it, and drops whatever is no longer live (a challenger is never live).
        return tuple(
            item.claim
            for item in result.items
            if item.claim.agent_id == agent_id
            and item.claim.scope == scope
            and item.claim.is_recallable
        )[: self._per_candidate]
