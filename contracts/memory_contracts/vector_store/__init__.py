"""The VectorStore contract suite: what every vector store plugin must do (R-VEC-1..4, R-PROV-4).

Subclass `VectorStoreContract` in a test module and override the `open_vector_store`
fixture with one returning a zero-argument callable; each call opens a store over the same
persistent state (the same directory, the same backing dict), so a second call is a reopen.
A store that keeps nothing across a reopen declares `capabilities` without "persistence"
(with `memory_contracts.pytest_plugin` loaded, the reopen test is then deselected with that
reason; without it, the test skips):

    class TestMyStore(VectorStoreContract):
        @pytest.fixture
        def open_vector_store(self, tmp_path):
            return lambda: MyVectorStore(tmp_path)

The tests drive the port with a `ManualClock`, so no test waits for time to pass.
"""

from __future__ import annotations

from .deadlines import DeadlineCases
from .namespaces import NamespaceCases
from .queries import QueryCases
from .support import IDENTITY, Opener

__all__ = ["IDENTITY", "Opener", "VectorStoreContract"]


class VectorStoreContract(QueryCases, NamespaceCases, DeadlineCases):
    """The suite. Override `open_vector_store` (and `capabilities`, which `VectorStoreCases`
    declares); leave the tests alone."""
