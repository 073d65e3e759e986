"""Background maintenance: the service that owns its timers, cooldowns, budgets and
lifecycle, and the passes it runs — consolidating the dirty queue (merges), archiving
stale claims, trimming the audit trail (R-MAINT-1/2, R-LINEAGE-1, reference §8.3–8.4).

The values its clients hear — audit events, conflicts, resolutions, persona versions — are
the store ports' own, re-exported so a host surface never imports a store port."""

from memory_core.ports.claims import (
    MAX_DIRTY_BATCH,
    AuditEvent,
    Conflict,
    PersonaState,
    PersonaVersion,
    PersonaView,
    Resolution,
)
from memory_core.services.maintenance.passes import PassMode, PassReport
from memory_core.services.maintenance.service import (
    MaintenanceDrainTimeout,
    MaintenanceService,
    MaintenanceStatus,
)

__all__ = [
    "MAX_DIRTY_BATCH",
    "AuditEvent",
    "Conflict",
    "MaintenanceDrainTimeout",
    "MaintenanceService",
    "MaintenanceStatus",
    "PassMode",
    "PassReport",
    "PersonaState",
    "PersonaVersion",
    "PersonaView",
    "Resolution",
]
