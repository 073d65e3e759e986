"""What the operator of `agent-memory mcp` fixes by flag; the rest each call carries.

Kept apart from the server so the CLI checks its flags (typed errors naming the flag's
field) without importing the optional MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from memory_core.domain.scope import validate_agent_id
from memory_core.domain.validation import check_id, check_session_id
from memory_plugins.tool_schemas import CONTEXT_PROPERTIES

__all__ = ["McpOptions"]


def _optional(check: Callable[[object, str], object]) -> Callable[[Any, Any, Any], None]:
    def validate(_instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is not None:
            check(value, attribute.name)

    return validate


@attrs.frozen(kw_only=True)
class McpOptions:
    """None leaves the field to each call (`agent_id` then becomes a required argument)."""

    agent_id: str | None = attrs.field(default=None, validator=_optional(validate_agent_id))
    session_id: str | None = attrs.field(default=None, validator=_optional(check_session_id))
    user_id: str | None = attrs.field(default=None, validator=_optional(check_id))
    allow_user_tools: bool = False

    @property
    def context_fields(self) -> tuple[str, ...]:
        """The context fields no flag fixed, in `CONTEXT_PROPERTIES` order."""
        fixed = {"agent_id": self.agent_id, "session_id": self.session_id, "user_id": self.user_id}
        return tuple(field for field in CONTEXT_PROPERTIES if fixed[field] is None)
