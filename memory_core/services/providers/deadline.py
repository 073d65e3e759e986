"""Adaptive query-embedding deadlines: smoothed latency × headroom, per provider/model (R-PROV-1).

A query embedding sits on the user's turn, so its deadline follows what the provider has
recently shown it can do instead of a fixed guess: `clamp(round(smoothed × headroom), floor,
ceiling)` in milliseconds. With no sample yet the floor applies (a fast local server should
not be granted two seconds on its first call). One miss relaxes the next attempt to the
ceiling, once, so a provider that merely slowed down is measured again rather than timed out
forever; a success clears the relax and feeds the moving average. Pure: the gateway measures
elapsed time on the `InfraClock` and reports it here.
"""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ValidationError
from memory_core.settings import MemorySettings

__all__ = ["AdaptiveDeadlines", "LatencyProfile", "ProfileKey"]

# (provider_id, model_id): latency is a property of the server and model, not of an agent.
ProfileKey = tuple[str, str]


@attrs.frozen(kw_only=True)
class LatencyProfile:
    """What is known about one provider/model: smoothed latency and whether a miss is pending."""

    smoothed_ms: float | None = None
    samples: int = 0
    relaxed: bool = False


_UNKNOWN = LatencyProfile()  # frozen: one shared "nothing known yet"


class AdaptiveDeadlines:
    """Deadline budgets (milliseconds) for query embeddings, one profile per (provider, model)."""

    def __init__(self, settings: MemorySettings) -> None:
        self._floor = settings.query_deadline_floor_ms
        self._ceiling = settings.query_deadline_ceiling_ms
        self._alpha = settings.latency_smoothing
        self._headroom = settings.latency_headroom
        self._profiles: dict[ProfileKey, LatencyProfile] = {}

    def profile(self, key: ProfileKey) -> LatencyProfile:
        # Not `.get(key, LatencyProfile())`: that built a throwaway profile on every lookup,
        # three per query embedding.
        found = self._profiles.get(key)
        return _UNKNOWN if found is None else found

    def peek_ms(self, key: ProfileKey) -> int:
        """The budget the next attempt would get, without consuming a pending relax."""
        profile = self.profile(key)
        if profile.relaxed:
            return self._ceiling
        if profile.smoothed_ms is None:
            return self._floor
        return min(self._ceiling, max(self._floor, round(profile.smoothed_ms * self._headroom)))

    def begin_ms(self, key: ProfileKey) -> int:
        """The budget for an attempt starting now; uses up a pending relax ("once")."""
        budget = self.peek_ms(key)
        profile = self.profile(key)
        if profile.relaxed:
            self._profiles[key] = attrs.evolve(profile, relaxed=False)
        return budget

    def record_success(self, key: ProfileKey, elapsed_ms: float) -> None:
        """A query or warm call settled in `elapsed_ms`: update the EWMA and clear any relax."""
        if not elapsed_ms >= 0:  # also refuses NaN
            raise ValidationError("elapsed_ms", "must be a non-negative number")
        profile = self.profile(key)
        if profile.smoothed_ms is None:
            smoothed = float(elapsed_ms)
        else:
            smoothed = profile.smoothed_ms + (elapsed_ms - profile.smoothed_ms) * self._alpha
        self._profiles[key] = LatencyProfile(
            smoothed_ms=smoothed, samples=profile.samples + 1, relaxed=False
        )

    def record_miss(self, key: ProfileKey) -> None:
        """The attempt ran out of its own budget: the next one gets the ceiling."""
        self._profiles[key] = attrs.evolve(self.profile(key), relaxed=True)

    def forget(self, key: ProfileKey | None = None) -> None:
        """Drop one profile (provider reconfigured) or all of them (disposal)."""
        if key is None:
            self._profiles.clear()
        else:
            self._profiles.pop(key, None)
