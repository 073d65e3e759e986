"""Background maintenance: the service that owns its timers, cooldowns, budgets and
lifecycle, and the passes it runs — consolidating the dirty queue (merges), archiving
stale claims, trimming the audit trail (R-MAINT-1/2, R-LINEAGE-1, reference §8.3–8.4)."""

from memory_core.services.maintenance.passes import PassMode, PassReport
from memory_core.services.maintenance.service import (
    MaintenanceDrainTimeout,
    MaintenanceService,
    MaintenanceStatus,
)

__all__ = [
    "MaintenanceDrainTimeout",
    "MaintenanceService",
    "MaintenanceStatus",
    "PassMode",
    "PassReport",
]
