"""The contribution budget: how many tokens one turn's memory and directives may take, and
how they are shared between the self-model, working memory, recall and directives (R-READ-5)."""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError
from memory_core.settings.fields import doc, non_negative, positive

__all__ = ["ContributionBudgetSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class ContributionBudgetSettings:
    contribution_budget_tokens: int = attrs.field(
        default=1_200,
        validator=[attrs.validators.ge(64), attrs.validators.le(8_000)],
        metadata=doc("Total tokens of one turn's memory + directive contribution (64..8000)."),
    )
    directive_ceiling_tokens: int = attrs.field(
        default=512, validator=non_negative, metadata=doc("Most tokens directives may take.")
    )
    directive_item_tokens: int = attrs.field(
        default=192, validator=positive, metadata=doc("Most tokens one directive may take.")
    )
    persona_floor_tokens: int = attrs.field(
        default=128, validator=non_negative, metadata=doc("Tokens guaranteed to the self-model.")
    )
    persona_ceiling_tokens: int = attrs.field(
        default=320, validator=non_negative, metadata=doc("Most tokens the self-model may take.")
    )
    working_floor_tokens: int = attrs.field(
        default=192, validator=non_negative, metadata=doc("Tokens guaranteed to working memory.")
    )
    working_ceiling_tokens: int = attrs.field(
        default=480, validator=non_negative, metadata=doc("Most tokens working memory may take.")
    )
    recall_reservation_tokens: int = attrs.field(
        default=256,
        validator=non_negative,
        metadata=doc("Tokens reserved for query-recalled memories before borrowing."),
    )

    def _check_budget(self) -> None:
        for low, high in (
            ("persona_floor_tokens", "persona_ceiling_tokens"),
            ("working_floor_tokens", "working_ceiling_tokens"),
        ):
            if getattr(self, low) > getattr(self, high):
                raise ConfigError(f"{low} must not exceed {high}")
        if self.directive_item_tokens > self.directive_ceiling_tokens:
            raise ConfigError("directive_item_tokens must not exceed directive_ceiling_tokens")
