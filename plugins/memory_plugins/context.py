"""What a plugin factory receives: the data directory, settings, its options, and shared ports."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.providers import TextProvider
from memory_core.ports.secrets import SecretPolicy
from memory_core.settings import MemorySettings

__all__ = ["FactoryContext"]


@attrs.frozen(kw_only=True)
class FactoryContext:
    """Built by the composition root. Clocks and the secret policy are built first, so they
    are None only in the context handed to clock and secret-policy factories themselves."""

    data_dir: Path
    settings: MemorySettings = attrs.field(factory=MemorySettings)
    options: Mapping[str, Any] = attrs.field(factory=dict)  # `[plugins.<family>.<name>]` table
    domain_clock: DomainClock | None = None
    infra_clock: InfraClock | None = None
    secret_policy: SecretPolicy | None = None
    text_provider: TextProvider | None = None  # the configured one, for the llm extractor
