"""Cases on namespaces: identity, validation, isolation, persistence, delete, drop,
warm-up and certificates."""

from __future__ import annotations

import pytest

from memory_contracts.fakes import ManualClock
from memory_contracts.pytest_plugin import require_declared, requires_capability
from memory_core.domain.errors import IdentityMismatch, ValidationError
from memory_core.ports.vectors import ReadyCertificate, VectorStore, VectorStoreCold

from .support import IDENTITY, OTHER_DIM, OTHER_MODEL, Opener, VectorStoreCases, run, with_store

__all__ = ["NamespaceCases"]


class NamespaceCases(VectorStoreCases):
    # --- identity ---------------------------------------------------------------------

    def test_identity_mismatch_is_refused_until_rebuild(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-PROV-4: another provider/model/dim is refused, never mixed; rebuild starts empty."""

        async def scenario(store: VectorStore) -> None:
            old = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
            with pytest.raises(IdentityMismatch):
                await store.upsert("agent-1", OTHER_MODEL, {"b": [0, 1, 0, 0]}, **self.calls(clock))
            with pytest.raises(IdentityMismatch):
                await store.upsert("agent-1", OTHER_DIM, {"b": [0, 1, 0]}, **self.calls(clock))
            with pytest.raises(IdentityMismatch):
                await store.warm(
                    "agent-1", OTHER_MODEL, ["a"], config_generation=2, **self.calls(clock)
                )
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
            assert await store.stored_identity("agent-1", **self.calls(clock)) == IDENTITY

            await store.rebuild("agent-1", OTHER_DIM, **self.calls(clock))
            assert await store.stored_identity("agent-1", **self.calls(clock)) == OTHER_DIM
            assert await store.list_ids("agent-1", **self.calls(clock)) == []
            with pytest.raises(VectorStoreCold):
                await store.query("agent-1", old, [1, 0, 0, 0], 1, **self.calls(clock))
            await store.upsert("agent-1", OTHER_DIM, {"b": [0, 1, 0]}, **self.calls(clock))
            report = await store.warm(
                "agent-1", OTHER_DIM, ["b"], config_generation=2, **self.calls(clock)
            )
            hits = await store.query(
                "agent-1", report.certificate, [0, 1, 0], 5, **self.calls(clock)
            )
            assert [hit.claim_id for hit in hits] == ["b"]

        with_store(open_vector_store, scenario)

    # --- validation -------------------------------------------------------------------

    @pytest.mark.parametrize(
        "bad",
        [
            pytest.param([], id="empty"),
            pytest.param([1.0, 0.0, 0.0], id="wrong-dimension"),
            pytest.param([1.0, float("nan"), 0.0, 0.0], id="nan"),
            pytest.param([1.0, float("inf"), 0.0, 0.0], id="infinite"),
            pytest.param([0.0, 0.0, 0.0, 0.0], id="zero"),
        ],
    )
    def test_invalid_vectors_are_rejected_before_anything_is_written(
        self, open_vector_store: Opener, clock: ManualClock, bad: list[float]
    ) -> None:
        """R-VEC-1: zero-length, wrong-dimension, NaN/inf and zero vectors are refused, and a
        batch holding one writes nothing; such a query vector is refused too."""

        async def scenario(store: VectorStore) -> None:
            cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
            with pytest.raises(ValidationError):
                await store.upsert(
                    "agent-1",
                    IDENTITY,
                    {"good": [0, 1, 0, 0], "bad": bad},
                    **self.calls(clock),
                )
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["a"]
            with pytest.raises(ValidationError):
                await store.query("agent-1", cert, bad, 3, **self.calls(clock))
            with pytest.raises(ValidationError):
                await store.query_batch(
                    "agent-1", cert, [[1, 0, 0, 0], bad], 3, **self.calls(clock)
                )

        with_store(open_vector_store, scenario)

    # --- namespaces, persistence, delete, list ----------------------------------------

    def test_agents_never_see_each_others_vectors(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-PRIV-2: one namespace per agent; a certificate is good for its own agent only."""

        async def scenario(store: VectorStore) -> None:
            cert_a = await self.warmed(store, clock, "agent-a", {"a1": [1, 0, 0, 0]})
            await store.upsert("agent-b", OTHER_DIM, {"b1": [1, 0, 0]}, **self.calls(clock))
            cert_b = (
                await store.warm(
                    "agent-b", OTHER_DIM, ["b1"], config_generation=1, **self.calls(clock)
                )
            ).certificate
            hits = await store.query("agent-a", cert_a, [1, 0, 0, 0], 5, **self.calls(clock))
            assert [hit.claim_id for hit in hits] == ["a1"]
            assert await store.list_ids("agent-b", **self.calls(clock)) == ["b1"]
            assert await store.delete("agent-b", ["a1"], **self.calls(clock)) == 0
            with pytest.raises(VectorStoreCold):
                await store.query("agent-b", cert_a, [1, 0, 0, 0], 5, **self.calls(clock))
            with pytest.raises(VectorStoreCold):
                await store.query("agent-a", cert_b, [1, 0, 0], 5, **self.calls(clock))
            await store.drop_agent("agent-b", **self.calls(clock))
            assert await store.list_ids("agent-a", **self.calls(clock)) == ["a1"]

        with_store(open_vector_store, scenario)

    @requires_capability("persistence")
    def test_vectors_survive_close_and_reopen_but_certificates_do_not(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: stored vectors persist; a reopened store is cold until warmed again."""
        require_declared(self, "persistence")

        async def scenario() -> None:
            store = open_vector_store()
            cert = await self.warmed(
                store, clock, "agent-1", {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0]}
            )
            await store.aclose()
            reopened = open_vector_store()
            try:
                assert await reopened.list_ids("agent-1", **self.calls(clock)) == ["a", "b"]
                assert await reopened.stored_identity("agent-1", **self.calls(clock)) == IDENTITY
                with pytest.raises(VectorStoreCold):
                    await reopened.query("agent-1", cert, [1, 0, 0, 0], 1, **self.calls(clock))
                report = await reopened.warm(
                    "agent-1", IDENTITY, ["a", "b"], config_generation=1, **self.calls(clock)
                )
                hits = await reopened.query(
                    "agent-1", report.certificate, [0, 1, 0, 0], 1, **self.calls(clock)
                )
                assert [hit.claim_id for hit in hits] == ["b"]
            finally:
                await reopened.aclose()

        run(scenario)

    def test_delete_counts_removed_ids_and_ignores_unknown_ones(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-FORGET-1: vector delete by id; unknown ids are not an error."""

        async def scenario(store: VectorStore) -> None:
            cert = await self.warmed(
                store,
                clock,
                "agent-1",
                {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0], "c": [0, 0, 1, 0]},
            )
            assert await store.delete("agent-1", ["b", "zz", "b"], **self.calls(clock)) == 1
            assert await store.delete("agent-1", [], **self.calls(clock)) == 0
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["a", "c"]
            hits = await store.query("agent-1", cert, [0, 1, 0, 0], 5, **self.calls(clock))
            assert "b" not in [hit.claim_id for hit in hits]
            assert await store.delete("never-seen", ["a"], **self.calls(clock)) == 0

        with_store(open_vector_store, scenario)

    def test_list_ids_is_ascending_and_empty_for_an_unknown_agent(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: the coverage listing is complete and ordered."""

        async def scenario(store: VectorStore) -> None:
            ids = ["m", "b", "z", "a", "k"]
            await store.upsert(
                "agent-1",
                IDENTITY,
                {claim_id: [1, i, 0, 0] for i, claim_id in enumerate(ids)},
                **self.calls(clock),
            )
            assert await store.list_ids("agent-1", **self.calls(clock)) == sorted(ids)
            assert await store.list_ids("nobody", **self.calls(clock)) == []
            assert await store.stored_identity("nobody", **self.calls(clock)) is None

        with_store(open_vector_store, scenario)

    def test_drop_agent_removes_the_namespace_and_is_idempotent(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-FORGET-4: retirement deletes the whole namespace; its certificate lapses."""

        async def scenario(store: VectorStore) -> None:
            cert = await self.warmed(store, clock, "agent-1", {"a": [1, 0, 0, 0]})
            await store.drop_agent("agent-1", **self.calls(clock))
            await store.drop_agent("agent-1", **self.calls(clock))
            assert await store.list_ids("agent-1", **self.calls(clock)) == []
            assert await store.stored_identity("agent-1", **self.calls(clock)) is None
            with pytest.raises(VectorStoreCold):
                await store.query("agent-1", cert, [1, 0, 0, 0], 1, **self.calls(clock))

        with_store(open_vector_store, scenario)

    # --- certificates -----------------------------------------------------------------

    def test_warm_up_deletes_orphans_and_reports_missing_vectors(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: vectors without a ready claim (e.g. of cleared claims) are deleted at the
        coverage check and never recalled; ready claims without a vector are reported."""

        async def scenario(store: VectorStore) -> None:
            await store.upsert(
                "agent-1",
                IDENTITY,
                {"kept": [1, 0, 0, 0], "cleared-1": [1, 0.1, 0, 0], "cleared-2": [0, 1, 0, 0]},
                **self.calls(clock),
            )
            report = await store.warm(
                "agent-1",
                IDENTITY,
                ["kept", "needs-embedding"],
                config_generation=7,
                **self.calls(clock),
            )
            assert report.orphans_deleted == 2
            assert report.missing_ids == ("needs-embedding",)
            assert report.vector_count == 1
            assert report.certificate.agent_id == "agent-1"
            assert report.certificate.identity == IDENTITY
            assert report.certificate.config_generation == 7
            assert await store.list_ids("agent-1", **self.calls(clock)) == ["kept"]
            hits = await store.query(
                "agent-1", report.certificate, [1, 0.1, 0, 0], 5, **self.calls(clock)
            )
            assert [hit.claim_id for hit in hits] == ["kept"]

        with_store(open_vector_store, scenario)

    def test_queries_need_the_current_certificate(
        self, open_vector_store: Opener, clock: ManualClock
    ) -> None:
        """R-VEC-4: never warmed, superseded by a later warm-up, or forged ⇒ VectorStoreCold."""

        async def scenario(store: VectorStore) -> None:
            await store.upsert("agent-1", IDENTITY, {"a": [1, 0, 0, 0]}, **self.calls(clock))
            forged = ReadyCertificate(
                agent_id="agent-1", identity=IDENTITY, store_generation=1, config_generation=1
            )
            with pytest.raises(VectorStoreCold):
                await store.query("agent-1", forged, [1, 0, 0, 0], 1, **self.calls(clock))
            first = await store.warm(
                "agent-1", IDENTITY, ["a"], config_generation=1, **self.calls(clock)
            )
            second = await store.warm(
                "agent-1", IDENTITY, ["a"], config_generation=2, **self.calls(clock)
            )
            with pytest.raises(VectorStoreCold):
                await store.query(
                    "agent-1", first.certificate, [1, 0, 0, 0], 1, **self.calls(clock)
                )
            with pytest.raises(VectorStoreCold):
                await store.query_by_id("agent-1", first.certificate, "a", 1, **self.calls(clock))
            hits = await store.query(
                "agent-1", second.certificate, [1, 0, 0, 0], 1, **self.calls(clock)
            )
            assert [hit.claim_id for hit in hits] == ["a"]

        with_store(open_vector_store, scenario)
