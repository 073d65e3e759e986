"""The ready certificates a `PostgresVectorStore` holds in this process, and the agents it
quarantined.

A warm-up grants a certificate bound to the namespace generation it read; queries present
it, and the store checks the generation again in the query itself, so a rebuild or drop by
any process sharing the database turns it cold (R-VEC-4). A quarantined agent's calls are
refused until the store is reopened; it can still be retired.
"""

from __future__ import annotations

import itertools

from memory_adapters.postgres_store.vector_namespace import Certified, Namespace
from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import StoreQuarantined
from memory_core.ports.vectors import ReadyCertificate, VectorStoreCold

__all__ = ["Certificates"]


class Certificates:
    """Certificates granted per agent, newest only, and the quarantined agents."""

    def __init__(self) -> None:
        self._held: dict[str, Certified] = {}
        self._grants = itertools.count(1)
        self._quarantined: set[str] = set()

    def grant(
        self,
        agent_id: str,
        identity: EmbeddingIdentity,
        namespace: Namespace,
        *,
        config_generation: int,
    ) -> ReadyCertificate:
        """A new certificate for the namespace as a warm-up just read it; it replaces the
        agent's previous one."""
        certificate = ReadyCertificate(
            agent_id=agent_id,
            identity=identity,
            store_generation=next(self._grants),
            config_generation=config_generation,
        )
        self._held[agent_id] = Certified(
            certificate=certificate,
            generation=namespace.generation,
            approximate=namespace.approximate,
        )
        return certificate

    def held(self, agent_id: str, certificate: ReadyCertificate) -> Certified:
        """What `certificate` was granted against; VectorStoreCold unless it is the agent's
        current one."""
        certified = self._held.get(agent_id)
        if certified is None or certified.certificate != certificate:
            raise VectorStoreCold(
                f"vector namespace of agent {agent_id!r} has no ready certificate"
            )
        return certified

    def revoke(self, agent_id: str) -> None:
        self._held.pop(agent_id, None)

    def revoke_all(self) -> None:
        self._held.clear()

    def quarantine(self, agent_id: str) -> None:
        self._quarantined.add(agent_id)
        self.revoke(agent_id)

    def is_quarantined(self, agent_id: str) -> bool:
        return agent_id in self._quarantined

    def refuse_quarantined(self, agent_id: str) -> None:
        if agent_id in self._quarantined:
            raise StoreQuarantined(f"vector namespace of agent {agent_id!r} is quarantined")
