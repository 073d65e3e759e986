"""Management routes: the typed surface a settings UI or an HTTP layer builds on (the
seed's `routes.ts`), over the one door — `MemoryService` — and, for source spans and view
manifests, `TapeInspectionReader` alone. Every route returns the normalised DTOs of
`routes.dtos`; none reaches a store, the raw tape reader or a provider (guarded by
`tests/architecture/test_routes_boundary.py`)."""

from memory_plugins.routes.dtos import route_converter
from memory_plugins.routes.service import MemoryRoutes

__all__ = ["MemoryRoutes", "route_converter"]
