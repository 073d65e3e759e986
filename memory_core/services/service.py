"""Where hosts have always imported `MemoryService` from; it lives in `services.memory`."""

from memory_core.services.memory import (
    ForgetResult,
    MemoryService,
    RememberResult,
    RememberStatus,
)

__all__ = ["ForgetResult", "MemoryService", "RememberResult", "RememberStatus"]
